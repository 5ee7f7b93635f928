import Foundation
import Logging
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import Hummingbird
import ParsleyHTTP
import ParsleyStorage
import SQLiteNIO
import Synchronization

struct BenchArguments {
    var seconds = 10
    var objects = 100_000
    var port = 18_337
    var baselineOps = 20_000
    var databaseURI: String?
    /// `--security`: only the security scenarios (and the indexed query they are compared with).
    var securityOnly = false
    /// `--hold`: once the signed-in scenario is populated, print its session token and keep serving (no measuring);
    /// with `--journal`, the journal server (on PostgreSQL when `--database-uri` is given).
    var hold = false
    /// `--change-events`: the server publishes change events and a subscriber in the process takes every one (what
    /// LiveQuery and cloud code's after-triggers cost).
    var changeEvents = false
    /// `--livequery`: WebSocket clients (`--connections`, default 10,000) and writes per second (`--rate`, default 1,000).
    var connections = 10_000
    var rate = 1_000
    /// `--include` (with `--livequery`): every subscription includes the written object's `owner` pointer.
    var include = false
    /// `--growth`: the largest class size on SQLite and on PostgreSQL, and where the plot goes.
    var maxObjects = 10_000_000
    var pgMaxObjects = 10_000_000
    var plot = "docs/growth.png"

    init(_ args: [String]) {
        var i = 1
        while i < args.count {
            let value = i + 1 < args.count ? Int(args[i + 1]) : nil
            switch args[i] {
            case "--database-uri": databaseURI = i + 1 < args.count ? args[i + 1] : nil
            case "--seconds": seconds = value ?? seconds
            case "--objects": objects = value ?? objects
            case "--port": port = value ?? port
            case "--connections": connections = value ?? connections
            case "--rate": rate = value ?? rate
            case "--baseline-ops": baselineOps = value ?? baselineOps
            case "--max-objects": maxObjects = value ?? maxObjects
            case "--pg-max-objects": pgMaxObjects = value ?? pgMaxObjects
            case "--plot": plot = i + 1 < args.count ? args[i + 1] : plot
            case "--security":
                securityOnly = true
                i += 1
                continue
            case "--hold":
                hold = true
                i += 1
                continue
            case "--change-events":
                changeEvents = true
                i += 1
                continue
            case "--include":
                include = true
                i += 1
                continue
            case "--cloud", "--files", "--push", "--livequery", "--aggregate", "--edge", "--journal", "--growth":
                i += 1
                continue
            default: break
            }
            i += 2
        }
    }
}

/// One measured figure.
struct Measure {
    var requestsPerSecond: Double
    var p50: Double  // seconds
    var p99: Double
    /// wrk's lines on non-2xx answers and socket errors, if any.
    var errors = ""
}

struct Row {
    var name: String
    var result: Measure
    var baseline: Measure

    static func printTable(_ rows: [Row]) {
        print("| scenario | req/s | p50 ms | p99 ms | baseline ops/s | ratio to baseline |")
        print("|---|---:|---:|---:|---:|---:|")
        for r in rows {
            print(
                "| \(r.name) | \(fmt(r.result.requestsPerSecond)) | \(ms(r.result.p50)) | \(ms(r.result.p99)) | "
                    + "\(fmt(r.baseline.requestsPerSecond)) | \(String(format: "%.2f", r.result.requestsPerSecond / r.baseline.requestsPerSecond)) |"
            )
        }
    }
}

func fmt(_ v: Double) -> String { String(format: "%.0f", v) }
func ms(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }

enum PeakMemory {
    static func megabytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kb / 1024
        }
        return -1
    }
}

/// wrk as the load generator: keep-alive, 2 threads, 64 connections.
struct Wrk {
    let path: String

    static func locate() -> Wrk? {
        for p in ["/usr/bin/wrk", "/usr/local/bin/wrk"] where FileManager.default.isExecutableFile(atPath: p) { return Wrk(path: p) }
        return nil
    }

    func run(name: String, url: String, seconds: Int, script: String, directory: URL, connections: Int = 64, threads: Int = 2, quiet: Bool = false)
        throws -> Measure
    {
        let scriptURL = directory.appendingPathComponent("\(name).lua")
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency", "-s", scriptURL.path, url]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        var measure = Self.parse(output)
        let errors = output.split(separator: "\n").filter { $0.contains("Non-2xx") || $0.contains("Socket errors") }
        measure.errors = errors.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "; ")
        if !quiet {
            print(
                "  \(name): \(fmt(measure.requestsPerSecond)) req/s, p50 \(ms(measure.p50)) ms, p99 \(ms(measure.p99)) ms "
                    + "\(errors.joined(separator: "; "))"
            )
        }
        return measure
    }

    static func parse(_ output: String) -> Measure {
        var rps = 0.0, p50 = 0.0, p99 = 0.0
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if line.hasPrefix("Requests/sec:"), parts.count >= 2 { rps = Double(parts[1]) ?? 0 }
            if parts.count == 2, parts[0] == "50%" { p50 = seconds(parts[1]) }
            if parts.count == 2, parts[0] == "99%" { p99 = seconds(parts[1]) }
        }
        return Measure(requestsPerSecond: rps, p50: p50, p99: p99)
    }

    static func seconds(_ text: Substring) -> Double {
        for (suffix, factor) in [("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("m", 60.0)] where text.hasSuffix(suffix) {
            return (Double(text.dropLast(suffix.count)) ?? 0) * factor
        }
        return 0
    }
}

enum WrkScript {
    static func headerLines(_ headers: [String: String]) -> String {
        headers.sorted { $0.key < $1.key }.map { "wrk.headers[\"\($0.key)\"] = \"\($0.value)\"" }.joined(separator: "\n")
    }

    static func luaString(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func fixed(method: String, path: String, headers: [String: String], body: String?) -> String {
        """
        wrk.method = "\(method)"
        wrk.path = \(luaString(path))
        \(headerLines(headers))
        \(body.map { "wrk.body = \(luaString($0))" } ?? "")
        """
    }

    static func randomId(method: String, prefix: String, ids: [String], headers: [String: String], body: String?) -> String {
        """
        \(headerLines(headers))
        local ids = {\(ids.map { "\"\($0)\"" }.joined(separator: ","))}
        local body = \(body.map(luaString) ?? "nil")
        request = function()
          return wrk.format("\(method)", "\(prefix)" .. ids[math.random(#ids)], nil, body)
        end
        """
    }
}

enum BenchData {
    /// A ~300-byte object.
    static func payload(seed: Int) -> String {
        let text = String(repeating: "How are you today? ", count: 8)
        return
            #"{"title":"entry \#(seed)","mood":"happy","score":\#(seed % 1000),"counter":0,"tags":["journal","daily"],"private":false,"#
            + #""text":"\#(text)"}"#
    }

    static func sampleIds(_ api: ParseAPI, className: String, count: Int) async throws -> [String] {
        var options = FindOptions()
        options.limit = count
        options.keys = ["objectId"]
        return try await api.queries.find(className, options, auth: .master).results.compactMap { $0["objectId"]?.stringValue }
    }

    /// `count` objects with 100 categories and random scores, created 64 at a time through the object service;
    /// `extra` adds fields (an ACL, say) to object `i`.
    static func populate(
        _ api: ParseAPI, className: String, count: Int, what: String = "",
        extra: @escaping @Sendable (Int) -> [String: JSONValue] = { _ in ["tags": ["a", "b"]] }
    ) async throws {
        let start = Date()
        var next = 0
        while next < count {
            let chunk = min(64, count - next)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in next..<(next + chunk) {
                    group.addTask {
                        var body: [String: JSONValue] = [
                            "category": .string("c\(i % 100)"), "score": .int(Int64((i * 7919) % 100_003)), "title": .string("item \(i)"),
                        ]
                        body.merge(extra(i)) { $1 }
                        _ = try await api.objects.create(className, CreateObject(body), auth: .master)
                    }
                }
                try await group.waitForAll()
            }
            next += chunk
        }
        print("  populated \(count) \(className) objects\(what) in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    }

    /// The query every scenario measures: one category, highest scores first, a page of 20.
    static func queryPath(_ className: String) -> String {
        "/parse/classes/\(className)?where=" + urlEncode(#"{"category":"c17"}"#) + "&order=-score&limit=20"
    }

    /// The index that serves `queryPath`, added through the schema API.
    static func addIndex(_ api: ParseAPI, className: String, base: String) async throws {
        _ = try await api.handle(
            ParseRequest(
                method: .put, path: ["schemas", className], body: ["indexes": ["category_score": ["category": 1, "score": -1]]], auth: .master,
                mountURL: base + "/parse"))
    }

    static func urlEncode(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s
    }
}

/// The baseline: the same SQLite settings through sqlite-nio directly, no HTTP, no Parse.
enum RawSQLiteBaseline {
    static func run(directory: URL, inserts: Int, logger: Logger) async throws -> (insert: Measure, read: Measure) {
        let path = directory.appendingPathComponent("raw.sqlite").path
        let pool = NIOThreadPool(numberOfThreads: 5)
        pool.start()
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let writer = try await openTable(path: path, pool: pool, logger: logger)
        let payload = BenchData.payload(seed: 1)
        var insertLatencies: [Double] = []
        insertLatencies.reserveCapacity(inserts)
        let insertStart = Date()
        for i in 0..<inserts {
            let t = Date()
            _ = try await writer.query(
                #"INSERT INTO t ("objectId","createdAt","updatedAt","data") VALUES (?,?,?,?)"#,
                [.text(String(format: "id%08d", i)), .text("2026-01-01T00:00:00.000Z"), .text("2026-01-01T00:00:00.000Z"), .text(payload)])
            insertLatencies.append(Date().timeIntervalSince(t))
        }
        let insertSeconds = Date().timeIntervalSince(insertStart)
        var readers: [SQLiteConnection] = []
        for _ in 0..<4 { readers.append(try await SQLiteConnection.open(storage: .file(path: path), threadPool: pool, logger: logger, on: loop)) }
        let readStart = Date()
        let perReader = inserts / 4
        let readLatencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for r in readers {
                group.addTask {
                    var lat: [Double] = []
                    for i in 0..<perReader {
                        let t = Date()
                        _ = try await r.query(#"SELECT * FROM t WHERE "objectId" = ?"#, [.text(String(format: "id%08d", (i * 7919) % inserts))])
                        lat.append(Date().timeIntervalSince(t))
                    }
                    return lat
                }
            }
            var all: [Double] = []
            for try await l in group { all += l }
            return all
        }
        let readSeconds = Date().timeIntervalSince(readStart)
        for r in readers { try await r.close() }
        try await writer.close()
        try await pool.shutdownGracefully()
        let insert = Measure(
            requestsPerSecond: Double(inserts) / insertSeconds, p50: percentile(insertLatencies, 0.5), p99: percentile(insertLatencies, 0.99))
        let read = Measure(
            requestsPerSecond: Double(readLatencies.count) / readSeconds, p50: percentile(readLatencies, 0.5), p99: percentile(readLatencies, 0.99))
        print("  raw sqlite-nio: \(fmt(insert.requestsPerSecond)) inserts/s, \(fmt(read.requestsPerSecond)) point reads/s")
        return (insert, read)
    }

    /// A new database at `path` with Parsley's settings (WAL, synchronous=FULL) and the table `t` every baseline
    /// uses (`objectId` primary key, the two dates, the object as JSON text); its writer connection.
    static func openTable(path: String, pool: NIOThreadPool, logger: Logger) async throws -> SQLiteConnection {
        let writer = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: pool, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any())
        _ = try await writer.query("PRAGMA journal_mode=WAL")
        _ = try await writer.query("PRAGMA synchronous=FULL")
        _ = try await writer.query(#"CREATE TABLE t ("objectId" TEXT PRIMARY KEY, "createdAt" TEXT, "updatedAt" TEXT, "data" TEXT)"#)
        return writer
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}

/// The scenarios every backend runs first: create (POST one ~300-byte object), then get by id and update with
/// `Increment` over 2,000 of the ids created.
enum CoreScenarios {
    struct Result {
        var rows: [Row]
        var get: Measure
        var ids: [String]
    }

    static func run(
        api: ParseAPI, wrk: Wrk, base: String, headers: [String: String], seconds: Int, work: URL, insert: Measure, read: Measure
    ) async throws -> Result {
        let payload = BenchData.payload(seed: 0)
        let create = try wrk.run(
            name: "create", url: base, seconds: seconds,
            script: WrkScript.fixed(method: "POST", path: "/parse/classes/Bench", headers: headers, body: payload), directory: work)
        let ids = try await BenchData.sampleIds(api, className: "Bench", count: 2000)
        let get = try wrk.run(
            name: "get", url: base, seconds: seconds,
            script: WrkScript.randomId(method: "GET", prefix: "/parse/classes/Bench/", ids: ids, headers: headers, body: nil), directory: work)
        let update = try wrk.run(
            name: "update", url: base, seconds: seconds,
            script: WrkScript.randomId(
                method: "PUT", prefix: "/parse/classes/Bench/", ids: ids, headers: headers, body: #"{"counter":{"__op":"Increment","amount":1}}"#),
            directory: work)
        return Result(
            rows: [
                Row(name: "create (POST ~\(payload.utf8.count) B)", result: create, baseline: insert),
                Row(name: "get by id", result: get, baseline: read),
                Row(name: "update (Increment)", result: update, baseline: insert),
            ], get: get, ids: ids)
    }
}

/// Parsley in this process on `database`, listening on 127.0.0.1:`port`.
struct BenchServer {
    static let options = ParseServerOptions(applicationId: "bench", masterKey: "bench-master-key", maxBatchSize: 10_000)
    static let headers = ["X-Parse-Application-Id": "bench", "X-Parse-Master-Key": "bench-master-key", "Content-Type": "application/json"]
    let api: ParseAPI
    let base: String

    /// Change events a subscriber took (with `--change-events`), and gaps it was told of.
    final class EventCount: Sendable {
        let events = Atomic<Int>(0)
        let gaps = Atomic<Int>(0)
    }

    /// Runs the database and the server beside `body`; both stop (and the database closes) when it returns. With
    /// `changeEvents`, a subscriber takes every change event meanwhile; its count is printed at the end.
    static func with<T>(
        database: any SQLDatabase, port: Int, logger: Logger, changeEvents: Bool = false, cloud: CloudCode = CloudCode(),
        _ body: (BenchServer) async throws -> T
    ) async throws -> T {
        try await database.serving {
            var options = Self.options
            options.changeEvents = changeEvents
            let api = ParseAPI(services: try await ParseServices.open(options: options, database: database, cloud: cloud, adapters: .standard))
            let app = ParsleyApplication.application(api: api, host: "127.0.0.1", port: port, logger: logger)
            let count = EventCount()
            let stream = api.changes.subscribe()
            let result = try await withBackground({ try await app.runService() }) {
                try await withBackground({
                    guard changeEvents else { return }
                    for await item in stream {
                        if case .event = item { count.events.add(1, ordering: .relaxed) } else { count.gaps.add(1, ordering: .relaxed) }
                    }
                }) {
                    try await Task.sleep(for: .milliseconds(500))
                    return try await body(BenchServer(api: api, base: "http://127.0.0.1:\(port)"))
                }
            }
            if changeEvents {
                print(
                    "change events: \(count.events.load(ordering: .relaxed)) taken by the subscriber, "
                        + "\(count.gaps.load(ordering: .relaxed)) gaps, \(api.changes.dropped) dropped")
            }
            return result
        }
    }
}

/// Runs `body` while `background` runs in a child task, cancelled when `body` returns.
func withBackground<T>(_ background: @escaping @Sendable () async throws -> Void, _ body: () async throws -> T) async throws -> T {
    let outcome: Swift.Result<T, any Error> = await withTaskGroup(of: Void.self) { group in
        group.addTask { try? await background() }
        let outcome: Swift.Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        group.cancelAll()
        return outcome
    }
    return try outcome.get()
}

/// The outcome of an async throwing call, so cleanup that awaits can follow it (not inside a `catch`).
func attempt<T>(_ body: () async throws -> T) async -> Swift.Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
