import Foundation
import Logging
import ParsleyCore

/// `--edge`: what every request pays, with Parsley started as the README starts it (the `parsley` executable,
/// default settings: access log at `info` on standard output, here into a file as a container's log driver takes
/// it). Against, in the same run: the bare Hummingbird + sqlite-nio server (`BareServer`), and the same Parsley
/// with `LOG_LEVEL=error` (no access log) to tell what the log line costs. Rounds in turns, medians reported.
enum EdgeBench {
    static let objects = 10_000
    static let rounds = 5

    static func run(work: URL, wrk: Wrk, arguments: BenchArguments, logger: Logger) async throws {
        let seconds = arguments.seconds
        print(
            "Parsley edge benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores, wrk -t2 -c64 -d\(seconds)s, \(rounds) rounds in turns, "
                + "medians"
        )
        let logFile = work.appendingPathComponent("access.log")
        let loud = try ServerProcess(work: work, port: arguments.port, environment: [:], standardOutput: logFile)
        defer { loud.stop() }
        let quiet = try ServerProcess(work: work, port: arguments.port + 1, environment: ["LOG_LEVEL": "error"])
        defer { quiet.stop() }
        try await loud.waitUntilHealthy()
        try await quiet.waitUntilHealthy()
        let loudIds = try await populate(loud)
        let quietIds = try await populate(quiet)
        let barePort = arguments.port + 2
        try await withBackground({
            try await BareServer.run(directory: work, port: barePort, ids: loudIds, logger: logger)
        }) {
            try await BareServer.waitUntilListening(port: barePort)
            let headers = ["X-Parse-Application-Id": "bench-app", "X-Parse-Master-Key": ServerProcess.masterKey, "Content-Type": "application/json"]
            struct Target { let name: String; let url: String; let ids: [String] }
            let targets = [
                Target(name: "bare", url: "http://127.0.0.1:\(barePort)", ids: loudIds),
                Target(name: "parsley", url: "http://127.0.0.1:\(arguments.port)", ids: loudIds),
                Target(name: "parsley LOG_LEVEL=error", url: "http://127.0.0.1:\(arguments.port + 1)", ids: quietIds),
            ]
            var results: [String: [Measure]] = [:]
            for round in 1...rounds {
                print("round \(round)")
                for t in targets {
                    let get = WrkScript.randomId(
                        method: "GET", prefix: "/parse/classes/Item/", ids: Array(t.ids.prefix(2_000)), headers: headers, body: nil)
                    results["get \(t.name)", default: []].append(
                        try wrk.run(name: "get, \(t.name)", url: t.url, seconds: seconds, script: get, directory: work))
                }
                for t in targets {
                    let health = WrkScript.fixed(method: "GET", path: "/parse/health", headers: headers, body: nil)
                    results["health \(t.name)", default: []].append(
                        try wrk.run(name: "health, \(t.name)", url: t.url, seconds: seconds, script: health, directory: work))
                }
                for t in targets {
                    let create = WrkScript.fixed(method: "POST", path: "/parse/classes/Item", headers: headers, body: BenchData.payload(seed: round))
                    results["create \(t.name)", default: []].append(
                        try wrk.run(name: "create, \(t.name)", url: t.url, seconds: seconds, script: create, directory: work))
                }
            }
            func median(_ key: String) -> Measure {
                let all = (results[key] ?? []).sorted { $0.requestsPerSecond < $1.requestsPerSecond }
                return all.isEmpty ? Measure(requestsPerSecond: 0, p50: 0, p99: 0) : all[all.count / 2]
            }
            print("")
            print(
                "| request | bare Hummingbird + sqlite-nio req/s | Parsley, default settings req/s (p50 / p99 ms) | ratio | Parsley, "
                    + "LOG_LEVEL=error req/s | access log cost |"
            )
            print("|---|---:|---:|---:|---:|---:|")
            for (label, key) in [("get by id", "get"), ("GET /parse/health", "health"), ("create (POST ~300 B)", "create")] {
                let (bare, loud, quiet) = (median("\(key) bare"), median("\(key) parsley"), median("\(key) parsley LOG_LEVEL=error"))
                print(
                    "| \(label) | \(fmt(bare.requestsPerSecond)) | \(fmt(loud.requestsPerSecond)) (\(ms(loud.p50)) / \(ms(loud.p99))) | "
                        + "\(String(format: "%.2f", loud.requestsPerSecond / bare.requestsPerSecond))x | \(fmt(quiet.requestsPerSecond)) | "
                        + "\(String(format: "%.1f", (1 - loud.requestsPerSecond / quiet.requestsPerSecond) * 100))% |")
            }
            let lines = (try? Data(contentsOf: logFile))?.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } ?? 0
            print("")
            print("access log lines written by the default-settings server: \(lines)")
        }
    }

    /// `objects` objects through `/batch`, 50 a request; their ids.
    static func populate(_ server: ServerProcess) async throws -> [String] {
        var ids: [String] = []
        for start in stride(from: 0, to: objects, by: 50) {
            let requests: [JSONValue] = (start..<min(start + 50, objects)).map { i in
                let body = (try? JSONParser.parse(Array(BenchData.payload(seed: i).utf8))) ?? .null
                return ["method": "POST", "path": "/parse/classes/Item", "body": body]
            }
            let (answer, _) = try await server.call("POST", "/batch", JSONValue.object(["requests": JSONValue.array(requests)]))
            for item in answer.arrayValue ?? [] {
                if let id = item["success"]?["objectId"]?.stringValue { ids.append(id) }
            }
        }
        return ids.shuffled()
    }
}
