import Foundation
import HTTPTypes
import ParsleyCore
import Testing

/// Parse Server's `collectionPrefix`, `schema`, `maintenanceKey`/`maintenanceKeyIps` and `logLevels` through the
/// `parsley` executable, set as an existing Parse Server deployment sets them (environment and config.json), on
/// SQLite and PostgreSQL.
@Suite("Options: collectionPrefix, schema, maintenanceKey, logLevels (process)")
struct AppOptionsProcessTests {
    static let key = "app-options-master-key"

    /// A database URI of `backend` (a fresh SQLite file or a fresh PostgreSQL database) and a folder for the test.
    static func withDatabase(_ backend: Backend, _ body: @escaping @Sendable (String, URL) async throws -> Void) async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        switch backend {
        case .sqlite: try await body("sqlite:" + dir.appendingPathComponent("shared.sqlite").path, dir)
        case .postgres: try await PostgresCluster.shared.withFreshDatabase { url in try await body(url, dir) }
        }
    }

    /// A `parsley` process on `uri` with its own data folder, healthy.
    static func start(_ uri: String, _ dir: URL, _ name: String, _ environment: [String: String] = [:]) async throws -> ProcessTests.Server {
        let data = dir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        var env = ["PARSE_SERVER_DATABASE_URI": uri, "PARSE_SERVER_MASTER_KEY": key, "PARSLEY_DATABASE_POOL_SIZE": "4"]
        for (k, v) in environment { env[k] = v }
        let server = try ProcessTests.Server(dataDir: data, environment: env)
        do {
            try await server.waitUntilHealthy()
        } catch {
            server.kill()
            throw error
        }
        return server
    }

    static func signUp(_ p: ParseClient, _ name: String) async throws -> Reply {
        try await p.request(.post, "/users", ["username": .string(name), "password": .string("pw-\(name)")], master: false)
    }

    @Test(
        "collectionPrefix: two apps with prefixes a_ and b_ on one database see none of each other's objects, schemas, users, sessions",
        arguments: Backend.all)
    func collectionPrefix(_ backend: Backend) async throws {
        try await Self.withDatabase(backend) { uri, dir in
            let a = try await Self.start(uri, dir, "a", ["PARSE_SERVER_COLLECTION_PREFIX": "a_"])
            defer { a.kill() }
            let b = try await Self.start(uri, dir, "b", ["PARSE_SERVER_COLLECTION_PREFIX": "b_"])
            defer { b.kill() }
            try await ProcessTests.client(a.port, Self.key) { pa async throws in
                try await ProcessTests.client(b.port, Self.key) { pb async throws in
                    // Objects and their class.
                    let id = try await pa.createId("Item", ["name": "from a", "tags": .array(["x"])])
                    #expect(try await pa.find("Item").results.count == 1)
                    #expect(try await pb.find("Item").results.isEmpty)
                    #expect(try await pb.get("Item", id).code == 101)
                    // Schemas: a class created on A does not exist on B.
                    #expect(try await pa.request(.post, "/schemas/OnlyA", ["fields": ["n": ["type": "Number"]]]).status == 200)
                    let listed = try await pb.request(.get, "/schemas").results.compactMap { $0["className"]?.stringValue }
                    #expect(!listed.contains("OnlyA") && !listed.contains("Item"), "\(listed)")
                    #expect(try await pb.request(.get, "/schemas/OnlyA").code == 103)
                    // B may make a class of the same name with another type for the same field.
                    #expect(try await pb.createId("Item", ["name": 7]).isEmpty == false)
                    #expect(try await pa.find("Item").results.count == 1)
                    // Users and sessions.
                    let ann = try await Self.signUp(pa, "ann")
                    #expect(ann.status == 201, "\(ann.json)")
                    let token = try #require(ann["sessionToken"]?.stringValue)
                    #expect(try await pb.asUser(token, .get, "/users/me").code == 209)
                    #expect(try await pb.request(.post, "/login", ["username": "ann", "password": "pw-ann"], master: false).code == 101)
                    #expect(try await Self.signUp(pb, "ann").status == 201)
                    #expect(try await pa.asUser(token, .get, "/users/me").status == 200)
                    #expect(try await pa.find("_User").results.count == 1)
                    #expect(try await pb.find("_User").results.count == 1)
                    #expect(try await pa.find("_Session").results.count == 1)
                    // Relations live in join tables of their own too.
                    let roleA = try await pa.request(
                        .post, "/roles",
                        [
                            "name": "admins", "ACL": ["*": ["read": true]],
                            "users": [
                                "__op": "AddRelation",
                                "objects": [["__type": "Pointer", "className": "_User", "objectId": ann["objectId"] ?? .null]],
                            ],
                        ])
                    #expect(roleA.status == 201, "\(roleA.json)")
                    #expect(try await pb.find("_Role").results.isEmpty)
                    #expect(try await pb.request(.post, "/roles", ["name": "admins", "ACL": ["*": ["read": true]]]).status == 201)
                }
            }
            // The tables carry the prefix: a server without one sees an empty app.
            let plain = try await Self.start(uri, dir, "plain")
            defer { plain.kill() }
            try await ProcessTests.client(plain.port, Self.key) { p async throws in
                #expect(try await p.find("Item").results.isEmpty)
                #expect(try await p.find("_User").results.isEmpty)
            }
        }
    }

    @Test("collectionPrefix: only letters, digits and _ (the start stops naming the option, not its value)")
    func collectionPrefixChecked() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ProcessTests.Server(
            dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": Self.key, "PARSE_SERVER_COLLECTION_PREFIX": "bad\"prefix;"])
        await server.process.exited()
        #expect(server.outputText().contains("PARSE_SERVER_COLLECTION_PREFIX"))
        #expect(!server.outputText().contains("bad\"prefix;"))
    }

    static let definitions: JSONValue = [
        [
            "className": "Game",
            "fields": [
                "objectId": ["type": "String"], "score": ["type": "Number"], "name": ["type": "String", "required": true],
                "owner": ["type": "Pointer", "targetClass": "_User"], "legacy": ["type": "Pointer", "targetClass": "Legacy"],
            ],
            "indexes": ["score_1": ["score": 1]],
            "classLevelPermissions": [
                "find": ["*": true], "get": ["*": true], "count": ["*": true], "create": ["*": true], "update": ["*": true], "delete": [:],
            ],
        ],
        ["className": "Locked", "fields": ["secret": ["type": "String"]]],
    ]

    static func schema(_ p: ParseClient, _ className: String) async throws -> JSONValue {
        try await p.request(.get, "/schemas/\(className)").json
    }

    @Test(
        "schema: definitions applied at start (config.json), lockSchemas, addField closed, deleteExtraFields and recreateModifiedFields on a restart, idempotent",
        arguments: Backend.all)
    func definedSchemas(_ backend: Backend) async throws {
        try await Self.withDatabase(backend) { uri, dir in
            // An existing class the definitions leave out: kept (strict only warns), its addField closed.
            let first = try await Self.start(uri, dir, "first")
            defer { first.kill() }
            try await ProcessTests.client(first.port, Self.key) { p async throws in
                _ = try await p.createId("Legacy", ["note": "kept"])
            }
            await first.stop()

            let config = dir.appendingPathComponent("config.json")
            let schemaOption: JSONValue = ["definitions": Self.definitions, "lockSchemas": true, "strict": true]
            try Data(JSONWriter.string(["schema": schemaOption]).utf8).write(to: config)
            let server = try await Self.start(uri, dir, "defined", ["PARSE_SERVER_CONFIG": config.path])
            defer { server.kill() }
            try await ProcessTests.client(server.port, Self.key) { p async throws in
                let game = try await Self.schema(p, "Game")
                #expect(game["fields"]?["score"]?["type"] == "Number", "\(game)")
                #expect(game["fields"]?["name"]?["required"] == true, "\(game)")
                #expect(game["fields"]?["owner"]?["targetClass"] == "_User")
                #expect(game["fields"]?["legacy"]?["targetClass"] == "Legacy", "a class the definitions do not describe")
                #expect(game["indexes"]?["score_1"] != nil, "\(game)")
                #expect(game["classLevelPermissions"]?["addField"] == .object([:]), "\(game)")
                #expect(game["classLevelPermissions"]?["find"]?["*"] == true)
                // No permissions given: master key only (as Parse Server).
                let locked = try await Self.schema(p, "Locked")
                #expect(locked["classLevelPermissions"]?["find"] == .object([:]), "\(locked)")
                #expect(try await p.find("Locked", master: false).code == 119)
                // Classes left out keep their permissions, with addField closed.
                let legacy = try await Self.schema(p, "Legacy")
                #expect(legacy["classLevelPermissions"]?["addField"] == .object([:]), "\(legacy)")
                #expect(legacy["classLevelPermissions"]?["find"]?["*"] == true, "\(legacy)")
                #expect(try await p.find("Legacy").results.count == 1)
                // lockSchemas: the schema API cannot create or change classes, even with the master key.
                let created = try await p.request(.post, "/schemas/Other", ["fields": ["a": ["type": "String"]]])
                #expect(created.status == 400 && created.code == 119, "\(created.json)")
                #expect(created["error"] == "Cannot perform this operation when schemas options is used.")
                let changed = try await p.request(.put, "/schemas/Game", ["fields": ["b": ["type": "String"]]])
                #expect(changed.code == 119, "\(changed.json)")
                // Clients cannot add fields; the defined ones work.
                #expect(try await p.createCode("Game", ["score": 1, "name": "ok"], master: false) == nil)
                #expect(try await p.createCode("Game", ["score": 2], master: false) == 142)
                #expect(try await p.createCode("Game", ["score": 1, "name": "x", "extra": true], master: false) == 119)
                #expect(try await p.createCode("Legacy", ["other": 1], master: false) == 119)
            }
            #expect(server.outputText().contains("not explicitly defined in a schema: \"Legacy\""), "\(server.outputText())")
            await server.stop()

            // The same definitions again: nothing to change, the start is quiet and the schema the same.
            let again = try await Self.start(uri, dir, "again", ["PARSE_SERVER_CONFIG": config.path])
            defer { again.kill() }
            try await ProcessTests.client(again.port, Self.key) { p async throws in
                #expect(try await Self.schema(p, "Game")["fields"]?["name"] != nil)
            }
            #expect(!again.outputText().contains("schema: Game"), "\(again.outputText())")
            await again.stop()

            // Changed definitions with deleteExtraFields and recreateModifiedFields (environment variable).
            let changed: JSONValue = [
                "definitions": [
                    [
                        "className": "Game", "fields": ["score": ["type": "String"], "level": ["type": "Number"]],
                        "classLevelPermissions": ["find": ["*": true]],
                    ]
                ],
                "deleteExtraFields": true, "recreateModifiedFields": true,
            ]
            let third = try await Self.start(uri, dir, "third", ["PARSE_SERVER_SCHEMA": JSONWriter.string(changed)])
            defer { third.kill() }
            try await ProcessTests.client(third.port, Self.key) { p async throws in
                let game = try await Self.schema(p, "Game")
                #expect(game["fields"]?["score"]?["type"] == "String", "\(game)")
                #expect(game["fields"]?["level"]?["type"] == "Number")
                #expect(game["fields"]?["name"] == nil && game["fields"]?["owner"] == nil, "\(game)")
                #expect(game["indexes"]?["score_1"] == nil, "\(game)")
                // Not locked now.
                #expect(try await p.request(.post, "/schemas/Other", ["fields": ["a": ["type": "String"]]]).status == 200)
            }
            await third.stop()
        }
    }

    @Test("schema: several nodes starting at once on one database apply the definitions once and agree", arguments: Backend.all)
    func definedSchemasTogether(_ backend: Backend) async throws {
        try await Self.withDatabase(backend) { uri, dir in
            let option = JSONWriter.string(["definitions": Self.definitions])
            let servers = try await withThrowingTaskGroup(of: ProcessTests.Server.self) { group in
                for i in 0..<3 { group.addTask { try await Self.start(uri, dir, "node\(i)", ["PARSE_SERVER_SCHEMA": option]) } }
                var all: [ProcessTests.Server] = []
                for try await s in group { all.append(s) }
                return all
            }
            defer { for s in servers { s.kill() } }
            for s in servers {
                try await ProcessTests.client(s.port, Self.key) { p async throws in
                    let game = try await Self.schema(p, "Game")
                    #expect(game["fields"]?["score"]?["type"] == "Number", "\(game)")
                    #expect(game["indexes"]?["score_1"] != nil)
                    #expect(try await p.createCode("Game", ["score": 1, "name": "n"], master: false) == nil)
                }
            }
        }
    }

    @Test("maintenanceKey: the master's rights on object routes from maintenanceKeyIps only; nothing on master-only routes", arguments: Backend.all)
    func maintenanceKey(_ backend: Backend) async throws {
        let maintenance = ["X-Parse-Maintenance-Key": "maintenance-key-123"]
        try await Self.withDatabase(backend) { uri, dir in
            let server = try await Self.start(uri, dir, "m", ["PARSE_SERVER_MAINTENANCE_KEY": "maintenance-key-123"])
            defer { server.kill() }
            try await ProcessTests.client(server.port, Self.key) { p async throws in
                let id = try await p.createId("Private", ["secret": "s", "ACL": [:]])
                #expect(try await p.get("Private", id, master: false).code == 101)
                let read = try await p.request(.get, "/classes/Private/\(id)", master: false, extra: maintenance)
                #expect(read.status == 200 && read["secret"] == "s", "\(read.json)")
                #expect(try await p.request(.get, "/classes/Private", master: false, extra: maintenance).results.count == 1)
                let updated = try await p.request(.put, "/classes/Private/\(id)", ["secret": "t"], master: false, extra: maintenance)
                #expect(updated.status == 200, "\(updated.json)")
                // Inside a batch too.
                let batch = try await p.request(
                    .post, "/batch", ["requests": [["method": "GET", "path": .string("/parse/classes/Private/\(id)")]]], master: false,
                    extra: maintenance)
                #expect(batch.json.arrayValue?.first?["success"]?["secret"] == "t", "\(batch.json)")
                // Master-only routes: 403.
                #expect(try await p.request(.get, "/schemas", master: false, extra: maintenance).status == 403)
                #expect(try await p.request(.put, "/config", ["params": ["a": 1]], master: false, extra: maintenance).status == 403)
                #expect(try await p.request(.get, "/hooks/functions", master: false, extra: maintenance).status == 403)
                #expect(try await p.request(.get, "/aggregate/Private", master: false, extra: maintenance).status == 403)
                // Elsewhere it is a request without keys: a session token it carries is not used either.
                let ann = try await Self.signUp(p, "ann")
                let token = try #require(ann["sessionToken"]?.stringValue)
                var withToken = maintenance
                withToken["X-Parse-Session-Token"] = token
                #expect(try await p.request(.get, "/users/me", master: false, extra: withToken).code == 209)
                // A wrong maintenance key is no key.
                #expect(try await p.request(.get, "/classes/Private/\(id)", master: false, extra: ["X-Parse-Maintenance-Key": "wrong"]).code == 101)
            }
            // From an address maintenanceKeyIps does not allow, the key is ignored (and logged).
            let elsewhere = try await Self.start(
                uri, dir, "n", ["PARSE_SERVER_MAINTENANCE_KEY": "maintenance-key-123", "PARSE_SERVER_MAINTENANCE_KEY_IPS": "10.1.2.3"])
            defer { elsewhere.kill() }
            try await ProcessTests.client(elsewhere.port, Self.key) { p async throws in
                let id = try #require(try await p.find("Private").results.first?["objectId"]?.stringValue)
                #expect(try await p.request(.get, "/classes/Private/\(id)", master: false, extra: maintenance).code == 101)
            }
            for _ in 0..<40 where !elsewhere.outputText().contains("maintenanceKeyIps") { try await Task.sleep(for: .milliseconds(50)) }
            #expect(elsewhere.outputText().contains("maintenanceKeyIps"))
            #expect(!elsewhere.outputText().contains("maintenance-key-123"))
        }
    }

    @Test("maintenanceKey must differ from the master key")
    func maintenanceKeyNotMaster() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ProcessTests.Server(
            dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": Self.key, "PARSE_SERVER_MAINTENANCE_KEY": Self.key])
        await server.process.exited()
        #expect(server.outputText().contains("PARSE_SERVER_MAINTENANCE_KEY"))
        #expect(!server.outputText().contains(Self.key))
    }

    @Test("logLevels: cloud function and trigger lines (webhooks) at the configured levels; silent turns one off", arguments: Backend.all)
    func logLevels(_ backend: Backend) async throws {
        try await WebhookReceiver.with { receiver in
            receiver.respond("/fn", .json(["success": "done"]))
            receiver.respond("/failing", .json(["code": 141, "error": "no"]))
            receiver.respond("/beforeSave", .json(["success": [:]]))
            try await Self.withDatabase(backend) { uri, dir in
                let levels = #"{"cloudFunctionSuccess":"warn","cloudFunctionError":"silent","triggerBeforeSuccess":"error"}"#
                let server = try await Self.start(
                    uri, dir, "l",
                    ["PARSE_SERVER_LOG_LEVELS": levels, "PARSE_SERVER_LOG_LEVELS_TRIGGER_AFTER": "silent", "PARSLEY_LOG_FORMAT": "json"])
                defer { server.kill() }
                try await ProcessTests.client(server.port, Self.key) { p async throws in
                    for (name, path) in [("fn", "/fn"), ("failing", "/failing")] {
                        let hook = try await p.request(
                            .post, "/hooks/functions", ["functionName": .string(name), "url": .string(receiver.url(path))])
                        #expect(hook.status == 200 || hook.status == 201, "\(hook.json)")
                    }
                    #expect(
                        try await p.request(
                            .post, "/hooks/triggers",
                            ["className": "Thing", "triggerName": "beforeSave", "url": .string(receiver.url("/beforeSave"))]
                        ).status < 300)
                    #expect(
                        try await p.request(
                            .post, "/hooks/triggers", ["className": "Thing", "triggerName": "afterSave", "url": .string(receiver.url("/beforeSave"))]
                        ).status < 300)
                    #expect(try await p.request(.post, "/functions/fn", [:], master: false).status == 200)
                    #expect(try await p.request(.post, "/functions/failing", [:], master: false).code == 141)
                    _ = try await p.createId("Thing", ["a": 0])
                    let created = try await p.create("Thing", ["a": 1], master: false)
                    #expect(created.status == 201, "\(created.json)")
                    _ = try await receiver.wait(for: "/beforeSave", count: 4)
                    try await Task.sleep(for: .milliseconds(300))
                }
                let lines = server.outputText().split(separator: "\n").map(String.init)
                let ran = lines.first { $0.contains("Ran cloud function fn for user undefined") }
                #expect(ran?.contains("\"warning\"") == true, "\(lines.suffix(20))")
                #expect(!lines.contains { $0.contains("Failed running cloud function failing") })
                let before = lines.first { $0.contains("beforeSave triggered for Thing") }
                #expect(before?.contains("\"error\"") == true, "\(lines.suffix(20))")
                #expect(!lines.contains { $0.contains("afterSave triggered for Thing") })
            }
        }
    }
}
