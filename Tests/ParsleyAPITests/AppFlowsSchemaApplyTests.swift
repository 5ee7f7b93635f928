import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// `parsley schema apply`: the executable, directly on a database and against a running server; all five schema
/// files together; bad files refused whole with a message naming the file, class and field.
@Suite("App flows: parsley schema apply", .serialized)
struct AppFlowsSchemaApplyTests {
    struct Run {
        let status: Int32
        let output: String
    }

    /// Runs `parsley <arguments>` to completion with only the given PARSE_SERVER_* / PARSLEY_* variables.
    static func parsley(_ arguments: [String], _ environment: [String: String]) async throws -> Run {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARSE_SERVER_") && !$0.key.hasPrefix("PARSLEY_") }
        for (k, v) in environment { env[k] = v }
        let (status, output) = try await ChildProcess.run(ProcessTests.binary.path, arguments, environment: env)
        return Run(status: status, output: output)
    }

    static func write(_ dir: URL, _ name: String, _ json: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try json.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("on PostgreSQL with serve's own flag (--database-uri): the classes are created there and a node on it serves them")
    func directPostgres() async throws {
        try #require(Backend.all.contains(.postgres), "PostgreSQL is not available")
        try await PostgresCluster.shared.withFreshDatabase { url in
            let dir = try ProcessTests.tempDir()
            defer { try? FileManager.default.removeItem(at: dir) }
            let journal = ParseClient.schemasDir.appendingPathComponent("journal.json").path
            let first = try await Self.parsley(["schema", "apply", "--database-uri", url, "--data-dir", dir.path, journal], [:])
            #expect(first.status == 0, "\(first.output)")
            #expect(first.output.contains("Entry: created with 8 fields, 1 index"), "\(first.output)")
            let node = try await PostgresProcessTests.node(url, dataDir: dir)
            defer { node.kill() }
            try await ProcessTests.client(node.port, PostgresProcessTests.key) { p in
                let entry = try await p.request(.get, "/schemas/Entry")
                #expect(entry["fields"]?["mood"] == ["type": "Number", "required": true])
            }
        }
    }

    @Test("directly on the database: --all creates every app's classes, a second run changes nothing, serve sees them")
    func direct() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["PARSLEY_DATA_DIR": dir.path]
        let schemas = ParseClient.schemasDir.path
        let first = try await Self.parsley(["schema", "apply", "--all", "--schemas-dir", schemas], env)
        #expect(first.status == 0, "\(first.output)")
        for line in [
            "Entry: created with 8 fields, 1 index", "Message: created", "Glimp: created", "Challenge: created", "Exchange: created", "_User: +phone",
        ] {
            #expect(first.output.contains(line), "\(line) in \(first.output)")
        }
        let second = try await Self.parsley(["schema", "apply", "--all", "--schemas-dir", schemas], env)
        #expect(second.status == 0)
        #expect(!second.output.contains("created") && !second.output.contains("+"), "\(second.output)")
        #expect(second.output.contains("Entry: unchanged"))
        // The server on that database has the classes, their options and permissions.
        let server = try ProcessTests.Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": "apply-master-key"])
        try await server.waitUntilHealthy()
        try await ProcessTests.client(server.port, "apply-master-key") { p in
            let entry = try await p.request(.get, "/schemas/Entry")
            #expect(entry["fields"]?["mood"] == ["type": "Number", "required": true])
            #expect(entry["classLevelPermissions"]?["readUserFields"] == ["user"])
            let user = try await p.request(.get, "/schemas/_User")
            for field in ["phone", "friendIds", "profilePicture", "profileImage", "rating", "first_name", "friends", "image"] {
                #expect(user["fields"]?[field] != nil, "_User.\(field)")
            }
            let missing = try await p.create("Entry", ["mood": 3])
            #expect(missing.code == 142)
        }
        server.kill()
    }

    @Test("bad files are refused whole, naming file, class and field; nothing is half-applied")
    func badFiles() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["PARSLEY_DATA_DIR": dir.path]
        let journal = ParseClient.schemasDir.appendingPathComponent("journal.json").path
        #expect(try await Self.parsley(["schema", "apply", journal], env).status == 0)
        let cases: [(String, String, String)] = [
            (
                "type.json",
                #"{"classes":[{"className":"Fine","fields":{"a":{"type":"String"}}},{"className":"Bad","fields":{"n":{"type":"Int16"}}}]}"#,
                "type.json: class Bad, field n: unknown type Int16"
            ),
            (
                "name.json", #"{"classes":[{"className":"Fine","fields":{}},{"className":"_Secret","fields":{}}]}"#,
                "name.json: class _Secret: Parse forbids this class name"
            ),
            ("dash.json", #"{"classes":[{"className":"my-class"}]}"#, "dash.json: class my-class: Parse forbids this class name"),
            (
                "clash.json", #"{"classes":[{"className":"Fine","fields":{}},{"className":"Entry","fields":{"mood":{"type":"String"}}}]}"#,
                "clash.json: class Entry, field mood: the database has it as Number but the file says String"
            ),
            (
                "target.json", #"{"classes":[{"className":"Fine","fields":{"p":{"type":"Pointer","targetClass":"Nowhere"}}}]}"#,
                "target.json: class Fine, field p: targetClass Nowhere is neither a class of this file nor a system class"
            ),
            (
                "default.json", #"{"classes":[{"className":"Fine","fields":{"n":{"type":"Number","defaultValue":"x"}}}]}"#,
                "default.json: class Fine, field n: schema mismatch for Fine.n default value; expected Number but got String"
            ),
            (
                "geo.json", #"{"classes":[{"className":"Fine","fields":{"a":{"type":"GeoPoint"},"b":{"type":"GeoPoint"}}}]}"#,
                "geo.json: class Fine: currently, only one GeoPoint field may exist in an object."
            ),
            (
                "clp.json", #"{"classes":[{"className":"Fine","fields":{"t":{"type":"String"}},"classLevelPermissions":{"readUserFields":["t"]}}]}"#,
                "clp.json: class Fine: 't' is not a valid column for class level pointer permissions readUserFields"
            ),
            ("json.json", #"{"classes":[{"className":"Fine""#, "json.json: not valid JSON"),
        ]
        for (name, text, message) in cases {
            let path = try Self.write(dir, name, text)
            let run = try await Self.parsley(["schema", "apply", path], env)
            #expect(run.status == 1, "\(name): \(run.output)")
            #expect(run.output.contains(message), "\(name): \(run.output)")
        }
        // None of the good classes before the bad ones exists: a dry run would still create Fine.
        let fine = try Self.write(dir, "fine.json", #"{"classes":[{"className":"Fine","fields":{"a":{"type":"String"}}}]}"#)
        let dry = try await Self.parsley(["schema", "apply", "--dry-run", fine], env)
        #expect(dry.output.contains("Fine: created with 1 field (not applied: dry run)"), "\(dry.output)")
    }

    @Test("against a running server through /schemas with the master key; idempotent; a wrong key is refused")
    func overHTTP() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "http-apply-master-key"
        let server = try ProcessTests.Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": key])
        try await server.waitUntilHealthy()
        let env = [
            "PARSE_SERVER_URL": "http://127.0.0.1:\(server.port)/parse", "PARSE_SERVER_APPLICATION_ID": "proc-app",
            "PARSE_SERVER_MASTER_KEY": key,
        ]
        let file = ParseClient.schemasDir.appendingPathComponent("social-fitness.json").path
        let first = try await Self.parsley(["schema", "apply", file], env)
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("Post: created") && first.output.contains("applied to http://127.0.0.1"))
        let second = try await Self.parsley(["schema", "apply", file], env)
        #expect(second.output.contains("Post: unchanged") && second.output.contains("_User: unchanged"), "\(second.output)")
        try await ProcessTests.client(server.port, key) { p in
            let post = try await p.request(.get, "/schemas/Post")
            #expect(post["fields"]?["likes"] == ["type": "Array", "defaultValue": []])
        }
        // A migration: the file gains a field and an index; only they are sent.
        let grown = try String(contentsOfFile: file, encoding: .utf8)
            .replacingOccurrences(of: #""time": {"type": "Number"},"#, with: #""time": {"type": "Number"}, "distance": {"type": "Number"},"#)
        let grownPath = try Self.write(dir, "grown.json", grown)
        let migrated = try await Self.parsley(["schema", "apply", grownPath], env)
        #expect(migrated.output.contains("Post: +distance"), "\(migrated.output)")
        var wrong = env
        wrong["PARSE_SERVER_MASTER_KEY"] = "not-the-key"
        let refused = try await Self.parsley(["schema", "apply", file], wrong)
        #expect(refused.status == 1)
        #expect(refused.output.contains("answered 403"), "\(refused.output)")
        server.kill()
    }
}

extension AppFlowsSchemaApplyTests {
    @Test("the curl scripts in examples/ pass against a server loaded with parsley schema apply --all")
    func examples() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let repo = ParseClient.schemasDir.deletingLastPathComponent()
        let key = "examples-master-key"
        let load = try await Self.parsley(["schema", "apply", "--all", "--schemas-dir", ParseClient.schemasDir.path], ["PARSLEY_DATA_DIR": dir.path])
        #expect(load.status == 0, "\(load.output)")
        let server = try ProcessTests.Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": key])
        try await server.waitUntilHealthy()
        defer { server.kill() }
        for app in ["journal", "dating", "swapit", "glimp", "social-fitness"] {
            var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARSE_SERVER_") }
            env["PARSE_SERVER_URL"] = "http://127.0.0.1:\(server.port)/parse"
            env["PARSE_SERVER_APPLICATION_ID"] = "proc-app"
            env["PARSE_SERVER_MASTER_KEY"] = key
            let (status, text) = try await ChildProcess.run(
                "/usr/bin/env", ["bash", repo.appendingPathComponent("examples/\(app).sh").path], environment: env, directory: dir)
            #expect(status == 0, "examples/\(app).sh (needs curl and jq):\n\(text)")
            #expect(text.contains("\(app): all flows passed"))
        }
    }
}

@Suite("App flows: all schemas together")
struct AppFlowsAllSchemasTests {
    @Test("the five files load into one database and re-apply to nothing", arguments: Backend.all)
    func allFive(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let files = ["dating.json", "glimp.json", "journal.json", "social-fitness.json", "swapit.json"]
            for f in files { try await p.applySchema(f) }
            for f in files {
                let again = try await p.applySchema(f)
                #expect(again.steps.isEmpty, "\(f): \(again.steps.map(\.summary))")
            }
            let list = try await p.request(.get, "/schemas")
            let names = Set(list.results.compactMap { $0["className"]?.stringValue })
            for c in [
                "Entry", "Question", "Profile", "Swipe", "Match", "Message", "Block", "Exchange", "ExchangeMessage", "CurrencyRate",
                "FriendRequest", "Glimp", "Post", "Challenge", "Category",
            ] {
                #expect(names.contains(c), "\(c)")
            }
        }
    }
}
