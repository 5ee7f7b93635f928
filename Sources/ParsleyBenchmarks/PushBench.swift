import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ParsleyDomain
import ParsleyCore
import ParsleyPush
import ParsleyPushFakes

/// `--push`: notifications per second from the `parsley` executable (started as the README starts it, with logs on,
/// `PARSE_SERVER_PUSH` pointing at a fake APNs over HTTP/2 + TLS and a fake FCM in this process) to installations
/// half iOS, half Android, and the server's peak memory during each push, for a fifth of `--objects` (default 100,000) and all of them.
/// Baseline in the same run: the APNs provider alone sending the same number of messages from this process.
enum PushBench {
    static func run(work: URL, arguments: BenchArguments, logger: Logger) async throws {
        // `--objects N` (default 100,000): pushes to N/5, then N installations.
        let sizes = [arguments.objects / 5, arguments.objects]
        print("Parsley push benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores, installations half ios, half android")
        let key = PushTestKeys.apnsKey()
        let keyFile = try PushTestKeys.temporaryFile(key.pem, suffix: ".p8")
        try await FakeAPNs.with(key: key) { apns in
            try await FakeFCM.with { fcm in
                let account = try PushTestKeys.serviceAccount.writeKeyFile(tokenURI: fcm.tokenURI)
                let push: JSONValue = [
                    "ios": [
                        "token": ["key": .string(keyFile), "keyId": .string(key.keyId), "teamId": .string(key.teamId)], "topic": "com.example.bench",
                        "host": .string(apns.url), "caFile": .string(apns.certificateFile),
                    ],
                    "android": ["firebaseServiceAccount": .string(account), "endpoint": .string(fcm.url)],
                ]
                let baseline = try await providerBaseline(apns: apns, key: key, count: sizes.max() ?? 100_000)
                print("  baseline: \(Int(baseline)) messages/s")
                let server = try ServerProcess(work: work, port: arguments.port, push: push)
                defer { server.stop() }
                try await server.waitUntilHealthy()
                var rows: [(String, Double, Int)] = []
                var populated = 0
                for size in sizes {
                    try await populate(server, from: populated, to: size)
                    populated = size
                    let (before, apnsBefore, fcmBefore) = (server.peakKilobytes(reset: true), apns.requests.count, fcm.messages.count)
                    let started = ContinuousClock.now
                    let id = try await server.push()
                    try await server.waitSucceeded(id)
                    let seconds = (ContinuousClock.now - started) / .seconds(1)
                    let delivered = apns.requests.count - apnsBefore + fcm.messages.count - fcmBefore
                    rows.append(("push to \(size) installations", Double(delivered) / seconds, server.peakKilobytes(reset: false)))
                    print("  \(size): \(delivered) delivered in \(String(format: "%.1f", seconds)) s; server resident before \(before / 1024) MiB")
                }
                print("")
                print("| workload | notifications/s | server peak memory during the push |")
                print("|---|---|---|")
                print("| baseline: APNs provider alone, in-process, \(sizes.max() ?? 0) messages | \(Int(baseline)) | – |")
                for (name, rate, peak) in rows { print("| \(name) | \(Int(rate)) | \(peak / 1024) MiB |") }
            }
        }
        try? FileManager.default.removeItem(atPath: keyFile)
    }

    /// The provider's own speed against the fake: what the server's push queue can at best reach.
    static func providerBaseline(apns: FakeAPNs, key: PushTestKeys.APNsKey, count: Int) async throws -> Double {
        let provider = try APNsProvider(configurations: [
            APNsConfiguration(
                privateKeyPEM: key.pem, keyId: key.keyId, teamId: key.teamId, topic: "com.example.bench", host: apns.url, caFile: apns.certificateFile
            )
        ])
        let started = ContinuousClock.now
        print("  baseline: \(count) messages from the APNs provider")
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<count {
                if i >= 128 { await group.next() }
                group.addTask {
                    _ = await provider.send(
                        PushMessage(
                            deviceToken: token(i), deviceType: "ios", appIdentifier: "com.example.bench", data: ["alert": "baseline"],
                            pushId: "bench",
                            pushTime: .now))
                }
            }
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        try await provider.shutdown()
        return Double(count) / seconds
    }

    static func token(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    /// Installations `from..<to` through `/batch` (50 a request, 8 requests at once).
    static func populate(_ server: ServerProcess, from: Int, to: Int) async throws {
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            var inFlight = 0
            for start in stride(from: from, to: to, by: 50) {
                if inFlight >= 8 {
                    try await group.next()
                    inFlight -= 1
                }
                inFlight += 1
                group.addTask {
                    let requests: [JSONValue] = (start..<min(start + 50, to)).map { i in
                        let ios = i % 2 == 0
                        return [
                            "method": "POST", "path": "/parse/installations",
                            "body": [
                                "installationId": .string("bench-\(i)"), "deviceType": ios ? "ios" : "android",
                                "deviceToken": .string(ios ? token(i) : "fcm-\(i)"), "channels": ["all"], "appIdentifier": "com.example.bench",
                            ],
                        ]
                    }
                    _ = try await server.call("POST", "/batch", JSONValue.object(["requests": JSONValue.array(requests)]))
                }
            }
            try await group.waitForAll()
        }
        print("  populated \(to - from) installations in \(String(format: "%.1f", (ContinuousClock.now - started) / .seconds(1))) s")
    }
}

/// The `parsley` executable beside this one, on a fresh data folder, as the README starts it (logs on).
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    static let masterKey = "push-bench-master-key"

    convenience init(work: URL, port: Int, push: JSONValue) throws {
        try self.init(work: work, port: port, environment: ["PARSE_SERVER_PUSH": JSONWriter.string(push)])
    }

    /// The `parsley` executable beside this one, on a fresh data folder, with default settings plus `environment`.
    /// `standardOutput`: a file for its log (else discarded).
    init(work: URL, port: Int, environment: [String: String], standardOutput: URL? = nil) throws {
        self.port = port
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parsley")
        process.executableURL = binary
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARSE_SERVER_") }
        env["PARSLEY_DATA_DIR"] = work.appendingPathComponent("server-data-\(port)").path
        env["PORT"] = String(port)
        env["PARSE_SERVER_HOST"] = "127.0.0.1"
        env["PARSE_SERVER_APPLICATION_ID"] = "bench-app"
        env["PARSE_SERVER_MASTER_KEY"] = Self.masterKey
        for (k, v) in environment { env[k] = v }
        process.environment = env
        if let standardOutput {
            _ = FileManager.default.createFile(atPath: standardOutput.path, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: standardOutput)
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        try process.run()
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// CPU time the server has used so far (user and system), in seconds.
    func cpuSeconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return 0 }
        // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th, stime the 15th.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// `VmRSS` of the server (its resident memory now).
    func residentKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        }
        return 0
    }

    /// `VmHWM` of the server (its peak resident memory), optionally restarting the peak from now.
    func peakKilobytes(reset: Bool) -> Int {
        let pid = process.processIdentifier
        let value: Int = {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
            for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
                return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            }
            return 0
        }()
        if reset { try? "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8) }
        return value
    }

    /// A REST call with the master key (or, with `master: false`, none; with `token`, that session's).
    func call(
        _ method: String, _ path: String, _ body: JSONValue? = nil, master: Bool = true, token: String? = nil,
        keyOrders: JSONKeyOrders = JSONKeyOrders()
    ) async throws -> (JSONValue, HTTPHeaders) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/parse\(path)")
        request.method = .init(rawValue: method)
        request.headers.add(name: "X-Parse-Application-Id", value: "bench-app")
        if let token {
            request.headers.add(name: "X-Parse-Session-Token", value: token)
        } else if master {
            request.headers.add(name: "X-Parse-Master-Key", value: Self.masterKey)
        }
        request.headers.add(name: "Content-Type", value: "application/json")
        if let body { request.body = .bytes(ByteBuffer(string: JSONWriter.string(body, keyOrders: keyOrders))) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        let json = (try? bytes.withUnsafeReadableBytes { try JSONParser.parse($0) }) ?? .null
        guard response.status.code < 300 else { throw BenchFailure("\(method) \(path): \(response.status.code) \(JSONWriter.string(json))") }
        return (json, response.headers)
    }

    func waitUntilHealthy() async throws {
        for _ in 0..<400 {
            if (try? await call("GET", "/health")) != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchFailure("parsley did not start")
    }

    func push() async throws -> String {
        let (_, headers) = try await call("POST", "/push", ["channels": ["all"], "data": ["alert": "Benchmark", "badge": 1]])
        guard let id = headers.first(name: "X-Parse-Push-Status-Id") else { throw BenchFailure("no push status id") }
        return id
    }

    func waitSucceeded(_ id: String) async throws {
        while true {
            let (row, _) = try await call("GET", "/classes/_PushStatus/\(id)")
            if row["status"] == "succeeded" { return }
            if row["status"] == "failed" { throw BenchFailure("push failed: \(JSONWriter.string(row))") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
