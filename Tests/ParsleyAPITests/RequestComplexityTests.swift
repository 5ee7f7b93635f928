import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// `requestComplexity`'s REST keys (Parse Server 9): include depth and count, sub-query and logical nesting of a
/// `where`, and sub-requests of a batch, for callers without the master key; off by default.
@Suite("requestComplexity REST keys")
struct RequestComplexityTests {
    static func limited() -> ParseServerOptions {
        TestServer.options {
            $0.requestComplexity.includeDepth = 2
            $0.requestComplexity.includeCount = 3
            $0.requestComplexity.subqueryDepth = 1
            $0.requestComplexity.queryDepth = 2
            $0.requestComplexity.batchRequestLimit = 2
        }
    }

    static func refused(_ message: String, code: Int = 102) -> JSONValue { ["code": .int(Int64(code)), "error": .string(message)] }

    @Test("includeDepth and includeCount: 102 with Parse Server's messages for clients, the master key passes", arguments: Backend.all)
    func includes(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.limited()) { p in
            let open: JSONValue = ["*": ["read": true]]
            let c = try await p.createId("C", ["n": 1, "ACL": open])
            let b = try await p.createId("B", ["c": ["__type": "Pointer", "className": "C", "objectId": .string(c)], "ACL": open])
            let a = try await p.createId("A", ["b": ["__type": "Pointer", "className": "B", "objectId": .string(b)], "ACL": open])
            _ = try await p.createId("R", ["a": ["__type": "Pointer", "className": "A", "objectId": .string(a)], "ACL": open])
            let fine = try await p.find("A", ["include": "b.c"], master: false)
            #expect(fine.status == 200)
            #expect(fine.results.first?["b"]?["c"]?["n"] == 1)
            let deep = try await p.find("R", ["include": "a.b.c"], master: false)
            #expect(deep.status == 400)
            #expect(deep.json == Self.refused("Include depth of 3 exceeds maximum allowed depth of 2"))
            // Every prefix of a path counts against includeCount (a, a.b, a.x, a.y).
            let many = try await p.find("R", ["include": "a.b,a.x,a.y"], master: false)
            #expect(many.json == Self.refused("Number of include fields (4) exceeds maximum allowed (3)"))
            #expect(try await p.find("R", ["include": "a.b,a.x"], master: false).status == 200)
            let counted = try await p.find("R", ["include": "a.b.c", "count": "1", "limit": "0"], master: false)
            #expect(counted.status == 400)
            #expect(try await p.find("R", ["include": "a.b.c"]).status == 200)
            #expect(try await p.find("R", ["include": "a.b,a.x,a.y"]).status == 200)
        }
        // Off by default (Parse Server 9's -1).
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("R", ["n": 1, "ACL": ["*": ["read": true]]])
            #expect(try await p.find("R", ["include": "a.b.c.d.e,f,g,h,i.j"], master: false).status == 200)
        }
    }

    @Test("queryDepth and subqueryDepth: 102 for clients past the nesting allowed, the master key passes", arguments: Backend.all)
    func nesting(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.limited()) { p in
            _ = try await p.createId("Q", ["n": 1, "ACL": ["*": ["read": true]]])
            let two: JSONValue = ["$or": [["$and": [["n": 1]]], ["n": 2]]]
            #expect(try await p.find("Q", where: two, master: false).results.count == 1)
            let three: JSONValue = ["$or": [["$and": [["$nor": [["n": 3]]]]]]]
            let deep = try await p.find("Q", where: three, master: false)
            #expect(deep.status == 400)
            #expect(deep.json == Self.refused("Query condition nesting depth exceeds maximum allowed depth of 2"))
            #expect(try await p.find("Q", where: three).status == 200)
            let one: JSONValue = ["n": ["$inQuery": ["className": "Q", "where": ["n": 1]]]]
            #expect(try await p.find("Q", where: one, master: false).status == 200)
            let nested: JSONValue = [
                "n": ["$select": ["query": ["className": "Q", "where": ["n": ["$inQuery": ["className": "Q", "where": [:]]]]], "key": "n"]]
            ]
            let sub = try await p.find("Q", where: nested, master: false)
            #expect(sub.status == 400)
            #expect(sub.json == Self.refused("Subquery nesting depth exceeds maximum allowed depth of 1"))
            #expect(try await p.find("Q", where: nested).status == 200)
        }
    }

    @Test("batchRequestLimit: 107 with Parse Server's message for clients, the master key passes", arguments: Backend.all)
    func batch(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.limited()) { p in
            let item: JSONValue = ["method": "POST", "path": "/parse/classes/Item", "body": ["n": 1]]
            let three: JSONValue = ["requests": [item, item, item]]
            let refused = try await p.request(.post, "/batch", three, master: false)
            #expect(refused.status == 400)
            #expect(refused.json == Self.refused("Batch request contains 3 sub-requests, which exceeds the limit of 2.", code: 107))
            #expect(try await p.request(.post, "/batch", ["requests": [item, item]], master: false).status == 200)
            #expect(try await p.request(.post, "/batch", three).status == 200)
        }
    }

    @Test("LiveQuery subscriptions keep the same limits: include depth and where nesting 102 for clients, the master key passes")
    func liveQuery() async throws {
        var options = Self.limited()
        options.liveQuery.classNames = ["Player"]
        try await TestServer.with(backend: .sqlite, options) { p in
            let client = try await LiveQueryTests.client(p)
            let deep = try await client.subscribe(1, "Player", include: ["a.b.c"])
            #expect(deep["op"] == "error" && deep["code"] == 102, "\(deep)")
            #expect(deep["error"] == "Include depth of 3 exceeds maximum allowed depth of 2")
            let nested = try await client.subscribe(2, "Player", where: ["$or": [["$or": [["$or": [["n": 1]]]]]]])
            #expect(nested["op"] == "error" && nested["code"] == 102, "\(nested)")
            #expect(try await client.subscribe(3, "Player", include: ["a.b"])["op"] == "subscribed")
            let master = try await LiveQueryTests.client(p, master: true)
            #expect(try await master.subscribe(1, "Player", include: ["a.b.c"])["op"] == "subscribed")
            for lq in [client, master] { await lq.close() }
        }
    }
}
