import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPostgres
import ParsleyStorage
import Testing

/// LiveQuery across nodes of one PostgreSQL database, after a lost database connection, with a client that stops
/// reading, and with cloud code's LiveQuery triggers.
@Suite("LiveQuery nodes, slow clients and triggers")
struct LiveQueryNodesTests {
    typealias T = LiveQueryTests

    @Test("PostgreSQL: a client on node B hears writes made on node A, in per-object order; a lost database connection asks it to reconnect")
    func crossNode() async throws {
        guard Backend.all.contains(.postgres) else { return }
        let options = TestServer.liveOptions(T.live)
        try await TestServer.withAPI(backend: .postgres, options) { _, db, p in
            let url = try #require(db.url)
            let other = try await PostgresDatabase.open(url: url, poolSize: 2, logger: TestDatabase.logger)
            try await other.serving {
                let node2 = ParseAPI(services: try await ParseServices.open(options: options, database: other, adapters: .standard))
                let app2 = ParsleyApplication.application(api: node2, host: "127.0.0.1", port: 0, logger: TestDatabase.logger)
                try await app2.test(.live) { client2 in
                    let lq = try await LiveQueryClient.open(port: try #require(client2.port))
                    #expect(try await lq.connect(masterKey: TestServer.masterKey)["op"] == "connected")
                    try await T.warmUp(p, lq)
                    #expect(try await lq.subscribe(1, "Message", where: ["room": "lobby"])["op"] == "subscribed")
                    let id = try await p.createId("Message", ["room": "lobby", "n": 0])
                    // (Generous waits: a full suite on two cores can hold node B's listener back for many seconds.)
                    #expect(try await lq.expect("create", timeout: .seconds(45))["object"]?["objectId"] == .string(id))
                    for _ in 0..<15 { _ = try await p.update("Message", id, ["n": ["__op": "Increment", "amount": 1]]) }
                    var seen: [Int] = []
                    for _ in 0..<15 { seen.append(try await lq.expect("update", timeout: .seconds(45))["object"]?["n"]?.integerValue ?? -1) }
                    #expect(seen == Array(1...15))
                    // Every node's listening connection is cut: node B's clients are told to reconnect, then closed.
                    try await PostgresCluster.execute(
                        url,
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND "
                            + "query LIKE 'LISTEN%'"
                    )
                    let error = try await lq.expect("error", timeout: .seconds(30))
                    #expect(error["reconnect"] == true)
                    for _ in 0..<1200 where !lq.isClosed { try await Task.sleep(for: .milliseconds(50)) }
                    #expect(lq.isClosed)
                    // A new connection hears node A's writes again (once the listener is back: its return is a gap too,
                    // which closes clients that connected in between, so this retries).
                    var heard = false
                    for _ in 0..<20 where !heard {
                        let again = try await LiveQueryClient.open(port: try #require(client2.port))
                        // (A client closed by that gap before it is answered is a failed try, not a failed test.)
                        if (try? await again.connect(masterKey: TestServer.masterKey))?["op"] == "connected",
                            (try? await again.subscribe(1, "Message"))?["op"] == "subscribed"
                        {
                            let id = try await p.createId("Message", ["room": "again"])
                            heard = (try? await again.next(timeout: .seconds(1)))?["object"]?["objectId"] == .string(id)
                        }
                        await again.close()
                    }
                    #expect(heard)
                }
            }
        }
    }

    @Test("a client that stops reading is disconnected once its queue is full; other clients get every event", arguments: Backend.all)
    func slowClient(_ backend: Backend) async throws {
        // (Pings far apart: a stuck client would otherwise also be closed for not answering them.)
        let options = TestServer.liveOptions(T.live) {
            $0.liveQuery.queueLimit = 64
            $0.liveQuery.pingInterval = .seconds(600)
        }
        try await TestServer.withAPI(backend: backend, options) { api, _, p in
            let port = try #require(p.port)
            let reader = try await T.client(p, master: true)
            try await T.warmUp(p, reader)
            #expect(try await reader.subscribe(1, "Message")["op"] == "subscribed")
            // 50 subscriptions on the stuck connection: each write puts 50 frames in its way, so its socket buffers and
            // queue fill after a few small writes (the database is not made to carry megabytes).
            let subscriptions: [JSONValue] = (1...50).map { i in
                ["op": "subscribe", "requestId": .int(Int64(i)), "query": ["className": "Message", "where": [:]]]
            }
            let stuck = try await RawWebSocket.openNeverReading(port: port)
            let connect: JSONValue = ["op": "connect", "applicationId": .string(TestServer.appId), "masterKey": .string(TestServer.masterKey)]
            for m in [connect] + subscriptions { try await stuck.sendText(JSONWriter.string(m)) }
            for _ in 0..<200 where api.services.liveQuery.subscriptionCount < 51 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(api.services.liveQuery.subscriptionCount == 51)
            let text = String(repeating: "x", count: 20_000)
            var created = 0
            for _ in 0..<400 where api.services.liveQuery.metrics.slowClientsDisconnected == 0 {
                _ = try await p.createId("Message", ["text": .string(text)])
                created += 1
                if created % 20 == 0 { try await Task.sleep(for: .milliseconds(100)) }
            }
            for _ in 0..<300 where api.services.liveQuery.metrics.slowClientsDisconnected == 0 { try await Task.sleep(for: .milliseconds(50)) }
            #expect(api.services.liveQuery.metrics.slowClientsDisconnected == 1)
            for _ in 0..<created { try await reader.expect("create") }
            for _ in 0..<100 where api.services.liveQuery.connectionCount > 1 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(api.services.liveQuery.connectionCount == 1)
            await stuck.close()
            await reader.close()
        }
    }

    @Test(
        "cloud code: beforeConnect and beforeSubscribe may refuse (141, no reconnect) or change the query; afterLiveQueryEvent may drop or change an event",
        arguments: Backend.all)
    func triggers(_ backend: Backend) async throws {
        var cloud = CloudCode()
        cloud.beforeConnect { req in
            if req.installationId == "banned" { throw ParseError(.scriptFailed, "this installation is banned") }
        }
        cloud.beforeSubscribe("Message") { req in
            if req.whereValue["room"] == "forbidden" { throw ParseError(.scriptFailed, "not this room") }
            req.whereValue = ["$and": [req.whereValue, ["hidden": ["$ne": true]]]]
        }
        cloud.afterLiveQueryEvent("Message") { req in
            if req.object["drop"] == true { req.sendEvent = false }
            req.object["decorated"] = .string(req.event)
            // What a trigger adds still passes the filter: credentials never go out.
            req.object["sessionToken"] = "r:leak"
        }
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live), cloud: cloud) { p in
            let port = try #require(p.port)
            let banned = try await LiveQueryClient.open(port: port)
            let refused = try await banned.connect(extra: ["installationId": "banned"])
            #expect(refused["op"] == "error")
            #expect(refused["code"] == 141)
            #expect(refused["error"] == "this installation is banned")
            #expect(refused["reconnect"] == false)
            await banned.close()
            let lq = try await T.client(p, master: true)
            try await T.warmUp(p, lq)
            #expect(try await lq.subscribe(1, "Message", where: ["room": "forbidden"])["code"] == 141)
            #expect(try await lq.subscribe(2, "Message", where: ["room": "lobby"])["op"] == "subscribed")
            _ = try await p.createId("Message", ["room": "lobby", "hidden": true])
            _ = try await p.createId("Message", ["room": "lobby", "drop": true])
            try await lq.nothing()
            _ = try await p.createId("Message", ["room": "lobby"])
            let event = try await lq.expect("create")
            #expect(event["object"]?["decorated"] == "create")
            #expect(event["object"]?["sessionToken"] == nil)
            await lq.close()
        }
    }
}
