import Foundation
import HTTPTypes
import HummingbirdTesting
import ParsleyCore
import ParsleyDomain
import Testing

@testable import ParsleyServer

/// The `parsley` executable started the ways Parse Server is: with a Parse Server `config.json`, with its flags,
/// with its environment variables; options Parsley does not implement warned about or refused.
@Suite("Process: Parse Server's config.json, flags and variables", .serialized)
struct ParseServerConfigProcessTests {
    static let appId = "cfg-app"
    static let masterKey = "cfg-master-key"
    static let mount = "/api"

    /// A running `parsley` process started with `arguments` and `environment` (on top of a clean environment).
    final class Child: @unchecked Sendable {
        let process: ChildProcess
        var port = 0

        init(_ arguments: [String], environment: [String: String], dataDir: URL) throws {
            var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARSE_SERVER_") && !$0.key.hasPrefix("PARSLEY_") }
            env["PARSLEY_DATA_DIR"] = dataDir.path
            env["PARSLEY_DATABASE_POOL_SIZE"] = "4"
            for (k, v) in environment { env[k] = v }
            process = try ChildProcess(ProcessTests.binary.path, arguments, environment: env)
        }

        /// Waits for the start-up line and `<mount>/health`.
        func waitUntilHealthy(mount: String) async throws {
            for _ in 0..<300 {
                if port == 0, let said = ProcessTests.Server.listeningPort(in: output) { port = said }
                if port != 0,
                    let r = try? await TestClient.withClient(
                        host: "127.0.0.1", port: port,
                        operation: { client in
                            try await client.execute(TestClient.Request("\(mount)/health", method: .get))
                        }), r.status == .ok
                {
                    return
                }
                if !process.isRunning { throw Failure("parsley exited: \(output)") }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw Failure("parsley did not become healthy: \(output)")
        }

        var output: String { process.outputText() }

        /// A Parse client of this server (master key unless `master: false` per request).
        func client(_ body: @escaping @Sendable (ParseClient) async throws -> Void) async throws {
            try await TestClient.withClient(host: "127.0.0.1", port: port) { connection in
                var p = ParseClient(
                    connection: connection,
                    options: .init(applicationId: ParseServerConfigProcessTests.appId, masterKey: ParseServerConfigProcessTests.masterKey))
                p.mount = ParseServerConfigProcessTests.mount
                try await body(p)
            }
        }
    }

    /// The database of `backend` for one test: a SQLite file in `dir`, or a fresh PostgreSQL database.
    static func withDatabase(_ backend: Backend, _ dir: URL, _ body: (String) async throws -> Void) async throws {
        switch backend {
        case .sqlite: try await body("sqlite:\(dir.path)/app.sqlite")
        case .postgres: try await PostgresCluster.shared.withFreshDatabase { url in try await body(url) }
        }
    }

    /// How the settings are given.
    enum Way: String, CaseIterable, CustomStringConvertible {
        case configFile, flags, environment
        var description: String { rawValue }
    }

    /// A realistic Parse Server config: keys Parsley implements (liveQuery among them), and some it ignores (cloud,
    /// push, databaseOptions) or for which it already does what the value says (masterKeyIps, serverURL, directAccess).
    static func parseServerConfig(databaseURI: String) -> JSONValue {
        [
            "appId": .string(appId), "masterKey": .string(masterKey), "databaseURI": .string(databaseURI), "port": 0, "host": "127.0.0.1",
            "mountPath": .string(mount), "serverURL": "http://localhost:1337/api", "publicServerURL": "https://example.com/api",
            "cloud": "./cloud/main.js", "enforcePrivateUsers": false, "allowClientClassCreation": true, "maxLimit": 2,
            "directAccess": true, "liveQuery": ["classNames": ["Chat"]], "push": ["ios": ["pfx": "push.p12", "topic": "com.example"]],
            "databaseOptions": ["enableSchemaHooks": true], "masterKeyIps": ["0.0.0.0/0", "::0"], "allowCustomObjectId": false,
            "emailVerifySuccessOnInvalidEmail": true, "requestKeywordDenylist": [["key": "_bsontype", "value": "Code"], ["key": "constructor"]],
            "idempotencyOptions": ["paths": ["classes/.*"], "ttl": 60], "logLevel": "info",
        ]
    }

    @Test("Parse Server settings work as config.json (parsley serve --config), as flags and as variables", arguments: Backend.all, Way.allCases)
    func parseServerSettings(_ backend: Backend, _ way: Way) async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await Self.withDatabase(backend, dir) { uri in
            guard case .object(let config) = Self.parseServerConfig(databaseURI: uri) else { return }
            var arguments = ["serve"]
            var environment: [String: String] = [:]
            switch way {
            case .configFile:
                let file = dir.appendingPathComponent("config.json")
                try Data(JSONWriter.string(.object(config)).utf8).write(to: file)
                arguments += ["--config", file.path]
            case .flags:
                for (key, value) in config.sorted(by: { $0.key < $1.key }) { arguments += ["--\(key)", OptionValues.text(value)] }
            case .environment:
                for (key, value) in config {
                    environment[OptionTable.spec(key).env[0]] = OptionValues.text(value)
                }
            }
            let server = try Child(arguments, environment: environment, dataDir: dir)
            defer { server.process.killNow() }
            try await server.waitUntilHealthy(mount: Self.mount)
            try await server.client { p in
                // allowClientClassCreation: a client without the master key creates a class.
                for i in 0..<3 {
                    let created = try await p.create("ClientMade", ["i": .int(Int64(i))], master: false)
                    #expect(created.status == 201, "\(created.json)")
                }
                // maxLimit 2.
                let found = try await p.find("ClientMade", ["limit": "10"])
                #expect(found.results.count == 2, "\(found.json)")
                // enforcePrivateUsers false: a user signed up without an ACL is readable by anyone.
                let (id, _) = try await p.signUp("ann", "ann-password")
                let seen = try await p.request(.get, "/users/\(id)", master: false)
                #expect(seen.status == 200 && seen["username"] == "ann", "\(seen.json)")
                let listed = try await p.request(.get, "/classes/_User", master: false)
                #expect(listed.results.count == 1)
                // The links of created objects use publicServerURL.
                let located = try await p.create("ClientMade", ["i": 9])
                #expect(located.headers[.location]?.hasPrefix("https://example.com/api/classes/ClientMade/") == true, "\(located.headers)")
            }
            // liveQuery: Chat is live on the server's own port, at the mount path.
            let lq = try await LiveQueryClient.open(port: server.port, path: Self.mount, appId: Self.appId)
            #expect(try await lq.connect(masterKey: Self.masterKey)["op"] == "connected")
            #expect(try await lq.subscribe(1, "Chat")["op"] == "subscribed")
            try await server.client { p in
                let id = try await p.createId("Chat", ["text": "hi"])
                #expect(try await lq.expect("create")["object"]?["objectId"] == .string(id))
            }
            await lq.close()
            let output = server.output
            for key in ["cloud", "push", "databaseOptions"] {
                #expect(output.contains("Parse Server option \(key) ("), "no warning about \(key) in \(output)")
            }
            for quiet in ["masterKeyIps", "allowCustomObjectId", "serverURL", "directAccess"] {
                #expect(!output.contains("option \(quiet) "), "\(quiet) needs no warning: \(output)")
            }
        }
    }

    @Test("parsley --config <file> and parsley <file> (as parse-server <file>) start from the file; unknown keys named", arguments: Backend.all)
    func rootConfigForms(_ backend: Backend) async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await Self.withDatabase(backend, dir) { uri in
            guard case .object(var config) = Self.parseServerConfig(databaseURI: uri) else { return }
            config["someFutureOption"] = true
            let file = dir.appendingPathComponent("config.json")
            try Data(JSONWriter.string(.object(config)).utf8).write(to: file)
            for arguments in [["--config", file.path], [file.path]] {
                let server = try Child(arguments, environment: [:], dataDir: dir)
                defer { server.process.killNow() }
                try await server.waitUntilHealthy(mount: Self.mount)
                try await server.client { p in
                    let created = try await p.create("FromRoot", ["a": 1], master: false)
                    #expect(created.status == 201, "\(arguments): \(created.json)")
                }
                #expect(server.output.contains("ignoring unknown options someFutureOption"), "\(server.output)")
            }
        }
    }

    @Test("every ignored option, set at once: the server starts and one warning names each", arguments: Backend.all)
    func ignoredOptionsWarn(_ backend: Backend) async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await Self.withDatabase(backend, dir) { uri in
            let ignored = OptionTable.all.filter { $0.status == .ignored }
            var environment = [
                "PARSE_SERVER_APPLICATION_ID": Self.appId, "PARSE_SERVER_MASTER_KEY": Self.masterKey, "PARSE_SERVER_DATABASE_URI": uri,
                "PORT": "0", "PARSE_SERVER_HOST": "127.0.0.1", "PARSE_SERVER_MOUNT_PATH": Self.mount,
            ]
            for spec in ignored {
                let value = try #require(ParseServerOptionsTests.triggering(spec))
                environment[spec.env[0]] = value
            }
            let server = try Child([], environment: environment, dataDir: dir)
            defer { server.process.killNow() }
            try await server.waitUntilHealthy(mount: Self.mount)
            try await server.client { p in
                let created = try await p.create("StillServes", ["a": 1])
                #expect(created.status == 201)
            }
            let output = server.output
            for spec in ignored {
                #expect(output.contains("Parse Server option \(spec.key) (\(spec.env[0])) is not supported and is ignored"), "\(spec.key)")
            }
        }
    }

    /// Runs `parsley` to its end (it should refuse to start).
    static func refusedStart(_ arguments: [String], _ environment: [String: String]) async throws -> (Int32, String) {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let child = try Child(
            arguments, environment: environment.merging(["PORT": "0", "PARSE_SERVER_MASTER_KEY": masterKey]) { a, _ in a }, dataDir: dir)
        await child.process.exited()
        return (child.process.terminationStatus, child.output)
    }

    @Test("refused options stop the start with exit status 2 naming them (variables, flags, config file); bad JSON too")
    func refusedOptionsStop() async throws {
        let refused = OptionTable.all.filter { $0.status == .refused }
        var environment: [String: String] = [:]
        for spec in refused {
            let value = try #require(ParseServerOptionsTests.triggering(spec))
            environment[spec.env[0]] = value
        }
        let (status, output) = try await Self.refusedStart([], environment)
        #expect(status == 2, "\(output)")
        for spec in refused { #expect(output.contains("\(spec.key) (\(spec.env[0]))"), "\(spec.key) not named: \(output)") }

        let (flagStatus, flagOutput) = try await Self.refusedStart(["--databaseAdapter", "./my-adapter.js"], [:])
        #expect(flagStatus == 2 && flagOutput.contains("databaseAdapter (--databaseAdapter)"), "\(flagOutput)")

        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("config.json")
        try Data(#"{"appId":"a","masterKey":"cfg-master-key","middleware":"./my-middleware.js"}"#.utf8).write(to: file)
        let (fileStatus, fileOutput) = try await Self.refusedStart(["--config", file.path], [:])
        #expect(fileStatus == 2 && fileOutput.contains("middleware (config file key middleware)"), "\(fileOutput)")

        for (arguments, environment, name) in [
            ([], ["PARSE_SERVER_REQUEST_KEYWORD_DENYLIST": "{not json"], "PARSE_SERVER_REQUEST_KEYWORD_DENYLIST"),
            (["--requestKeywordDenylist", #"{"key":"a"}"#], [:], "PARSE_SERVER_REQUEST_KEYWORD_DENYLIST"),
            ([], ["PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS": "[1,2"], "PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS"),
            ([], ["PARSE_SERVER_EMAIL_VERIFY_SUCCESS_ON_INVALID_EMAIL": "perhaps"], "PARSE_SERVER_EMAIL_VERIFY_SUCCESS_ON_INVALID_EMAIL"),
            (["--enforcePrivateUsers=perhaps"], [:], "PARSE_SERVER_ENFORCE_PRIVATE_USERS"),
            (["--appId"], [:], "--appId needs a value"),
            ([], ["PARSLEY_ESTIMATED_COUNT_THRESHOLD": "-1"], "PARSLEY_ESTIMATED_COUNT_THRESHOLD"),
            ([], ["PARSLEY_ESTIMATED_COUNT_THRESHOLD": "lots"], "PARSLEY_ESTIMATED_COUNT_THRESHOLD"),
        ] as [([String], [String: String], String)] {
            let (code, text) = try await Self.refusedStart(arguments, environment)
            #expect(code == 2 && text.contains(name), "\(arguments) \(environment): \(code) \(text)")
        }
    }
}
