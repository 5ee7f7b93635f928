import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPostgres
import ParsleyStorage
import Testing

/// Two server processes on one PostgreSQL database, as behind a load balancer without pinning: rate-limit counters
/// and dashboard sign-ins live in the database, so a client alternating between the nodes is limited once, not once
/// per node, and a browser signed in on one node is signed in on the other (and signed out of both at once); failed
/// dashboard sign-ins are counted together too.
@Suite("Nothing kept per node: rate limits and dashboard sign-ins across nodes")
struct SharedRateLimitTests {
    static func twoNodes(
        rules: [RateLimitRule] = [], options: ParseServerOptions = TestServer.options(),
        _ body: @escaping @Sendable (ParseClient, ParseClient) async throws -> Void
    ) async throws {
        guard Backend.all.contains(.postgres) else { return }
        let logger = TestDatabase.logger
        try await TestDatabase.with(.postgres, logger: logger) { db in
            let url = try #require(db.url)
            let api1 = ParseAPI(
                services: try await ParseServices.open(options: options, database: db.database, adapters: .standard), rateLimits: rules)
            let other = try await PostgresDatabase.open(url: url, poolSize: 2, logger: logger)
            try await other.serving {
                let api2 = ParseAPI(services: try await ParseServices.open(options: options, database: other, adapters: .standard), rateLimits: rules)
                try await ParsleyApplication.application(api: api1, host: "127.0.0.1", port: 0, logger: logger).test(.live) { client1 in
                    try await ParsleyApplication.application(api: api2, host: "127.0.0.1", port: 0, logger: logger).test(.live) { client2 in
                        try await body(ParseClient(client: client1, options: options), ParseClient(client: client2, options: options))
                    }
                }
            }
        }
    }

    @Test("PostgreSQL: 6 requests a minute in all, alternating between two nodes: the 7th is refused on either node")
    func acrossNodes() async throws {
        let rule = RateLimitRule(requestPath: "/classes/*", window: .seconds(60), count: 6, methods: ["POST"], message: "Slow down.")
        try await Self.twoNodes(rules: [rule]) { a, b in
            #expect(try await a.request(.post, "/classes/Note", ["n": -1]).status == 201)  // (the master key makes the class)
            for i in 0..<6 {
                let node = i % 2 == 0 ? a : b
                let r = try await node.request(.post, "/classes/Note", ["n": .int(Int64(i))], master: false)
                #expect(r.status == 201, "request \(i): \(r.json)")
            }
            for node in [a, b] {
                let refused = try await node.request(.post, "/classes/Note", ["n": 99], master: false)
                #expect(refused.status == 429 && refused.code == 100 && refused["error"] == "Slow down.", "\(refused.json)")
            }
            // Another route and the master key are not counted.
            #expect(try await a.request(.get, "/classes/Note", master: false).status == 200)
            #expect(try await b.request(.post, "/classes/Note", ["n": 100]).status == 201)
        }
    }

    @Test("PostgreSQL: permits taken in blocks: 300 a minute over two nodes admit 300 at most, and at most a block per node fewer")
    func blocksAcrossNodes() async throws {
        let rule = RateLimitRule(requestPath: "/classes/*", window: .seconds(60), count: 300, methods: ["GET"])
        #expect(RateLimiter.permitBlock(300) == 3 && RateLimiter.permitBlock(6) == 1 && RateLimiter.permitBlock(10_000_000) == 1000)
        try await Self.twoNodes(rules: [rule]) { a, b in
            #expect(try await a.request(.post, "/classes/Note", ["n": 1]).status == 201)
            var admitted = 0
            var refused = 0
            for i in 0..<360 {
                let r = try await (i % 3 == 0 ? b : a).request(.get, "/classes/Note", master: false)
                if r.status == 200 { admitted += 1 } else if r.status == 429 && r.code == 100 { refused += 1 }
            }
            #expect(admitted <= 300 && admitted >= 300 - 2 * 3, "admitted \(admitted)")
            #expect(admitted + refused == 360)
        }
    }

    @Test("PostgreSQL: a window that is over starts again on both nodes")
    func windowsEnd() async throws {
        let rule = RateLimitRule(requestPath: "/functions/*", window: .seconds(2), count: 2)
        try await Self.twoNodes(rules: [rule]) { a, b in
            #expect(try await a.request(.post, "/functions/nope", [:], master: false).status != 429)
            #expect(try await b.request(.post, "/functions/nope", [:], master: false).status != 429)
            #expect(try await a.request(.post, "/functions/nope", [:], master: false).status == 429)
            try await Task.sleep(for: .milliseconds(2_200))
            #expect(try await b.request(.post, "/functions/nope", [:], master: false).status != 429)
        }
    }

    @Test("PostgreSQL: a dashboard sign-in on node A works on node B; signing out on B ends it on A too")
    func dashboardAcrossNodes() async throws {
        try await Self.twoNodes(options: DashboardTests.options()) { a, b in
            let signIn = try await DashboardTests.signIn(a, ["masterKey": .string(TestServer.masterKey)])
            #expect(signIn.reply.status == 200, "\(signIn.reply.json)")
            let (cookie, csrf) = (try #require(signIn.cookie), try #require(signIn.csrf))
            // Node B has never seen the session: it reads it from the database.
            let onB = try await DashboardTests.call(b, .get, "/schemas", cookie: cookie, csrf: csrf)
            #expect(onB.status == 200, "\(onB.json)")
            #expect(try await DashboardTests.call(b, .get, "/schemas", cookie: cookie, csrf: "wrong").status != 200)
            #expect(try await DashboardTests.call(a, .get, "/schemas", cookie: cookie, csrf: csrf).status == 200)
            var h = HTTPFields()
            h[.cookie] = cookie
            h[DashboardTests.header("X-Parsley-Dashboard-CSRF")] = csrf
            #expect(try await b.raw(.post, "/dashboard/api/logout", body: "", headers: h).status == 200)
            // Node A heard of the sign-out (and the database has no row left to read back).
            var ended = false
            for _ in 0..<100 where !ended {
                ended = try await DashboardTests.call(a, .get, "/schemas", cookie: cookie, csrf: csrf).status != 200
                if !ended { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(ended)
        }
    }

    @Test("PostgreSQL: 10 failed dashboard sign-ins a minute from one address in all, alternating between two nodes")
    func dashboardFailuresAcrossNodes() async throws {
        try await Self.twoNodes(options: DashboardTests.options()) { a, b in
            for i in 0..<10 {
                let wrong = try await DashboardTests.signIn(i % 2 == 0 ? a : b, ["masterKey": .string("not-the-key-\(i)")])
                #expect(wrong.reply.status == 403, "attempt \(i): \(wrong.reply.json)")
            }
            // Five failures on each node: the 11th try is refused on both, even with the right key.
            for node in [a, b] {
                let refused = try await DashboardTests.signIn(node, ["masterKey": .string(TestServer.masterKey)])
                #expect(refused.reply.status == 429 && refused.reply.code == 100, "\(refused.reply.json)")
            }
        }
    }
}
