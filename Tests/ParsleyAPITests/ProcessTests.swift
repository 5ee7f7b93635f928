import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ParsleyCore
import ParsleyDomain
import Synchronization
import Testing

/// The `parsley` executable itself: start-up from the environment alone, the generated master key, and
/// durability of acknowledged writes across a SIGKILL.
@Suite("Process", .serialized)
struct ProcessTests {
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parsley")
    }

    /// A running `parsley` child process.
    final class Server: @unchecked Sendable {
        let process: ChildProcess
        private let boundPort = Mutex<Int?>(nil)

        /// The port the process listens on, known once `waitUntilHealthy` returned.
        var port: Int { boundPort.withLock { $0 } ?? 0 }

        init(dataDir: URL, environment: [String: String] = [:]) throws {
            // Port 0: the process binds a port the system chooses and says which. (A port picked here beforehand
            // could be taken meanwhile by another test's server, which would then answer the requests meant for
            // this one.)
            var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARSE_SERVER_") }
            env["PARSLEY_DATA_DIR"] = dataDir.path
            env["PARSE_SERVER_HOST"] = "127.0.0.1"
            env["PORT"] = "0"
            env["PARSE_SERVER_APPLICATION_ID"] = "proc-app"
            for (k, v) in environment { env[k] = v }
            process = try ChildProcess(ProcessTests.binary.path, environment: env)
        }

        func waitUntilHealthy() async throws {
            for _ in 0..<200 {
                if port == 0, let said = Self.listeningPort(in: outputText()) { boundPort.withLock { $0 = said } }
                if port != 0,
                    let r = try? await TestClient.withClient(
                        host: "127.0.0.1", port: port,
                        operation: { client in
                            try await client.execute(TestClient.Request("/parse/health", method: .get))
                        }), r.status == .ok
                {
                    return
                }
                if !process.isRunning { throw Failure("parsley exited: \(outputText())") }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw Failure("parsley did not become healthy")
        }

        /// The port in the start-up line `parsley serving http://127.0.0.1:PORT/parse` (in any log format).
        static func listeningPort(in output: String) -> Int? {
            guard let serving = output.range(of: "parsley serving http"),
                let address = output.range(of: "127.0.0.1:", range: serving.upperBound..<output.endIndex)
            else { return nil }
            return Int(output[address.upperBound...].prefix { $0.isNumber })
        }

        /// Everything the server printed so far.
        func outputText() -> String { process.outputText() }

        func kill() { process.killNow() }

        /// SIGTERM, then waits for the end.
        func stop() async {
            process.signal(SIGTERM)
            await process.exited()
        }
    }

    static func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-proc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func client(_ port: Int, _ key: String, _ body: @escaping @Sendable (ParseClient) async throws -> Void) async throws {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { connection in
            try await body(ParseClient(connection: connection, options: .init(applicationId: "proc-app", masterKey: key)))
        }
    }

    @Test("no master key: one is generated, kept owner-only in the data folder, printed once, reused")
    func generatedMasterKey() async throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = try Server(dataDir: dir)
        try await first.waitUntilHealthy()
        let keyFile = dir.appendingPathComponent("master.key")
        let key = try String(contentsOf: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.count == 32)
        let mode = try FileManager.default.attributesOfItem(atPath: keyFile.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try await Self.client(first.port, key) { p in
            let r = try await p.create("Thing", ["a": 1])
            #expect(r.status == 201)
        }
        first.kill()
        #expect(first.outputText().contains(key))
        let second = try Server(dataDir: dir)
        try await second.waitUntilHealthy()
        try await Self.client(second.port, key) { p in
            let r = try await p.find("Thing")
            #expect(r.results.count == 1)
        }
        second.kill()
        #expect(!second.outputText().contains(key))
    }

    @Test("a wrong setting stops start-up with one line naming it")
    func badSetting() async throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try Server(dataDir: dir, environment: ["PARSE_SERVER_DEFAULT_LIMIT": "lots", "PARSE_SERVER_MASTER_KEY": "a-good-master-key"])
        await server.process.exited()
        #expect(server.process.terminationStatus != 0)
        #expect(server.outputText().contains("PARSE_SERVER_DEFAULT_LIMIT"))
    }

    @Test("every acknowledged write survives SIGKILL")
    func durability() async throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "durability-master-key"
        let server = try Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": key])
        try await server.waitUntilHealthy()
        let acknowledged = AckList()
        // 16 connections writing as fast as they can; the process is killed in the middle of the burst.
        let writers = Task {
            await withTaskGroup(of: Void.self) { group in
                for w in 0..<16 {
                    group.addTask {
                        try? await Self.client(server.port, key) { p in
                            for i in 0..<10_000 {
                                let r = try await p.create("Durable", ["writer": .int(Int64(w)), "i": .int(Int64(i))])
                                guard r.status == 201, let id = r["objectId"]?.stringValue else { return }
                                acknowledged.add(id)
                            }
                        }
                    }
                }
            }
        }
        while acknowledged.count < 300 { try await Task.sleep(for: .milliseconds(20)) }
        server.kill()
        await writers.value
        let ids = acknowledged.all
        #expect(ids.count >= 300)
        let restarted = try Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": key])
        try await restarted.waitUntilHealthy()
        try await Self.client(restarted.port, key) { p in
            let r = try await p.find("Durable", ["limit": "1000000", "keys": "objectId"])
            let stored = Set(r.results.compactMap { $0["objectId"]?.stringValue })
            let missing = ids.filter { !stored.contains($0) }
            #expect(missing.isEmpty, "acknowledged but lost: \(missing.count) of \(ids.count)")
        }
        restarted.kill()
    }
}

final class AckList: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [String] = []
    func add(_ id: String) { lock.withLock { ids.append(id) } }
    var count: Int { lock.withLock { ids.count } }
    var all: [String] { lock.withLock { ids } }
}
