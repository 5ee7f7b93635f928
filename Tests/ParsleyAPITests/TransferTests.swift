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
import ParsleyStorage
import Testing

/// `parsley export` / `parsley import` (TransferExporter / TransferImporter): a database with every Parse type,
/// ACLs, users with passwords, sessions, roles, relations, schemas with CLP and indexes, /config and files goes
/// through an export and an import and comes back identical.
@Suite("Export and import")
struct TransferTests {
    @Test("SQLite → SQLite: objects, schemas, relations, files, passwords and sessions survive")
    func sqliteRoundTrip() async throws {
        try await TransferHarness.roundTrip(through: [.sqlite])
    }

    @Test("SQLite → PostgreSQL → SQLite: nothing is lost on the way", .enabled(if: Backend.all.contains(.postgres)))
    func postgresRoundTrip() async throws {
        try await TransferHarness.roundTrip(through: [.postgres, .sqlite])
    }

    @Test("an import refuses a database with objects (unless forced) and a truncated export")
    func refusals() async throws {
        try await TestDatabase.with(.sqlite, logger: TestDatabase.logger) { source in
            let lines = try await TransferHarness.serve(source, adapter: .filesystem) { p, api in
                _ = try await TransferHarness.populate(p)
                return try await TransferHarness.export(api)
            }
            try await TestDatabase.with(.sqlite, logger: TestDatabase.logger) { target in
                let error = await #expect(throws: TransferError.self) {
                    _ = try await TransferHarness.serve(target, adapter: .filesystem, importing: Array(lines.dropLast())) { _, _ in }
                }
                #expect(error?.description.contains("truncated") == true)
                // What came before the missing end line is there: importing again needs --force, which overwrites.
                let again = await #expect(throws: TransferError.self) {
                    _ = try await TransferHarness.serve(target, adapter: .filesystem, importing: lines) { _, _ in }
                }
                #expect(again?.description.contains("not empty") == true)
                let forced = try await TransferHarness.serve(target, adapter: .filesystem, importing: lines, force: true) { _, api in
                    try await TransferHarness.export(api)
                }
                #expect(forced == lines)
            }
            try await TestDatabase.with(.sqlite, logger: TestDatabase.logger) { target in
                let bad = await #expect(throws: TransferError.self) {
                    _ = try await TransferHarness.serve(target, adapter: .filesystem, importing: ["{\"hello\":1}"] + lines) { _, _ in }
                }
                #expect(bad?.description.contains("not a Parsley export") == true)
            }
        }
    }
}

/// Collects the lines of an export.
actor TransferLines {
    var all: [String] = []
    func append(_ line: String) { all.append(line) }
}

/// What `populate` created.
struct TransferFixture: Sendable {
    var alice: (id: String, token: String)
    var bob: (id: String, token: String)
    var thing: String
    var roleOnly: String
    var role: String
    var fileName: String
    var bigFileName: String
}

enum TransferHarness {
    static let fileText = "hello, transfer"
    /// Past one 768 KiB chunk: the export spreads it over a `file` line and `fileData` lines.
    static let bigFileText = String(repeating: "0123456789abcdef", count: 110_000)

    static func options(_ db: TestDatabase, adapter: FilesAdapter) -> ParseServerOptions {
        TestServer.options {
            $0.files.adapter = adapter
            $0.files.directory = db.directory.appendingPathComponent("files").path
        }
    }

    /// Serves `db` (after importing `lines` into it, when given) and runs `body` against the live server.
    static func serve<T: Sendable>(
        _ db: TestDatabase, adapter: FilesAdapter, importing lines: [String]? = nil, force: Bool = false,
        _ body: @escaping @Sendable (ParseClient, ParseAPI) async throws -> T
    ) async throws -> T {
        let options = options(db, adapter: adapter)
        let api = ParseAPI(services: try await ParseServices.open(options: options, database: db.database, adapters: .standard))
        if let lines {
            var importer = TransferImporter(
                store: api.services.store, schemas: api.schemas, files: api.services.files.store, force: force)
            importer.batchSize = 3
            var iterator = lines.makeIterator()
            let summary = try await importer.run { iterator.next() }
            #expect(summary.files == 2)
        }
        let app = ParsleyApplication.application(api: api, host: "127.0.0.1", port: 0, logger: TestDatabase.logger)
        return try await app.test(.live) { client in
            var parse = ParseClient(client: client, options: options)
            parse.backend = db.backend
            return try await body(parse, api)
        }
    }

    static func export(_ api: ParseAPI) async throws -> [String] {
        let lines = TransferLines()
        var exporter = TransferExporter(store: api.services.store, files: api.services.files.store)
        exporter.pageSize = 2  // several pages per class
        let summary = try await exporter.export { await lines.append($0) }
        #expect(summary.files == 2)
        return await lines.all
    }

    static func pointer(_ className: String, _ id: String) -> JSONValue {
        ["__type": "Pointer", "className": .string(className), "objectId": .string(id)]
    }

    /// Every Parse type, ACLs, two users, a role with a user, relations, a file, a schema with CLP, field
    /// options and an index, and /config parameters.
    static func populate(_ p: ParseClient) async throws -> TransferFixture {
        let alice = try await p.signUp("alice", "alice-secret", extra: ["email": "alice@example.com"])
        let bob = try await p.signUp("bob", "bob-secret")
        var fileHeaders = p.headers(master: true)
        fileHeaders[.contentType] = "text/plain"
        let upload = try await p.raw(.post, "/parse/files/hello.txt", body: fileText, headers: fileHeaders)
        let fileName = try #require(upload["name"]?.stringValue, "upload: \(upload.status) \(upload.json)")
        let bigUpload = try await p.raw(.post, "/parse/files/big.txt", body: bigFileText, headers: fileHeaders)
        let bigFileName = try #require(bigUpload["name"]?.stringValue, "upload: \(bigUpload.status) \(bigUpload.json)")
        let schema = try await p.request(
            .post, "/schemas/Thing",
            [
                "className": "Thing",
                "fields": ["name": ["type": "String", "required": false, "defaultValue": "unnamed"], "count": ["type": "Number"]],
                "classLevelPermissions": [
                    "find": ["*": true], "get": ["*": true], "count": ["*": true], "create": ["*": true], "update": ["*": true],
                    "delete": ["requiresAuthentication": true], "addField": ["*": true], "protectedFields": ["*": []],
                ],
                "indexes": ["name_count": ["name": 1, "count": -1]],
            ])
        #expect(schema.status == 200, "\(schema.json)")
        let role = try await p.request(
            .post, "/roles",
            ["name": "admins", "ACL": ["*": ["read": true]], "users": ["__op": "AddRelation", "objects": [pointer("_User", alice.id)]]])
        let roleId = try #require(role["objectId"]?.stringValue, "role: \(role.status) \(role.json)")
        let thing = try await p.createId(
            "Thing",
            [
                "name": "first", "count": 42, "ratio": 2.5, "flag": true, "big": 9_007_199_254_740_991, "text": "line\nbreak \"quoted\" ünï",
                "when": ["__type": "Date", "iso": "2024-05-06T07:08:09.123Z"],
                "meta": ["a": 1, "nested": ["b": [1, 2.25, "x", nil, true]]],
                "tags": ["a", 1, ["k": "v"]],
                "owner": pointer("_User", alice.id),
                "place": ["__type": "GeoPoint", "latitude": 52.5, "longitude": 13.4],
                "blob": ["__type": "Bytes", "base64": "AAECAw=="],
                "attachment": ["__type": "File", "name": .string(fileName)],
                "area": ["__type": "Polygon", "coordinates": [[0, 0], [0, 1], [1, 1], [1, 0]]],
                "ACL": .object([alice.id: ["read": true, "write": true], "role:admins": ["read": true]]),
                "friends": ["__op": "AddRelation", "objects": [pointer("_User", bob.id), pointer("_User", alice.id)]],
            ])
        let roleOnly = try await p.createId("Thing", ["name": "admins only", "ACL": ["role:admins": ["read": true]]])
        // A file referred to from inside an array is exported too.
        let plain = try await p.createId("Thing", ["count": 1, "docs": [["__type": "File", "name": .string(bigFileName)]]])
        #expect(try await p.update("Thing", plain, ["count": ["__op": "Increment", "amount": 2]]).status == 200)
        for i in 0..<5 { _ = try await p.createId("Item", ["n": .int(Int64(i)), "thing": pointer("Thing", thing)]) }
        let config = try await p.request(.put, "/config", ["params": ["motd": "hello", "limit": 3], "masterKeyOnly": ["limit": true]])
        #expect(config.status == 200)
        return TransferFixture(alice: alice, bob: bob, thing: thing, roleOnly: roleOnly, role: roleId, fileName: fileName, bigFileName: bigFileName)
    }

    /// Every object of every class as the master key sees it (sorted by objectId; file URLs, which name the
    /// server's port, left out), and the schemas.
    static func snapshot(_ p: ParseClient) async throws -> [String: JSONValue] {
        let schemas = try await p.request(.get, "/schemas")
        var all: [String: JSONValue] = [
            "/schemas": .array(schemas.results.sorted { ($0["className"]?.stringValue ?? "") < ($1["className"]?.stringValue ?? "") })
        ]
        for schema in schemas.results {
            let name = try #require(schema["className"]?.stringValue)
            let r = try await p.find(name, ["limit": "1000"])
            #expect(r.status == 200, "\(name): \(r.json)")
            let objects = r.results.map(withoutURLs).sorted { ($0["objectId"]?.stringValue ?? "") < ($1["objectId"]?.stringValue ?? "") }
            all[name] = .array(objects)
        }
        return all
    }

    static func withoutURLs(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(var o):
            if o["__type"] == "File" { o["url"] = nil }
            return .object(o.mapValues(withoutURLs))
        case .array(let a): return .array(a.map(withoutURLs))
        default: return value
        }
    }

    /// Populates a SQLite database, exports it, and imports the export through each backend in turn (each
    /// stage exporting for the next); every stage must show the same objects and behave the same.
    static func roundTrip(through backends: [Backend]) async throws {
        try await TestDatabase.with(.sqlite, logger: TestDatabase.logger) { source in
            let (lines, expected, fixture) = try await serve(source, adapter: .filesystem) { p, api in
                let fixture = try await populate(p)
                return (try await export(api), try await snapshot(p), fixture)
            }
            #expect(lines.first == #"{"parsley":"export","version":1}"#)
            #expect(lines.last?.hasPrefix(#"{"end":true,"files":2,"objects":"#) == true)
            // Internal fields travel: password hashes (so users can log in) and session tokens.
            #expect(lines.contains { $0.contains(#""_hashed_password":"$2"#) })
            #expect(lines.filter { $0.hasPrefix(#"{"fileData":"#) }.count == 2)
            var current = lines
            for backend in backends {
                let input = current
                current = try await TestDatabase.with(backend, logger: TestDatabase.logger) { db in
                    // Files in the database's tables on PostgreSQL, in a folder on SQLite.
                    try await serve(db, adapter: backend == .postgres ? .database : .filesystem, importing: input) { p, api in
                        let snapshot = try await snapshot(p)
                        for (name, value) in expected.sorted(by: { $0.key < $1.key }) {
                            #expect(snapshot[name] == value, "\(backend): \(name) differs")
                        }
                        #expect(snapshot.keys.sorted() == expected.keys.sorted())
                        let exported = try await export(api)
                        // Same lines; the order of classes and ids follows the database's collation.
                        #expect(exported.sorted() == lines.sorted(), "\(backend): the export differs")
                        try await checkBehaviour(p, fixture)
                        // The index of the schema exists in the database, not only in the schema JSON.
                        let indexQuery: SQLFragment =
                            backend == .postgres
                            ? "SELECT indexname FROM pg_indexes WHERE indexname = 'Thing_name_count'"
                            : "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'Thing_name_count'"
                        #expect(try await api.services.store.database.read { try await $0.query(indexQuery) }.count == 1)
                        return exported
                    }
                }
            }
            #expect(current == lines)
        }
    }

    /// Passwords, sessions, roles, relations, ACLs, files and /config work on the imported database.
    static func checkBehaviour(_ p: ParseClient, _ f: TransferFixture) async throws {
        let login = try await p.request(.get, "/login?username=alice&password=alice-secret", master: false)
        #expect(login.status == 200, "\(login.json)")
        let token = try #require(login["sessionToken"]?.stringValue)
        #expect(try await p.request(.get, "/login?username=bob&password=wrong", master: false).code == 101)
        // Sessions were carried over: the old token still works.
        let me = try await p.asUser(f.alice.token, .get, "/users/me")
        #expect(me.status == 200 && me["objectId"]?.stringValue == f.alice.id)
        // ACL through the role: alice (an admin) reads both objects, bob neither.
        #expect(try await p.asUser(token, .get, "/classes/Thing/\(f.thing)").status == 200)
        #expect(try await p.asUser(token, .get, "/classes/Thing/\(f.roleOnly)").status == 200)
        #expect(try await p.asUser(f.bob.token, .get, "/classes/Thing/\(f.thing)").status == 404)
        #expect(try await p.asUser(f.bob.token, .get, "/classes/Thing/\(f.roleOnly)").status == 404)
        // Relations.
        let friends = try await p.ids("_User", where: ["$relatedTo": ["object": pointer("Thing", f.thing), "key": "friends"]])
        #expect(friends == [f.alice.id, f.bob.id].sorted())
        let admins = try await p.ids("_User", where: ["$relatedTo": ["object": pointer("_Role", f.role), "key": "users"]])
        #expect(admins == [f.alice.id])
        // Unique indexes were made again: a second alice (any case) is refused.
        let duplicate = try await p.request(.post, "/users", ["username": "ALICE", "password": "x"], master: false)
        #expect(duplicate.code == 202)
        // The file's bytes.
        let file = try await p.raw(.get, "/parse/files/\(TestServer.appId)/\(f.fileName)", headers: p.headers(master: false))
        #expect(file.status == 200 && file.json == .string(fileText))
        let big = try await p.raw(.get, "/parse/files/\(TestServer.appId)/\(f.bigFileName)", headers: p.headers(master: false))
        #expect(big.status == 200 && big.json == .string(bigFileText))
        // /config, master-only flags included.
        let config = try await p.request(.get, "/config")
        #expect(config["params"] == ["motd": "hello", "limit": 3])
        #expect(config["masterKeyOnly"] == ["limit": true, "motd": false])
    }
}
