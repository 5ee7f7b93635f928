import Foundation
import Hummingbird
import Logging
import NIOCore
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleySQLite
import ParsleyStorage

/// `--cloud`: what a no-op `beforeSave` + `afterSave` costs on create throughput, written in Swift and as webhooks
/// (to a receiver in this process that answers at once), against the same server without cloud code. Three servers
/// on fresh SQLite databases, measured in turns (`rounds` times each), medians.
enum CloudBench {
    static let rounds = 5

    static func run(work: URL, wrk: Wrk, arguments: BenchArguments, logger: Logger) async throws {
        print(
            "Parsley cloud code benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores, wrk -t2 -c64 -d\(arguments.seconds)s, create "
                + "(POST ~260 B), \(rounds) rounds in turns"
        )
        var swift = CloudCode()
        swift.beforeSave("Bench") { _ in }
        swift.afterSave("Bench") { _ in }
        let receiverPort = arguments.port + 20
        try await withBackground({ try await receiver(port: receiverPort, logger: logger) }) {
            try await Task.sleep(for: .milliseconds(300))
            let databases = try await (0..<3).asyncMap { i in
                try await SQLiteDatabase.open(path: work.appendingPathComponent("cloud-\(i).sqlite").path, logger: logger)
            }
            try await BenchServer.with(database: databases[0], port: arguments.port, logger: logger) { plain in
                try await BenchServer.with(database: databases[1], port: arguments.port + 1, logger: logger, cloud: swift) { inSwift in
                    try await BenchServer.with(database: databases[2], port: arguments.port + 2, logger: logger) { hooked in
                        let cloud = hooked.api.services.cloud
                        for trigger in ["beforeSave", "afterSave"] {
                            _ = try await cloud.createTriggerHook(
                                CreateTriggerHook(className: "Bench", triggerName: trigger, url: "http://127.0.0.1:\(receiverPort)/\(trigger)"))
                        }
                        let script = WrkScript.fixed(
                            method: "POST", path: "/parse/classes/Bench", headers: BenchServer.headers, body: BenchData.payload(seed: 0))
                        var results: [[Measure]] = [[], [], []]
                        for _ in 0..<rounds {
                            for (i, server) in [plain, inSwift, hooked].enumerated() {
                                results[i].append(
                                    try wrk.run(name: "cloud-\(i)", url: server.base, seconds: arguments.seconds, script: script, directory: work))
                            }
                        }
                        func median(_ list: [Measure]) -> Measure { list.sorted { $0.requestsPerSecond < $1.requestsPerSecond }[list.count / 2] }
                        let (base, withSwift, withHooks) = (median(results[0]), median(results[1]), median(results[2]))
                        print("")
                        Row.printTable([
                            Row(name: "create, no cloud code (baseline)", result: base, baseline: base),
                            Row(name: "create, no-op beforeSave + afterSave in Swift", result: withSwift, baseline: base),
                            Row(name: "create, no-op beforeSave + afterSave as webhooks", result: withHooks, baseline: base),
                        ])
                        print(
                            "after-triggers run: Swift \(inSwift.api.services.cloud.afterTriggersRun), webhooks \(cloud.afterTriggersRun) (failed: "
                                + "\(cloud.afterTriggerFailures))"
                        )
                        print(
                            "per round (req/s): "
                                + results.map { $0.map { fmt($0.requestsPerSecond) }.joined(separator: "/") }.joined(separator: "  "))
                    }
                }
            }
        }
    }

    /// A webhook receiver that answers at once: `beforeSave` returns the object unchanged, anything else `true`.
    static func receiver(port: Int, logger: Logger) async throws {
        let router = Router()
        router.post("/beforeSave") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let body = (try? bytes.withUnsafeReadableBytes { try JSONParser.parse($0) }) ?? .null
            let answer: JSONValue = ["success": body["object"] ?? [:]]
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(answer))))
        }
        router.post("/afterSave") { request, _ -> Response in
            _ = try await request.body.collect(upTo: 1 << 20)
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"success":true}"#)))
        }
        try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger).runService()
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async throws -> [T] {
        var out: [T] = []
        for e in self { out.append(try await transform(e)) }
        return out
    }
}
