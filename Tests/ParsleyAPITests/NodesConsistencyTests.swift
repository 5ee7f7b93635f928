import Foundation
import Hummingbird
import HummingbirdTesting
import ParsleyAdapters
import ParsleyCore
@testable import ParsleyDomain
import ParsleyHTTP
import ParsleyPostgres
import ParsleyStorage
import Synchronization
import Testing

/// Two nodes on one PostgreSQL database where node B never hears the other's announcements (its cache listener
/// does not run): what node A changes must still be right on B, at once (a class or field B does not know is read
/// from the database) or within the bounds of `CacheTrust` (what B has cached: sessions, role membership, schemas).
/// PostgreSQL only by nature: a SQLite database is served by one process.
@Suite("Nodes: consistency without announcements", .serialized)
struct NodesConsistencyTests {
    /// Node A (the test server, which hears announcements) and node B on the same database, without B's background
    /// service, so nothing ever drops B's caches but B itself. `api` is node B's.
    static func withDeafNode(
        _ options: ParseServerOptions = TestServer.options(),
        _ body: @escaping @Sendable (_ a: ParseClient, _ b: ParseClient, _ api: ParseAPI) async throws -> Void
    ) async throws {
        try await TestServer.withAPI(backend: .postgres, options) { _, db, a in
            let url = try #require(db.url)
            let other = try await PostgresDatabase.open(url: url, poolSize: 4, logger: TestDatabase.logger)
            try await other.serving {
                let api = ParseAPI(services: try await ParseServices.open(options: options, database: other, adapters: .standard))
                let app = Application(
                    responder: ParsleyResponder(transport: ParseTransport(api: api), operations: .init()),
                    configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: TestDatabase.logger)
                try await app.test(.live) { client in
                    var b = ParseClient(client: client, options: options)
                    b.backend = .postgres
                    try await body(a, b, api)
                }
            }
        }
    }

    /// Asks `request` until `accept` holds, and requires it to hold for every request that started once `bound` has
    /// passed since `since` (the moment the change was acknowledged, so after its commit). Returns the last answer.
    static func within(
        _ bound: Duration, since: ContinuousClock.Instant, _ request: () async throws -> Reply, accept: (Reply) -> Bool
    ) async throws -> Reply {
        while true {
            let started = ContinuousClock.now
            let r = try await request()
            if accept(r) || started >= since + bound { return r }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test("a class created on node A: node B serves its objects, queries and permissions at once", .enabled(if: Backend.all.contains(.postgres)))
    func classCreatedElsewhere() async throws {
        try await Self.withDeafNode { a, b, apiB in
            let id = try await a.createId("Fresh", ["name": "made on A", "n": 1])
            #expect(apiB.services.schemas.schema("Fresh") == nil, "node B heard of the class without asking")
            let got = try await b.get("Fresh", id)
            #expect(got.status == 200 && got["name"] == "made on A", "\(got.json)")
            #expect(try await b.ids("Fresh", where: ["name": "made on A"]) == [id])
            #expect(try await b.update("Fresh", id, ["n": ["__op": "Increment", "amount": 1]]).status == 200)
            _ = try await a.createId("Tally", ["kind": "made on A"])
            let distinct = try await b.request(.get, "/aggregate/Tally?distinct=kind")
            #expect(distinct.results == ["made on A"], "\(distinct.json)")

            // A class whose permissions allow only the master key to create: B does not take it for an open class.
            let locked = try await a.request(
                .post, "/schemas/Locked",
                [
                    "className": "Locked", "fields": ["x": ["type": "Number"]],
                    "classLevelPermissions": ["create": [:], "find": ["*": true], "get": ["*": true]],
                ])
            #expect(locked.status == 200, "\(locked.json)")
            let refused = try await b.create("Locked", ["x": 1], master: false)
            #expect(refused.code == 119, "node B let a client create in a class node A locked: \(refused.json)")
            #expect(refused["error"]?.stringValue?.hasPrefix("Permission denied") == true, "\(refused.json)")
            #expect(try await b.request(.get, "/schemas/Locked").status == 200)

            // A storm of lookups of a class nobody made is answered (coalesced reads), and the class, once made on A,
            // is found by B's very next request.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 { group.addTask { try await b.find("Nope").status } }
                for try await status in group { #expect(status == 200) }
            }
            #expect(try await b.find("Nope").results.isEmpty)
            let late = try await a.createId("Nope", ["n": 1])
            #expect(try await b.ids("Nope", where: ["n": 1]) == [late])
        }
    }

    @Test("a field added or retyped on node A: node B writes and queries it without a schema mismatch", .enabled(if: Backend.all.contains(.postgres)))
    func fieldAddedElsewhere() async throws {
        try await Self.withDeafNode { a, b, apiB in
            _ = try await b.createId("Widget", ["size": 1])
            #expect(apiB.services.schemas.schema("Widget")?.fields["color"] == nil)
            let red = try await a.createId("Widget", ["size": 2, "color": "red"])
            // A query on the new field, then writes of it, each B's first sight of the field.
            #expect(try await b.ids("Widget", where: ["color": "red"]) == [red])
            let blue = try await b.create("Widget", ["color": "blue"])
            #expect(blue.status == 201, "\(blue.json)")
            #expect(try await b.create("Widget", ["color": 5]).code == 111)
            let sorted = try await b.find("Widget", where: ["color": ["$exists": true]], ["order": "color"])
            #expect(sorted.results.compactMap { $0["color"]?.stringValue } == ["blue", "red"])

            // Retyped on A (deleted, then added as a number): B's cache still says String, the database decides.
            #expect(try await a.request(.put, "/schemas/Widget", ["className": "Widget", "fields": ["color": ["__op": "Delete"]]]).status == 200)
            #expect(try await a.request(.put, "/schemas/Widget", ["className": "Widget", "fields": ["color": ["type": "Number"]]]).status == 200)
            #expect(apiB.services.schemas.schema("Widget")?.fields["color"] == .string)
            let retyped = try await b.create("Widget", ["color": 7])
            #expect(retyped.status == 201, "node B refused the field's new type: \(retyped.json)")
            #expect(try await b.create("Widget", ["color": "green"]).code == 111)

            // A field dropped on A that B still has cached: B's query fails in the database, and B answers it again
            // with the schema as the database holds it (no results, not an error).
            #expect(try await a.request(.put, "/schemas/Widget", ["className": "Widget", "fields": ["size": ["__op": "Delete"]]]).status == 200)
            #expect(apiB.services.schemas.schema("Widget")?.fields["size"] == .number)
            let bySize = try await b.find("Widget", where: ["size": 2])
            #expect(bySize.status == 200 && bySize.results.isEmpty, "\(bySize.json)")

            // Dropped on A: B forgets the class within the bound and can make it anew.
            let doomed = try await b.createId("Doomed", ["n": 1])
            #expect(try await a.delete("Doomed", doomed).status == 200)
            #expect(try await a.request(.delete, "/schemas/Doomed").status == 200)
            let emptied = try await b.find("Doomed")
            #expect(emptied.status == 200 && emptied.results.isEmpty, "node B failed on the class node A dropped: \(emptied.json)")
            let since = ContinuousClock.now
            let gone = try await Self.within(CacheTrust.schemas, since: since, { try await b.request(.get, "/schemas/Doomed") }) { $0.code == 103 }
            #expect(gone.code == 103, "node B still serves the class node A dropped: \(gone.json)")
            #expect(try await b.create("Doomed", ["n": 2]).status == 201)
        }
    }

    @Test(
        "a file deleted on node A is refused in writes on node B within CacheTrust.files, though B found it before",
        .enabled(if: Backend.all.contains(.postgres)))
    func fileDeletedElsewhere() async throws {
        try await Self.withDeafNode { a, b, _ in
            let user = try await a.signUp("file-owner")
            let upload = try await a.raw(.post, "/parse/files/pic.txt", body: "a picture", headers: a.headers(master: true))
            let name = try #require(upload["name"]?.stringValue, "\(upload.json)")
            let picture: JSONValue = ["picture": ["__type": "File", "name": .string(name)]]
            _ = try await a.createId("Entry", picture)  // the class and its field (the master key's write is not checked)
            // B checks (and remembers) that the file exists.
            let found = try await b.asUser(user.token, .post, "/classes/Entry", picture)
            #expect(found.status == 201, "\(found.json)")
            #expect(try await a.raw(.delete, "/parse/files/\(name)", headers: a.headers(master: true)).status == 200)
            let deleted = ContinuousClock.now
            let refused = try await Self.within(
                CacheTrust.files, since: deleted, { try await b.asUser(user.token, .post, "/classes/Entry", picture) }
            ) { $0.code == 111 }
            #expect(refused.code == 111, "node B still accepts a file node A deleted: \(refused.status) \(refused.json)")
        }
    }

    @Test(
        "a user added to or removed from a role on node A gains or loses its rights on node B within CacheTrust.roles",
        .enabled(if: Backend.all.contains(.postgres)))
    func roleMembershipElsewhere() async throws {
        try await Self.withDeafNode { a, b, _ in
            let user = try await a.signUp("role-member")
            let role = try await a.request(.post, "/roles", ["name": "Editors", "ACL": ["*": ["read": true]]])
            let roleId = try #require(role["objectId"]?.stringValue, "\(role.json)")
            let doc = try await a.createId("Doc", ["title": "for editors", "ACL": ["role:Editors": ["read": true]]])
            // B resolves (and caches) the user's roles: none yet.
            #expect(try await b.asUser(user.token, .get, "/classes/Doc/\(doc)").code == 101)
            let member: JSONValue = ["__type": "Pointer", "className": "_User", "objectId": .string(user.id)]
            let add = try await a.request(.put, "/roles/\(roleId)", ["users": ["__op": "AddRelation", "objects": [member]]])
            #expect(add.status == 200, "\(add.json)")
            let added = ContinuousClock.now
            let readable = try await Self.within(CacheTrust.roles, since: added, { try await b.asUser(user.token, .get, "/classes/Doc/\(doc)") }) {
                $0.status == 200
            }
            #expect(readable.status == 200, "node B still denies a member node A added to the role: \(readable.json)")

            let remove = try await a.request(.put, "/roles/\(roleId)", ["users": ["__op": "RemoveRelation", "objects": [member]]])
            #expect(remove.status == 200, "\(remove.json)")
            let removed = ContinuousClock.now
            let denied = try await Self.within(CacheTrust.roles, since: removed, { try await b.asUser(user.token, .get, "/classes/Doc/\(doc)") }) {
                $0.code == 101
            }
            #expect(denied.code == 101, "node B still grants a role node A took away: \(denied.json)")
        }
    }

    @Test(
        "a session revoked on node A fails on node B within CacheTrust.sessions, also while both nodes are busy",
        .enabled(if: Backend.all.contains(.postgres)))
    func sessionRevokedElsewhere() async throws {
        try await Self.withDeafNode { a, b, _ in
            let load = SharedFlag(true)
            // Eight clients keep both nodes and the database busy throughout.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        let node = worker % 2 == 0 ? a : b
                        while load.isSet {
                            let id = try await node.createId("Load", ["worker": .int(Int64(worker))])
                            _ = try await node.get("Load", id)
                        }
                    }
                }
                defer { load.clear() }
                for round in 0..<3 {
                    let user = try await a.signUp("revoked-\(round)")
                    let me = try await b.asUser(user.token, .get, "/users/me")
                    #expect(me.status == 200, "\(me.json)")
                    let out = try await a.asUser(user.token, .post, "/logout")
                    #expect(out.status == 200, "\(out.json)")
                    let revoked = ContinuousClock.now
                    let after = try await Self.within(CacheTrust.sessions, since: revoked, { try await b.asUser(user.token, .get, "/users/me") }) {
                        $0.code == 209
                    }
                    #expect(after.code == 209, "node B still accepts the session node A revoked: \(after.status) \(after.json)")
                }
                load.clear()
                try await group.waitForAll()
            }
        }
    }

    @Test("coalesced reads: callers that arrive while a read runs share the next one, which starts after they asked")
    func freshReadsCoalesce() async throws {
        let reads = FreshReads<String, Int>()
        let count = Counter()
        // The first read lasts until every other caller waits: they all share the one read after it.
        let slowRead: @Sendable () async throws -> Int = {
            let n = count.next()
            if n == 1 {
                while reads.waiting("k") < 199 { try await Task.sleep(for: .milliseconds(5)) }
            }
            return n
        }
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 { group.addTask { try await reads.read("k", slowRead) } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        // (A caller that asked just before the first read started may share that one.)
        #expect(results.count == 200 && Set(results).isSubset(of: [1, 2]))
        #expect(count.value == 2, "\(count.value) reads")
        // A caller arriving while a read runs gets the next one, never the running one.
        let before = count.value
        let startedRead: @Sendable () async throws -> Int = {
            let n = count.next()
            try await Task.sleep(for: .milliseconds(200))
            return n
        }
        async let first = reads.read("j", startedRead)
        while count.value == before { try await Task.sleep(for: .milliseconds(5)) }
        let second = try await reads.read("j", startedRead)
        #expect(try await first == before + 1)
        #expect(second == before + 2)
    }

    final class Counter: Sendable {
        private let count = Mutex<Int>(0)
        func next() -> Int {
            count.withLock {
                $0 += 1; return $0
            }
        }
        var value: Int { count.withLock { $0 } }
    }
}
