import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ParsleyCore
import ParsleyDomain
import Synchronization
import Testing

/// Two `parsley` processes on one PostgreSQL database: what one node writes, the other sees at once, including
/// what it had cached (schemas, sessions).
@Suite("Process on PostgreSQL: two nodes, one database", .serialized)
struct PostgresProcessTests {
    static let key = "two-nodes-master-key"

    /// Starts a `parsley` process on `url` (with `extra` settings), waiting until it answers /health.
    static func node(_ url: String, dataDir: URL, extra: [String: String] = [:]) async throws -> ProcessTests.Server {
        let server = try ProcessTests.Server(dataDir: dataDir, environment: Self.environment(url).merging(extra) { $1 })
        do {
            try await server.waitUntilHealthy()
        } catch {
            server.kill()
            throw error
        }
        return server
    }

    static func environment(_ url: String) -> [String: String] {
        ["PARSE_SERVER_DATABASE_URI": url, "PARSE_SERVER_MASTER_KEY": key, "PARSLEY_DATABASE_POOL_SIZE": "4"]
    }

    /// Two `parsley` processes on a fresh database, with their clients.
    static func withTwoNodes(
        a extraA: [String: String] = [:], b extraB: [String: String] = [:],
        _ body: @escaping @Sendable (ParseClient, ParseClient) async throws -> Void
    ) async throws {
        try await PostgresCluster.shared.withFreshDatabase { url in
            let dirA = try ProcessTests.tempDir()
            let dirB = try ProcessTests.tempDir()
            defer {
                try? FileManager.default.removeItem(at: dirA)
                try? FileManager.default.removeItem(at: dirB)
            }
            let a = try await Self.node(url, dataDir: dirA, extra: extraA)
            defer { a.kill() }
            let b = try await Self.node(url, dataDir: dirB, extra: extraB)
            defer { b.kill() }
            try await ProcessTests.client(a.port, Self.key) { nodeA in
                try await ProcessTests.client(b.port, Self.key) { nodeB in try await body(nodeA, nodeB) }
            }
        }
    }

    @Test(
        "objects, schema changes and revoked sessions made on one node are seen by the other at once",
        .enabled(if: Backend.all.contains(.postgres), "PostgreSQL not available"))
    func twoNodes() async throws {
        // B runs every statement unnamed (as behind PgBouncer), A prepares them: the two must agree.
        try await Self.withTwoNodes(b: ["PARSLEY_POSTGRES_PREPARED_STATEMENTS": "false"]) { nodeA, nodeB in
            try await Self.objects(nodeA, nodeB)
            try await Self.schemas(nodeA, nodeB)
            try await Self.sessions(nodeA, nodeB)
        }
    }

    @Test(
        "idempotency across nodes: a retry that reaches the other node is answered 159 and not applied",
        .enabled(if: Backend.all.contains(.postgres), "PostgreSQL not available"))
    func idempotencyAcrossNodes() async throws {
        let idempotent = ["PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS": #"{"paths":["classes/.*"],"ttl":300}"#]
        try await Self.withTwoNodes(a: idempotent, b: idempotent) { nodeA, nodeB in
            let retry = ["X-Parse-Request-Id": "cross-node-1"]
            let first = try await nodeA.request(.post, "/classes/Payment", ["amount": 5], extra: retry)
            #expect(first.status == 201)
            let second = try await nodeB.request(.post, "/classes/Payment", ["amount": 5], extra: retry)
            #expect(second.json == ["code": 159, "error": "Duplicate request"])
            // Both at once on the two nodes: exactly one is applied.
            let concurrent = ["X-Parse-Request-Id": "cross-node-2"]
            async let viaA = nodeA.request(.post, "/classes/Payment", ["amount": 7], extra: concurrent)
            async let viaB = nodeB.request(.post, "/classes/Payment", ["amount": 7], extra: concurrent)
            let statuses = [try await viaA.status, try await viaB.status].sorted()
            #expect(statuses == [201, 400])
            #expect(try await nodeB.find("Payment", ["count": "1", "limit": "0"])["count"] == 2)
        }
    }

    /// An object created on A is read, found, updated and deleted through B.
    static func objects(_ nodeA: ParseClient, _ nodeB: ParseClient) async throws {
        let id = try await nodeA.createId("CrossNode", ["name": "from A", "n": 1])
        let got = try await nodeB.get("CrossNode", id)
        #expect(got.status == 200, "\(got.json)")
        #expect(got["name"] == "from A")
        let updated = try await nodeB.update("CrossNode", id, ["n": ["__op": "Increment", "amount": 2]])
        #expect(updated.status == 200, "\(updated.json)")
        let again = try await nodeA.get("CrossNode", id)
        #expect(again["n"] == 3, "\(again.json)")
        #expect(try await nodeB.ids("CrossNode", where: ["name": "from A"]) == [id])
        #expect(try await nodeA.delete("CrossNode", id).status == 200)
        let gone = try await nodeB.get("CrossNode", id)
        #expect(gone.code == 101, "\(gone.json)")
    }

    /// What B has cached (a class's schema, a session) follows A's changes within the bounds of `CacheTrust`,
    /// whether or not B has read A's announcement yet (normally it has, in milliseconds; on a machine the rest of
    /// the suite saturates it may be late). A class or field B does not know is read from the database at once.
    static let schemaDelay = CacheTrust.schemas
    static let sessionDelay = CacheTrust.sessions

    /// `GET /schemas/<className>` on `node` until `accept` holds, or the answer to the first request that started
    /// once `schemaDelay` had passed (the caller acknowledged the change just before).
    static func schema(_ node: ParseClient, _ className: String, until accept: (Reply) -> Bool) async throws -> Reply {
        let deadline = ContinuousClock.now + schemaDelay
        while true {
            let started = ContinuousClock.now
            let r = try await node.request(.get, "/schemas/\(className)")
            if accept(r) || started >= deadline { return r }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// `GET /users/me` on `node` with `token` until it is refused (209), or the answer to the first request that
    /// started once `sessionDelay` had passed.
    static func refused(_ node: ParseClient, _ token: String) async throws -> Reply {
        let deadline = ContinuousClock.now + sessionDelay
        while true {
            let started = ContinuousClock.now
            let r = try await node.asUser(token, .get, "/users/me")
            if r.code == 209 || started >= deadline { return r }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func schemas(_ nodeA: ParseClient, _ nodeB: ParseClient) async throws {
        // B creates the class (and caches its schema), then A adds a field.
        _ = try await nodeB.createId("Widget", ["size": 1])
        let before = try await nodeB.request(.get, "/schemas/Widget")
        #expect(before.status == 200, "\(before.json)")
        #expect(before["fields"]?["color"] == nil)
        let put = try await nodeA.request(.put, "/schemas/Widget", ["className": "Widget", "fields": ["color": ["type": "String"]]])
        #expect(put.status == 200, "\(put.json)")
        let after = try await schema(nodeB, "Widget") { $0["fields"]?["color"] != nil }
        #expect(after["fields"]?["color"] == ["type": "String"], "node B does not see the field node A added: \(after.json)")
        // B's writes follow the new field's type.
        let wrongType = try await nodeB.create("Widget", ["color": 5])
        #expect(wrongType.code == 111, "\(wrongType.json)")
        #expect(try await nodeB.create("Widget", ["color": "red"]).status == 201)

        // A new class made on A, after B looked for it and found nothing: B's next request reads it from the database.
        let missing = try await nodeB.request(.get, "/schemas/Gadget")
        #expect(missing.code == 103, "\(missing.json)")
        let created = try await nodeA.request(.post, "/schemas/Gadget", ["className": "Gadget", "fields": ["weight": ["type": "Number"]]])
        #expect(created.status == 200, "\(created.json)")
        let seen = try await nodeB.request(.get, "/schemas/Gadget")
        #expect(seen.status == 200, "node B does not see the class node A created: \(seen.json)")
        #expect(seen["fields"]?["weight"] == ["type": "Number"], "\(seen.json)")

        // A field deleted on A is gone at B, and B writes the name as a new field again.
        let drop = try await nodeA.request(.put, "/schemas/Widget", ["className": "Widget", "fields": ["color": ["__op": "Delete"]]])
        #expect(drop.status == 200, "\(drop.json)")
        let dropped = try await schema(nodeB, "Widget") { $0["fields"]?["color"] == nil }
        #expect(dropped["fields"]?["color"] == nil, "node B still has the field node A deleted: \(dropped.json)")
        let retyped = try await nodeB.create("Widget", ["color": 7])
        #expect(retyped.status == 201, "node B still types the field node A deleted: \(retyped.json)")
    }

    /// A session revoked on A is refused by B at once, although B has just accepted (and cached) it.
    static func sessions(_ nodeA: ParseClient, _ nodeB: ParseClient) async throws {
        let user = try await nodeA.signUp("two-nodes-user")
        let me = try await nodeB.asUser(user.token, .get, "/users/me")
        #expect(me.status == 200, "\(me.json)")
        #expect(me["objectId"] == .string(user.id))
        let out = try await nodeA.asUser(user.token, .post, "/logout")
        #expect(out.status == 200, "\(out.json)")
        // PostgreSQL has delivered the announcement before A answered; B applies it as it reads it, and in any case
        // stops trusting its cached session within `CacheTrust.sessions`.
        let after = try await refused(nodeB, user.token)
        #expect(after.code == 209, "node B still accepts the session node A revoked: \(after.status) \(after.json)")
        let againA = try await nodeA.asUser(user.token, .get, "/users/me")
        #expect(againA.code == 209, "\(againA.json)")

        // Deleting the user on A (master key) also ends its other sessions at B.
        let second = try await nodeA.signUp("two-nodes-user-2")
        #expect(try await nodeB.asUser(second.token, .get, "/users/me").status == 200)
        #expect(try await nodeA.request(.delete, "/users/\(second.id)").status == 200)
        let deleted = try await refused(nodeB, second.token)
        #expect(deleted.code == 209, "node B still accepts a session of the user node A deleted: \(deleted.status) \(deleted.json)")
    }

    @Test(
        "PARSLEY_POSTGRES_POINT_READ_CONCURRENCY: at 1 concurrent gets share statements (metric), at 0 never; a bad value stops the start",
        .enabled(if: Backend.all.contains(.postgres), "PostgreSQL not available"))
    func pointReadSetting() async throws {
        try await PostgresCluster.shared.withFreshDatabase { url in
            for (setting, shares) in [("1", true), ("0", false)] {
                let dir = try ProcessTests.tempDir()
                defer { try? FileManager.default.removeItem(at: dir) }
                let metricsReservation = try ReservedPort()
                defer { metricsReservation.release() }
                let metricsPort = metricsReservation.port
                let node = try await Self.node(
                    url, dataDir: dir, extra: ["PARSLEY_POSTGRES_POINT_READ_CONCURRENCY": setting, "PARSLEY_METRICS_PORT": "\(metricsPort)"])
                defer { node.kill() }
                let ids = try await withThrowingTaskGroup(of: String.self) { group in
                    for n in 0..<20 {
                        group.addTask {
                            let id = Mutex<String?>(nil)
                            try await ProcessTests.client(node.port, Self.key) { c in
                                let created = try await c.createId("Looked", ["n": .int(Int64(n)), "setting": .string(setting)])
                                id.withLock { $0 = created }
                            }
                            return try #require(id.withLock { $0 })
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<8 {
                        group.addTask {
                            try await ProcessTests.client(node.port, Self.key) { c in
                                for i in 0..<25 {
                                    let id = ids[(worker * 3 + i) % ids.count]
                                    let got = try await c.get("Looked", id)
                                    #expect(got.status == 200 && got["objectId"]?.stringValue == id, "\(got.json)")
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let scrape = try await TestClient.withClient(host: "127.0.0.1", port: metricsPort) { client in
                    try await client.execute(TestClient.Request("/metrics", method: .get))
                }
                let text = String(buffer: scrape.body ?? ByteBuffer())
                let line = text.split(separator: "\n").first { $0.hasPrefix("parsley_db_point_reads_coalesced_total ") }
                let coalesced = line.flatMap { Int($0.split(separator: " ").last ?? "") }
                if shares {
                    #expect((coalesced ?? 0) > 0, "setting \(setting): \(line ?? "no metric")")
                } else {
                    #expect(coalesced == 0, "setting \(setting): \(line ?? "no metric")")
                }
            }
            let dir = try ProcessTests.tempDir()
            defer { try? FileManager.default.removeItem(at: dir) }
            let bad = try ProcessTests.Server(
                dataDir: dir, environment: Self.environment(url).merging(["PARSLEY_POSTGRES_POINT_READ_CONCURRENCY": "many"]) { $1 })
            await bad.process.exited(killAfter: .seconds(30))
            #expect(bad.process.terminationStatus != 0)
            #expect(bad.outputText().contains("PARSLEY_POSTGRES_POINT_READ_CONCURRENCY"), "\(bad.outputText())")
        }
    }
}
