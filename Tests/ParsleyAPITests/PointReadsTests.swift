import HTTPTypes
import HummingbirdTesting
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPostgres
import ParsleyStorage
import Testing

/// Many concurrent `GET /classes/:className/:objectId` on PostgreSQL are coalesced into shared statements
/// (`PointReadBatcher`); each answer must still be exactly the one its own request would get alone.
@Suite("Concurrent lookups by id")
struct PointReadsTests {
    @Test("concurrent gets by id each see their own object, their own ACL, their own keys and every acknowledged write", arguments: Backend.all)
    func concurrentGets(_ backend: Backend) async throws {
        // One lookup at a time on PostgreSQL, so that concurrent ones must wait and share statements.
        try await TestDatabase.with(backend, logger: TestDatabase.logger, pointReadConcurrency: 1) { db in
            let options = TestServer.options()
            let api = ParseAPI(services: try await ParseServices.open(options: options, database: db.database, adapters: .standard))
            let app = ParsleyApplication.application(api: api, host: "127.0.0.1", port: 0, logger: TestDatabase.logger)
            try await app.test(.live) { client in
                let p = ParseClient(client: client, options: options)
                let port = try #require(p.port)
                let signUp = try await p.request(.post, "/users", ["username": "owner", "password": "secret"], master: false)
                let token = try #require(signUp["sessionToken"]?.stringValue)
                let owner = try #require(signUp["objectId"]?.stringValue)
                var created: [String] = []
                for n in Int64(0)..<30 { created.append(try await p.createId("Card", ["n": .int(n), "label": .string("public \(n)")])) }
                var createdPrivate: [String] = []
                for n in Int64(0)..<10 {
                    createdPrivate.append(try await p.createId("Card", ["n": .int(100 + n), "label": "private", "ACL": [owner: ["read": true]]]))
                }
                let (publicIds, privateIds) = (created, createdPrivate)
                // Forty different ids (a repeated one fails here, instead of trapping in the dictionary below).
                try #require(Set(publicIds + privateIds).count == 40)
                let expected: [String: Int64] = Dictionary(
                    Array(zip(publicIds, Int64(0)...)) + Array(zip(privateIds, Int64(100)...)), uniquingKeysWith: { first, _ in first })
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<16 {
                        group.addTask {
                            try await TestClient.withClient(host: "127.0.0.1", port: port) { connection in
                                let c = ParseClient(connection: connection, options: options)
                                for i in 0..<24 {
                                    let pick = (worker * 7 + i * 5) % 46
                                    switch i % 4 {
                                    case 0:
                                        // Anonymous: public objects come back, private ones and unknown ids are 101.
                                        let id = pick < 30 ? publicIds[pick] : pick < 40 ? privateIds[pick - 30] : "missing\(pick)"
                                        let r = try await c.get("Card", id, master: false)
                                        if pick < 30 {
                                            #expect(r.status == 200 && r["objectId"]?.stringValue == id && r["n"] == .int(expected[id]!), "\(r.json)")
                                        } else {
                                            #expect(r.status == 404 && r.code == 101, "\(id): \(r.json)")
                                        }
                                    case 1:
                                        // The owner's session reads private objects too.
                                        let id = privateIds[pick % 10]
                                        let r = try await c.raw(
                                            .get, "/parse/classes/Card/\(id)",
                                            headers: c.headers(master: false, extra: ["X-Parse-Session-Token": token]))
                                        #expect(r.status == 200 && r["objectId"]?.stringValue == id && r["n"] == .int(expected[id]!), "\(r.json)")
                                    case 2:
                                        // keys= restricts this answer only.
                                        let id = publicIds[pick % 30]
                                        let r = try await c.get("Card", id, "?keys=n")
                                        #expect(r["objectId"]?.stringValue == id && r["n"] == .int(expected[id]!) && r["label"] == nil, "\(r.json)")
                                    default:
                                        // A write acknowledged before the get is seen by it.
                                        let id = publicIds[pick % 30]
                                        let label = "w\(worker)-\(i)"
                                        let u = try await c.update("Card", id, ["label": .string(label), "by\(worker)": .int(Int64(i))])
                                        #expect(u.status == 200)
                                        let r = try await c.get("Card", id)
                                        #expect(r["objectId"]?.stringValue == id && r["by\(worker)"] == .int(Int64(i)), "\(r.json)")
                                    }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            if backend == .postgres {
                let batcher = try #require(db.database.pointReads)
                #expect(batcher.coalesced > 0, "no lookup shared a statement")
            } else {
                #expect(db.database.pointReads == nil)
            }
        }
    }
}
