import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOPosix
import ParsleyCore
import Synchronization

/// `--livequery`: the `parsley` executable started as the README starts it (logs on) with LiveQuery on for `Score`,
/// `--connections` WebSocket clients (default 10,000) in this process, each with one subscription (mixed queries:
/// 70% `room == r<k>`, 20% `room == r<k>` and `points > x`, 10% a range on `points` alone, which no index serves),
/// then `--rate` writes per second (default 1,000) for `--seconds`. Reports the server's memory per idle connection,
/// events delivered per second, and the delay from commit (the object's `updatedAt`) to delivery, p50 and p99.
/// Baselines in the same run: the server's memory per idle plain HTTP keep-alive connection (on a server of their
/// own), and the same writes to a class that is not live.
/// `--include`: each write also points to one of 100 `Owner` objects and every subscription includes `owner`, so
/// each event carries the owner read for it (one read per event and view, shared by its subscribers).
enum LiveQueryBench {
    static let rooms = 1_000

    static func run(work: URL, arguments: BenchArguments, logger: Logger) async throws {
        raiseFileLimit()
        let connections = arguments.connections
        let environment = ["PARSE_SERVER_LIVE_QUERY": #"{"classNames":["Score"]}"#, "PARSE_SERVER_APPLICATION_ID": "bench-app"]
        print(
            "Parsley LiveQuery benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores (server and clients share them), \(connections) "
                + "connections, \(arguments.rate) writes/s for \(arguments.seconds) s\(arguments.include ? ", include owner" : "")"
        )
        // Baseline: as many plain HTTP keep-alive connections, idle after one request, on a server of their own
        // (what the HTTP server itself keeps per connection).
        let (before, httpKB) = try await {
            let plain = try ServerProcess(work: work, port: arguments.port + 1, environment: environment)
            defer { plain.stop() }
            try await plain.waitUntilHealthy()
            let before = plain.residentKilobytes()
            let http = try await KeepAliveConnections.open(connections, port: arguments.port + 1)
            try await Task.sleep(for: .seconds(2))
            let with = plain.residentKilobytes()
            try await http.close()
            return (before, with)
        }()
        print(
            "  baseline: \(connections) idle HTTP keep-alive connections: server resident \(before / 1024) MiB before, \(httpKB / 1024) MiB with them"
        )
        let server = try ServerProcess(work: work, port: arguments.port, environment: environment)
        defer { server.stop() }
        try await server.waitUntilHealthy()
        _ = try await server.call("POST", "/classes/Score", ["room": "r0", "points": 0])
        var owners: [JSONValue] = []
        if arguments.include {
            for i in 0..<100 {
                let (made, _) = try await server.call("POST", "/classes/Owner", ["name": .string("owner \(i)"), "level": .int(Int64(i))])
                owners.append(["__type": "Pointer", "className": "Owner", "objectId": made["objectId"] ?? .null])
            }
        }
        let idle = server.residentKilobytes()
        let stats = ClientStats()
        var channels: [any Channel] = []
        do {
            // Connect and subscribe everyone (200 handshakes at a time).
            let started = ContinuousClock.now
            for i in 0..<connections {
                while stats.subscribed.load(ordering: .relaxed) < i - 200 { try await Task.sleep(for: .milliseconds(2)) }
                let sends = messages(i, include: arguments.include)
                channels.append(try await LiveQueryBenchClient.open(port: arguments.port, messages: sends, stats: stats))
            }
            while stats.subscribed.load(ordering: .relaxed) < connections { try await Task.sleep(for: .milliseconds(20)) }
            let connectSeconds = (ContinuousClock.now - started) / .seconds(1)
            try await Task.sleep(for: .seconds(2))
            let connectedKB = server.residentKilobytes()
            print(
                "  \(connections) connected and subscribed in \(String(format: "%.1f", connectSeconds)) s; server resident \(idle / 1024) MiB "
                    + "before, \(connectedKB / 1024) MiB after"
            )

            // Baseline: the same writes to a class nobody can subscribe to.
            var cpu = CPUWatch(server)
            let baseline = try await write(server, className: "Other", rate: arguments.rate, seconds: arguments.seconds, owners: owners)
            let baselineCPU = cpu.lap()
            print("  baseline writes (class not live): p50 \(ms(baseline.p50)) ms, p99 \(ms(baseline.p99)) ms")
            stats.reset()
            let measured = ContinuousClock.now
            // The live writes, and beside them a tenth as many to the class that is not live: what the events of one
            // class cost the writes to another.
            let pointers = owners
            async let beside = write(server, className: "Other", rate: max(1, arguments.rate / 10), seconds: arguments.seconds, owners: pointers)
            let acks = AckLog()
            let writes = try await write(server, className: "Score", rate: arguments.rate, seconds: arguments.seconds, owners: owners, acks: acks)
            let other = try await beside
            let liveCPU = cpu.lap()
            // Let the last events arrive.
            try await Task.sleep(for: .seconds(2))
            let seconds = (ContinuousClock.now - measured) / .seconds(1) - 2
            let (delivered, delays) = stats.snapshot()
            let afterAnswer = stats.delaysAfterAnswer(acks)
            let peak = server.peakKilobytes(reset: false)
            print("")
            print("| figure | value |")
            print("|---|---|")
            print("| connections, each with one subscription | \(connections) |")
            print(
                "| server memory per idle connection (with its subscription) | "
                    + "\(String(format: "%.1f", Double(connectedKB - idle) / Double(connections))) KB |"
            )
            print(
                "| baseline: server memory per idle HTTP keep-alive connection | "
                    + "\(String(format: "%.1f", Double(httpKB - before) / Double(connections))) KB |"
            )
            print("| writes/s asked, done | \(arguments.rate), \(Int(Double(writes.count) / Double(arguments.seconds))) |")
            print("| events delivered/s | \(Int(Double(delivered) / seconds)) |")
            print("| commit to delivery, p50 / p99 | \(ms(percentile(delays, 0.5))) ms / \(ms(percentile(delays, 0.99))) ms |")
            print(
                "| the write's answer to delivery (0 when the event came first), p50 / p99 | \(ms(percentile(afterAnswer, 0.5))) ms / "
                    + "\(ms(percentile(afterAnswer, 0.99))) ms |")
            print(
                "| write latency p50 / p99, live class (baseline: class not live) | \(ms(writes.p50)) / \(ms(writes.p99)) ms (\(ms(baseline.p50)) "
                    + "/ \(ms(baseline.p99)) ms) |"
            )
            print(
                "| writes to the class not live, beside the live writes (\(max(1, arguments.rate / 10))/s), p50 / p99 | \(ms(other.p50)) / "
                    + "\(ms(other.p99)) ms |")
            print(
                "| CPU, cores busy: server / clients (this process), during the live writes (baseline writes) | "
                    + "\(liveCPU.server) / \(liveCPU.clients) (\(baselineCPU.server) / \(baselineCPU.clients)) |")
            print("| server peak resident memory | \(peak / 1024) MiB |")
        }
        for channel in channels { try? await channel.close().get() }
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1000) }

    static func percentile(_ values: [Double], _ p: Double) -> Double { RawSQLiteBaseline.percentile(values, p) }

    /// The subscription of client `i`.
    static func query(_ i: Int) -> JSONValue {
        let room = JSONValue.string("r\(i % rooms)")
        switch i % 10 {
        case 0: return ["points": ["$gte": .int(Int64(990 + i % 10))]]
        case 1, 2: return ["room": room, "points": ["$gt": 50]]
        default: return ["room": room]
        }
    }

    /// What client `index` sends once upgraded: `connect`, then its subscription.
    static func messages(_ index: Int, include: Bool) -> [String] {
        var q: [String: JSONValue] = ["className": "Score", "where": query(index)]
        if include { q["include"] = ["owner"] }
        let m: JSONValue = ["op": "subscribe", "requestId": 1, "query": .object(q)]
        return [#"{"op":"connect","applicationId":"bench-app"}"#, JSONWriter.string(m)]
    }

    /// `rate` creates per second for `seconds`, from 16 writers (each object pointing to one of `owners`, if any);
    /// the latencies of the writes.
    static func write(_ server: ServerProcess, className: String, rate: Int, seconds: Int, owners: [JSONValue], acks: AckLog? = nil) async throws -> (
        count: Int, p50: Double, p99: Double
    ) {
        let total = rate * seconds
        let start = ContinuousClock.now
        let latencies = LatencyLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<16 {
                group.addTask {
                    // The same writes in every run (the events a run delivers depend on them: a write with points >= 990
                    // goes to a thousand range subscriptions).
                    var random = SplitMix64(seed: UInt64(w + 1))
                    var n = w
                    while n < total {
                        // Paced: write n is due at n / rate seconds.
                        let due = start + .milliseconds(n * 1000 / rate)
                        if due > .now { try await Task.sleep(until: due) }
                        var body: [String: JSONValue] = [
                            "room": .string("r\(Int.random(in: 0..<rooms, using: &random))"),
                            "points": .int(Int64.random(in: 0...1000, using: &random)),
                        ]
                        if let owner = owners.randomElement(using: &random) { body["owner"] = owner }
                        let t = ContinuousClock.now
                        let (made, _) = try await server.call("POST", "/classes/\(className)", .object(body))
                        let elapsed = (ContinuousClock.now - t) / .seconds(1)
                        if let acks, let id = made["objectId"]?.stringValue { acks.add(id) }
                        latencies.add(elapsed)
                        n += 16
                    }
                }
            }
            try await group.waitForAll()
        }
        let all = latencies.all
        return (all.count, percentile(all, 0.5), percentile(all, 0.99))
    }

    /// The soft limit of open files up to the hard one (10,000 sockets here and as many in the server, which inherits it).
    static func raiseFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// What the clients saw: connections, subscriptions, events and their delays.
final class ClientStats: Sendable {
    let connected = Atomic<Int>(0)
    let subscribed = Atomic<Int>(0)
    private let events = Mutex<(count: Int, delays: [Double], reads: [(id: String, at: Double)])>((0, [], []))

    /// One text frame: `connected`, `subscribed`, or an event whose delay is taken from its own `updatedAt` (the last
    /// one: keys are written in order, so an included `owner` comes first).
    func record(bytes: ByteBufferView) {
        let frame = Array(bytes)
        // (Answers are written with sorted keys, `clientId` first; events with `op` first.)
        if Self.lastIndex(of: Self.connected, in: frame) != nil {
            connected.add(1, ordering: .relaxed)
        } else if Self.lastIndex(of: Self.subscribed, in: frame) != nil {
            subscribed.add(1, ordering: .relaxed)
        } else if let at = Self.lastIndex(of: Self.updatedAt, in: frame), frame.count >= at + Self.updatedAt.count + 24 {
            let start = at + Self.updatedAt.count
            let now = Date().timeIntervalSince1970
            guard let date = ParseDate(iso: String(decoding: frame[start..<start + 24], as: UTF8.self)) else { return }
            let delay = now - Double(date.milliseconds) / 1000
            // The object's own id comes first (keys are sorted: `objectId` before an included `owner`).
            let id = Self.firstIndex(of: Self.objectId, in: frame).flatMap { at -> String? in
                let start = at + Self.objectId.count
                guard let end = frame[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return String(decoding: frame[start..<end], as: UTF8.self)
            }
            events.withLock {
                $0.count += 1
                $0.delays.append(delay)
                if let id { $0.reads.append((id, now)) }
            }
        }
    }

    static let connected = Array(#""op":"connected""#.utf8)
    static let subscribed = Array(#""op":"subscribed""#.utf8)
    static let updatedAt = Array(#""updatedAt":""#.utf8)
    static let objectId = Array(#""objectId":""#.utf8)

    static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...bytes.count - needle.count).first { bytes[$0] == needle[0] && bytes[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    /// For each event of a write whose answer came back: how long after the answer the event was read (0 when it came
    /// first). This leaves out the write's own time, which the delay from `updatedAt` (stamped before the commit)
    /// includes.
    func delaysAfterAnswer(_ acks: AckLog) -> [Double] {
        let answered = acks.all
        return events.withLock { e in e.reads.compactMap { read in answered[read.id].map { max(0, read.at - $0) } } }
    }

    static func lastIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        var i = bytes.count - needle.count
        while i >= 0 {
            if bytes[i] == needle[0], bytes[i..<i + needle.count].elementsEqual(needle) { return i }
            i -= 1
        }
        return nil
    }

    func reset() { events.withLock { $0 = (0, [], []) } }
    func snapshot() -> (Int, [Double]) { events.withLock { ($0.count, $0.delays) } }
}

/// When each write's answer came back (seconds since 1970), by the objectId it made.
final class AckLog: Sendable {
    private let answered = Mutex<[String: Double]>([:])
    func add(_ id: String) { answered.withLock { $0[id] = Date().timeIntervalSince1970 } }
    var all: [String: Double] { answered.withLock { $0 } }
}

/// Latencies added from many tasks.
final class LatencyLog: Sendable {
    private let values = Mutex<[Double]>([])
    func add(_ v: Double) { values.withLock { $0.append(v) } }
    var all: [Double] { values.withLock { $0 } }
}

/// Plain TCP connections that each sent one `GET /parse/health` (keep-alive) and then stay open, idle.
struct KeepAliveConnections {
    let channels: [any Channel]

    final class Counter: Sendable {
        let answered = Atomic<Int>(0)
    }

    final class FirstAnswer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let counter: Counter
        init(_ counter: Counter) { self.counter = counter }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { counter.answered.add(1, ordering: .relaxed) }
    }

    static func open(_ n: Int, port: Int) async throws -> KeepAliveConnections {
        let counter = Counter()
        var channels: [any Channel] = []
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(FirstAnswer(counter)) }
        }
        for i in 0..<n {
            let channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
            try await channel.writeAndFlush(ByteBuffer(string: "GET /parse/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")).get()
            channels.append(channel)
            if i % 200 == 199 { while counter.answered.load(ordering: .relaxed) < i - 200 { try await Task.sleep(for: .milliseconds(2)) } }
        }
        while counter.answered.load(ordering: .relaxed) < n { try await Task.sleep(for: .milliseconds(20)) }
        return KeepAliveConnections(channels: channels)
    }

    func close() async throws {
        for c in channels { try? await c.close().get() }
    }
}

/// Cores busy, on average since the last lap, in the server process and in this one (the clients).
struct CPUWatch {
    let server: ServerProcess
    var last: (server: Double, clients: Double, at: ContinuousClock.Instant)

    init(_ server: ServerProcess) {
        self.server = server
        last = (server.cpuSeconds(), Self.ownCPUSeconds(), .now)
    }

    mutating func lap() -> (server: String, clients: String) {
        let now = (server.cpuSeconds(), Self.ownCPUSeconds(), ContinuousClock.now)
        let wall = (now.2 - last.at) / .seconds(1)
        defer { last = now }
        return (String(format: "%.2f", (now.0 - last.server) / wall), String(format: "%.2f", (now.1 - last.clients) / wall))
    }

    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let seconds = { (t: timeval) in Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
