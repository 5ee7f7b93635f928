import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleySQLite
import ParsleyStorage
import Testing

/// Deployment and operations: /health states, request ids, rate limits, metrics, log formats (in-process), and
/// graceful shutdown, online backup, secret-free logs and config files (against the real executable).
@Suite("Operations", .serialized)
struct OperationsTests {
    /// A server with an operations layer of the test's choosing; the database can be made to fail reads.
    static func with(
        backend: Backend = .sqlite, _ operations: OperationsOptions = .init(), options: ParseServerOptions = TestServer.options(),
        rateLimits: [RateLimitRule] = [], _ body: @escaping @Sendable (ParseClient, FlakyDatabase) async throws -> Void
    ) async throws {
        let logger = TestDatabase.logger
        try await TestDatabase.with(backend, logger: logger) { db in
            let database = FlakyDatabase(db.database)
            let api = ParseAPI(
                services: try await ParseServices.open(options: options, database: database, adapters: .standard), rateLimits: rateLimits)
            let app = ParsleyApplication.application(api: api, host: "127.0.0.1", port: 0, logger: logger, operations: operations)
            try await app.test(.live) { client in
                var parse = ParseClient(client: client, options: options)
                parse.backend = backend
                try await body(parse, database)
            }
        }
    }

    static let requestId = HTTPField.Name("X-Request-Id")!

    @Test(
        "/health: ok after SELECT 1, 503 with the state and Retry-After while not ready, error within a second when the database fails",
        arguments: Backend.all)
    func health(_ backend: Backend) async throws {
        let readiness = Readiness(.initialized)
        try await Self.with(backend: backend, .init(readiness: readiness)) { p, database in
            let h = HTTPFields()
            var r = try await p.raw(.get, "/parse/health", headers: h)
            #expect(r.status == 503)
            #expect(r["status"]?.stringValue == "initialized")
            #expect(r.headers[HTTPField.Name("Retry-After")!] == "1")
            readiness.state = .starting
            r = try await p.raw(.get, "/parse/health", headers: h)
            #expect(r.status == 503)
            #expect(r["status"]?.stringValue == "starting")
            readiness.state = .ok
            r = try await p.raw(.get, "/parse/health", headers: h)
            #expect(r.status == 200)
            #expect(r.json == .object(["status": "ok"]))
            r = try await p.raw(.post, "/parse/health", headers: h)
            #expect(r.status == 200)
            database.failing = true
            // A passed ping is trusted for a second: once that second is over, the next probe pings and fails.
            try await Task.sleep(for: .milliseconds(1_100))
            r = try await p.raw(.get, "/parse/health", headers: h)
            #expect(r.status == 503)
            #expect(r.json == .object(["status": "error"]))
            database.failing = false
            r = try await p.raw(.get, "/parse/health", headers: h)
            #expect(r.status == 200)
        }
    }

    @Test("X-Request-Id is echoed when sent, generated otherwise, on every answer", arguments: Backend.all)
    func requestIds(_ backend: Backend) async throws {
        try await Self.with(backend: backend) { p, _ in
            let given = try await p.request(.post, "/classes/Thing", ["a": 1], extra: ["X-Request-Id": "client-req-42"])
            #expect(given.status == 201)
            #expect(given.headers[Self.requestId] == "client-req-42")
            let generated = try await p.request(.get, "/classes/Thing")
            let id = try #require(generated.headers[Self.requestId])
            #expect(id.count == 16)
            let other = try await p.request(.get, "/classes/Thing")
            #expect(other.headers[Self.requestId] != id)
            let error = try await p.request(.get, "/classes/Thing/nope", extra: ["X-Request-Id": "err-1"])
            #expect(error.status == 404)
            #expect(error.headers[Self.requestId] == "err-1")
            let bad = try await p.request(.get, "/classes/Thing", extra: ["X-Request-Id": String(repeating: "x", count: 300)])
            #expect(bad.headers[Self.requestId]?.count == 16)
        }
    }

    @Test("rate limits: per IP and per session, only matching paths and methods, master key exempt, 429 code 100", arguments: Backend.all)
    func rateLimits(_ backend: Backend) async throws {
        let rules = try RateLimitRule.parse(
            JSONParser.parse(
                #"[{"requestPath":"/classes/*","requestTimeWindow":60000,"requestCount":3,"requestMethods":["POST"]},"#
                    + #"{"requestPath":"/functions/:name","requestTimeWindow":60000,"requestCount":1,"zone":"session","errorResponseMessage":"Slow "#
                    + #"down."}]"#
            ))
        try await Self.with(backend: backend, rateLimits: rules) { p, _ in
            _ = try await p.createId("Limited", ["n": 0])  // master key: not counted
            for i in 1...3 {
                let r = try await p.create("Limited", ["n": .int(Int64(i))], master: false)
                #expect(r.status == 201)
            }
            let limited = try await p.create("Limited", ["n": 4], master: false)
            #expect(limited.status == 429)
            #expect(limited.json == .object(["code": 100, "error": "Too many requests."]))
            // Other methods and the master key go on.
            #expect(try await p.find("Limited", master: false).status == 200)
            #expect(try await p.create("Limited", ["n": 5]).status == 201)
            // Session zone: each session token has its own budget; without one the address counts.
            let a = try await p.request(.post, "/functions/hello", [:], master: false, extra: ["X-Parse-Session-Token": "r:aaa"])
            #expect(a.status != 429)
            let a2 = try await p.request(.post, "/functions/hello", [:], master: false, extra: ["X-Parse-Session-Token": "r:aaa"])
            #expect(a2.status == 429)
            #expect(a2.json == .object(["code": 100, "error": "Slow down."]))
            let b = try await p.request(.post, "/functions/hello", [:], master: false, extra: ["X-Parse-Session-Token": "r:bbb"])
            #expect(b.status != 429)
        }
    }

    @Test("rate limit JSON: Parse Server's format, errors name the entry and field, Express-style paths")
    func rateLimitParsing() throws {
        let one = try RateLimitRule.parse(
            JSONParser.parse(#"{"requestPath":"login","requestTimeWindow":1000,"requestCount":2,"requestMethods":"post"}"#))
        #expect(one == [RateLimitRule(requestPath: "/login", window: .seconds(1), count: 2, methods: ["POST"])])
        #expect(throws: RateLimitRule.Invalid.self) { try RateLimitRule.parse(JSONParser.parse(#"[{"requestPath":"/x","requestCount":2}]"#)) }
        #expect(throws: RateLimitRule.Invalid.self) {
            try RateLimitRule.parse(JSONParser.parse(#"[{"requestPath":"/x","requestTimeWindow":1,"requestCount":2,"zone":"planet"}]"#))
        }
        let star = RateLimitRule(requestPath: "/classes/*", window: .seconds(1), count: 1)
        #expect(star.matches("/classes/A"))
        #expect(star.matches("/classes/A/xyz"))
        #expect(!star.matches("/users"))
        let param = RateLimitRule(requestPath: "/classes/:className", window: .seconds(1), count: 1)
        #expect(param.matches("/classes/A"))
        #expect(param.matches("/classes/A/"))
        #expect(!param.matches("/classes/A/b"))
        #expect(!param.matches("/classes/"))
        #expect(RateLimitRule(requestPath: "*", window: .seconds(1), count: 1).matches("/anything/at/all"))
    }

    @Test("metrics: requests by route, method and status, latency histograms, pool gauges in Prometheus text", arguments: Backend.all)
    func metrics(_ backend: Backend) async throws {
        let metrics = ParsleyMetrics(pool: { .init(readersBusy: 1, readers: 4, writesQueued: 0, pointReadsCoalesced: 7) })
        try await Self.with(backend: backend, .init(metrics: metrics)) { p, _ in
            let id = try await p.createId("Metered", ["a": 1])
            _ = try await p.get("Metered", id)
            _ = try await p.get("Metered", "missing")
            _ = try await p.raw(.get, "/parse/health", headers: HTTPFields())
        }
        let text = metrics.render()
        #expect(text.contains(#"parsley_http_requests_total{route="classes/:className",method="POST",status="201"} 1"#))
        #expect(text.contains(#"parsley_http_requests_total{route="classes/:className/:objectId",method="GET",status="200"} 1"#))
        #expect(text.contains(#"parsley_http_requests_total{route="classes/:className/:objectId",method="GET",status="404"} 1"#))
        #expect(text.contains(#"parsley_http_requests_total{route="health",method="GET",status="200"} 1"#))
        #expect(text.contains(#"parsley_http_request_duration_seconds_bucket{route="classes/:className",method="POST",le="+Inf"} 1"#))
        #expect(text.contains("parsley_db_readers 4"))
        #expect(text.contains("parsley_db_readers_busy 1"))
        #expect(text.contains("parsley_db_point_reads_coalesced_total 7"))
        // A counter: a second scrape with the same count does not add it again.
        #expect(metrics.render().contains("parsley_db_point_reads_coalesced_total 7"))
        #expect(text.contains("# TYPE parsley_http_request_duration_seconds histogram"))
    }

    @Test("log lines: text, logfmt and JSON with sorted metadata; secrets and session tokens redacted")
    func logFormats() throws {
        let time = Date(timeIntervalSince1970: 0)
        let metadata: Logger.Metadata = ["status": .stringConvertible(201), "path": "/parse/classes/A", "note": "two words"]
        let json = ParsleyLogHandler.render(format: .json, time: time, level: .info, label: "parsley", message: "request \"x\"", metadata: metadata)
        #expect(
            json
                == #"{"time":"1970-01-01T00:00:00.000Z","level":"info","logger":"parsley","msg":"request \"x\"","note":"two words","#
                + #""path":"/parse/classes/A","status":201}"#
        )
        #expect((try? JSONParser.parse(json)) != nil)
        let logfmt = ParsleyLogHandler.render(format: .logfmt, time: time, level: .warning, label: "parsley", message: "hi there", metadata: metadata)
        #expect(
            logfmt == #"time=1970-01-01T00:00:00.000Z level=warning logger=parsley msg="hi there" note="two words" path=/parse/classes/A status=201"#)
        let text = ParsleyLogHandler.render(
            format: .text, time: time, level: .info, label: "parsley", message: "request", metadata: ["status": "200"])
        #expect(text == "1970-01-01T00:00:00.000Z info parsley: request status=200")
        let redactor = LogRedactor()
        redactor.register("my-master-key-1")
        let line = redactor.redact("key my-master-key-1 token r:0123456789abcdef0123456789abcdef end r:short")
        #expect(line == "key [redacted] token r:[redacted] end r:short")
    }
}

/// Delegates to the test database; reads fail while `failing` is set (to see /health report a broken database).
final class FlakyDatabase: SQLDatabase, @unchecked Sendable {
    let base: any SQLDatabase
    private let lock = NSLock()
    private var _failing = false
    var failing: Bool {
        get { lock.withLock { _failing } }
        set { lock.withLock { _failing = newValue } }
    }
    init(_ base: any SQLDatabase) { self.base = base }
    var dialect: any SQLDialect { base.dialect }
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        if failing { throw StoreError.database("disk on fire") }
        return try await base.read(body)
    }
    func write<T: Sendable>(_ body: @escaping @Sendable (Transaction) async throws -> T) async throws -> T {
        try await base.write(body)
    }
    func run() async { await base.run() }
    func prepare() async throws { try await base.prepare() }
    func close() async throws { try await base.close() }
    var poolUsage: (readersBusy: Int, readers: Int, writesQueued: Int) { base.poolUsage }
    var changeChannel: any ChangeChannel { base.changeChannel }
}

/// The real executable: SIGTERM during writes, `parsley backup` while writing, logs without secrets, config files.
@Suite("Operations (process)", .serialized)
struct OperationsProcessTests {
    typealias Server = ProcessTests.Server

    /// 16 connections creating objects until stopped; every acknowledged id is recorded.
    static func writeBurst(_ server: Server, key: String, into acknowledged: AckList) -> Task<Void, Never> {
        Task {
            await withTaskGroup(of: Void.self) { group in
                for w in 0..<16 {
                    group.addTask {
                        try? await ProcessTests.client(server.port, key) { p in
                            for i in 0..<10_000 {
                                let r = try await p.create("Burst", ["writer": .int(Int64(w)), "i": .int(Int64(i))])
                                guard r.status == 201, let id = r["objectId"]?.stringValue else { return }
                                acknowledged.add(id)
                            }
                        }
                    }
                }
            }
        }
    }

    static func storedIds(_ server: Server, key: String) async throws -> Set<String> {
        let ids = AckList()
        try await ProcessTests.client(server.port, key) { p in
            let r = try await p.find("Burst", ["limit": "1000000", "keys": "objectId"])
            for id in r.results.compactMap({ $0["objectId"]?.stringValue }) { ids.add(id) }
        }
        return Set(ids.all)
    }

    @Test("SIGTERM during a burst of writes: requests in flight finish, every acknowledged write is stored, exit 0")
    func gracefulShutdown() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "graceful-master-key"
        let server = try Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": key])
        try await server.waitUntilHealthy()
        let acknowledged = AckList()
        let writers = Self.writeBurst(server, key: key, into: acknowledged)
        while acknowledged.count < 300 { try await Task.sleep(for: .milliseconds(20)) }
        await server.stop()
        await writers.value
        #expect(server.process.terminationStatus == 0, "\(server.outputText().suffix(2000))")
        #expect(server.outputText().contains("parsley stopped"))
        let ids = acknowledged.all
        let restarted = try Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": key])
        try await restarted.waitUntilHealthy()
        let stored = try await Self.storedIds(restarted, key: key)
        let missing = ids.filter { !stored.contains($0) }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.count) of \(ids.count)")
        restarted.kill()
    }

    @Test("parsley backup copies the database consistently while a server writes to it")
    func onlineBackup() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "backup-master-key"
        let server = try Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": key])
        try await server.waitUntilHealthy()
        let acknowledged = AckList()
        let writers = Self.writeBurst(server, key: key, into: acknowledged)
        while acknowledged.count < 300 { try await Task.sleep(for: .milliseconds(20)) }
        let before = Set(acknowledged.all)
        let backupFile = dir.appendingPathComponent("copy/parsley.sqlite")
        try FileManager.default.createDirectory(at: backupFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        let (backupStatus, said) = try await ChildProcess.run(
            ProcessTests.binary.path, ["backup", backupFile.path], environment: ["PARSLEY_DATA_DIR": dir.path, "PATH": "/usr/bin:/bin"])
        #expect(backupStatus == 0, "\(said)")
        #expect(said.contains("backed up"))
        // The writes go on during and after the copy.
        let during = acknowledged.count
        while acknowledged.count < during + 100 { try await Task.sleep(for: .milliseconds(20)) }
        server.kill()
        await writers.value
        // A second backup to the same file is refused; a missing database is named.
        let again = try await ChildProcess.run(ProcessTests.binary.path, ["backup", backupFile.path, "--data-dir", dir.path])
        #expect(again.status != 0)
        // The copy opens as a data folder of its own and holds at least every write acknowledged before it.
        let copy = try Server(dataDir: backupFile.deletingLastPathComponent(), environment: ["PARSE_SERVER_MASTER_KEY": key])
        try await copy.waitUntilHealthy()
        let stored = try await Self.storedIds(copy, key: key)
        #expect(before.isSubset(of: stored), "missing from the backup: \(before.subtracting(stored).count) of \(before.count)")
        #expect(stored.count >= before.count)
        copy.kill()
    }

    @Test("JSON logs: one line per request with method, path, status, duration and request id; no secret ever logged")
    func logsWithoutSecrets() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "log-master-key-7f3a9c"
        let password = "Correct-Horse-Battery-9"
        let wrong = "Wrong-Horse-Battery-8"
        let server = try Server(
            dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": key, "PARSLEY_LOG_FORMAT": "json", "LOG_LEVEL": "debug"])
        try await server.waitUntilHealthy()
        let tokens = AckList()
        try await ProcessTests.client(server.port, key) { p in
            let signUp = try await p.request(.post, "/users", ["username": "logan", "password": .string(password)], master: false)
            #expect(signUp.status == 201)
            let login = try await p.request(.post, "/login", ["username": "logan", "password": .string(password)], master: false)
            let token = login["sessionToken"]?.stringValue ?? ""
            tokens.add(token)
            #expect(token.hasPrefix("r:"))
            let failed = try await p.request(.post, "/login", ["username": "logan", "password": .string(wrong)], master: false)
            #expect(failed.status == 404)
            let me = try await p.request(.get, "/users/me", master: false, extra: ["X-Parse-Session-Token": token, "X-Request-Id": "trace-me-123"])
            #expect(me.status == 200)
            #expect(me.headers[HTTPField.Name("X-Request-Id")!] == "trace-me-123")
            // Credentials in a JS-SDK body and a session token in the query string.
            _ = try await p.raw(
                .post, "/parse/classes/Secretive",
                body: #"{"_method":"GET","_ApplicationId":"proc-app","_MasterKey":"\#(key)","_SessionToken":"\#(token)"}"#,
                headers: [.contentType: "text/plain"])
            _ = try await p.request(.get, "/classes/Secretive?where=%7B%22t%22%3A%22\(token)%22%7D")
            _ = try await p.request(.put, "/users/nope", ["password": .string(password)])
        }
        await server.stop()
        let token = tokens.all.first ?? ""
        let output = server.outputText()
        #expect(server.process.terminationStatus == 0)
        let lines = output.split(separator: "\n").map(String.init)
        let requests = lines.compactMap { try? JSONParser.parse($0) }.filter { $0["msg"]?.stringValue == "request" }
        #expect(requests.count >= 8)
        let me = requests.first { $0["request_id"]?.stringValue == "trace-me-123" }
        #expect(me?["method"]?.stringValue == "GET")
        #expect(me?["path"]?.stringValue == "/parse/users/me")
        #expect(me?["status"]?.integerValue == 200)
        #expect(me?["duration_ms"] != nil)
        for line in lines where !line.isEmpty {
            #expect((try? JSONParser.parse(line)) != nil, "not JSON: \(line)")
        }
        for secret in [key, password, wrong, token] where !secret.isEmpty {
            #expect(!output.contains(secret), "secret in the log: \(secret)")
        }
    }

    @Test("config file in Parse Server's format: fills unset settings; the environment wins; metrics listener; bad value named")
    func configFileAndMetrics() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let metricsReservation = try ReservedPort()
        defer { metricsReservation.release() }
        let metricsPort = metricsReservation.port
        let config = dir.appendingPathComponent("parsley.json")
        try Data(
            #"""
            {"appId":"from-file","masterKey":"file-master-key","metricsPort":\#(metricsPort),"defaultLimit":2,
             "rateLimit":[{"requestPath":"/classes/*","requestTimeWindow":60000,"requestCount":1,"requestMethods":"POST"}],
             "databasePoolSize":4,"statementTimeoutMs":5000,"postgresPreparedStatements":false,"uploadStallTimeout":10,
             "cloud":"./cloud/main.js","someFutureOption":true}
            """#.utf8
        ).write(to: config)
        // PARSE_SERVER_APPLICATION_ID=proc-app from the environment wins over the file's appId.
        let server = try Server(dataDir: dir, environment: ["PARSE_SERVER_CONFIG": config.path])
        try await server.waitUntilHealthy()
        try await ProcessTests.client(server.port, "file-master-key") { (p: ParseClient) async throws in
            for i in 0..<3 { #expect(try await p.create("Configured", ["i": .int(Int64(i))]).status == 201) }
            #expect(try await p.find("Configured").results.count == 2)  // defaultLimit from the file
            #expect(try await p.create("Configured", ["i": 9], master: false).status == 201)
            #expect(try await p.create("Configured", ["i": 10], master: false).status == 429)  // rateLimit from the file
        }
        let scrape = try await TestClient.withClient(host: "127.0.0.1", port: metricsPort) { client in
            try await client.execute(TestClient.Request("/metrics", method: .get))
        }
        #expect(scrape.status == .ok)
        let text = String(buffer: scrape.body ?? ByteBuffer())
        #expect(text.contains(#"parsley_http_requests_total{route="classes/:className",method="POST",status="201"} 4"#))
        #expect(text.contains(#"parsley_http_requests_total{route="classes/:className",method="POST",status="429"} 1"#))
        #expect(text.contains("parsley_db_readers "))
        server.kill()
        #expect(server.outputText().contains("ignoring unknown options someFutureOption\n"), "\(server.outputText())")

        try Data(#"{"masterKey":"file-master-key","logFormat":"xml"}"#.utf8).write(to: config)
        let bad = try Server(dataDir: dir, environment: ["PARSE_SERVER_CONFIG": config.path])
        await bad.process.exited()
        #expect(bad.process.terminationStatus != 0)
        #expect(bad.outputText().contains("PARSLEY_LOG_FORMAT"))
        try Data(#"{"masterKey":"file-master-key","uploadStallTimeout":0}"#.utf8).write(to: config)
        let badStall = try Server(dataDir: dir, environment: ["PARSE_SERVER_CONFIG": config.path])
        await badStall.process.exited()
        #expect(badStall.process.terminationStatus != 0)
        #expect(badStall.outputText().contains("PARSLEY_UPLOAD_STALL_TIMEOUT"))
        let badLimit = try Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": "abcdefgh1", "PARSE_SERVER_RATE_LIMIT": "[{}]"])
        await badLimit.process.exited()
        #expect(badLimit.process.terminationStatus != 0)
        #expect(badLimit.outputText().contains("PARSE_SERVER_RATE_LIMIT"))
    }
}
