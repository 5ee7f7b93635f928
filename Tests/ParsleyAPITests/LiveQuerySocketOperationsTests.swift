import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Testing

/// Queries and writes over an open LiveQuery socket (Parsley's extension, parse-server issue 9086): `find`, `get`,
/// `save` and `delete` answered with `result` frames through the services REST uses, with REST's rules and codes.
@Suite("LiveQuery socket operations")
struct LiveQuerySocketOperationsTests {
    typealias T = LiveQueryTests

    /// Sends an operation and waits for its `result` or `error` frame; `events` collects the subscriptions' events
    /// that came first.
    static func call(_ lq: LiveQueryClient, _ message: JSONValue, events: inout [JSONValue]) async throws -> JSONValue {
        lq.send(message)
        while true {
            let frame = try await lq.next()
            if frame["op"] == "result" || frame["op"] == "error" { return frame }
            events.append(frame)
        }
    }

    static func call(_ lq: LiveQueryClient, _ message: JSONValue) async throws -> JSONValue {
        var events: [JSONValue] = []
        return try await call(lq, message, events: &events)
    }

    @Test(
        "find, get, save and delete answer as REST does for the same user, and the socket's own subscription hears the write", arguments: Backend.all)
    func operations(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (ann, annToken) = try await p.newUser("ann")
            for i in 0..<4 { _ = try await p.createId("Player", ["name": .string("p\(i)"), "score": .int(Int64(i * 10)), "secret": "x"]) }
            let mine = try await p.createId("Player", ["name": "mine", "score": 99, "ACL": [ann: ["read": true, "write": true]]])
            let masterOnly = try await p.createId("Player", ["name": "hidden", "score": 5, "ACL": .object([:])])
            try await p.setCLP(
                "Player",
                [
                    "find": ["*": true], "count": ["*": true], "get": ["*": true], "create": ["*": true], "update": ["*": true],
                    "delete": ["*": true],
                    "protectedFields": ["*": ["secret"]],
                ])
            let lq = try await T.client(p, token: annToken)

            // find: the same page and count as REST's find for ann (ACL and protected fields applied).
            let found = try await Self.call(
                lq,
                [
                    "op": "find", "requestId": 1,
                    "query": [
                        "className": "Player", "where": ["score": ["$gte": 10]], "order": "-score", "limit": 3,
                        "count": 1,
                    ],
                ])
            let rest = try await p.findAs(annToken, "Player", where: ["score": ["$gte": 10]], ["order": "-score", "limit": "3", "count": "1"])
            #expect(found["op"] == "result" && found["requestId"] == 1, "\(found) \(rest.json)")
            #expect(found["results"] == .array(rest.results), "\(found)")
            #expect(found["count"] == rest["count"] && found["count"] == 4)
            #expect(found["results"]?.arrayValue?.contains { $0["secret"] != nil } == false)

            // get: the object, or 101 for one ann may not read, as REST.
            let got = try await Self.call(lq, ["op": "get", "requestId": 2, "className": "Player", "objectId": .string(mine), "keys": "name"])
            #expect(got["object"]?["name"] == "mine" && got["object"]?["score"] == nil, "\(got)")
            let hidden = try await Self.call(lq, ["op": "get", "requestId": 3, "className": "Player", "objectId": .string(masterOnly)])
            #expect(hidden["op"] == "error" && hidden["code"] == 101 && hidden["requestId"] == 3, "\(hidden)")
            #expect(hidden["reconnect"] == false)

            // save creates (and the socket's own subscription hears it), then updates with an operation; delete.
            #expect(try await lq.subscribe(7, "Player", where: ["name": "new"])["op"] == "subscribed")
            var events: [JSONValue] = []
            let created = try await Self.call(
                lq, ["op": "save", "requestId": 4, "className": "Player", "object": ["name": "new", "score": 1]], events: &events)
            let id = try #require(created["object"]?["objectId"]?.stringValue, "\(created)")
            #expect(created["object"]?["createdAt"]?.stringValue != nil)
            // The event may come before or after the answer.
            var event = events.first { $0["op"] == "create" }
            if event == nil { event = try await lq.expect("create") }
            #expect(event?["object"]?["objectId"] == .string(id))
            let updated = try await Self.call(
                lq,
                [
                    "op": "save", "requestId": 5, "className": "Player", "objectId": .string(id),
                    "object": ["score": ["__op": "Increment", "amount": 4]],
                ])
            #expect(updated["object"]?["updatedAt"]?.stringValue != nil, "\(updated)")
            #expect(try await p.get("Player", id)["score"] == 5)
            let deleted = try await Self.call(lq, ["op": "delete", "requestId": 6, "className": "Player", "objectId": .string(id)])
            #expect(deleted["op"] == "result" && deleted["requestId"] == 6, "\(deleted)")
            #expect(try await p.request(.get, "/classes/Player/\(id)").code == 101)
            await lq.close()
        }
    }

    @Test("the rules and codes of REST: CLPs, the keyword denylist, user writes, not connected, bad messages", arguments: Backend.all)
    func refusals(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            _ = try await p.createId("Locked", ["v": 1])
            try await p.setCLP("Locked", ["find": ["*": true], "get": ["*": true]])
            let anon = try await LiveQueryClient.open(port: try #require(p.port))
            let early = try await Self.call(anon, ["op": "find", "requestId": 1, "query": ["className": "Locked"]])
            #expect(early["code"] == 2, "\(early)")
            _ = try await anon.connect()
            let restCreate = try await p.create("Locked", ["v": 2], master: false)
            let create = try await Self.call(anon, ["op": "save", "requestId": 2, "className": "Locked", "object": ["v": 2]])
            #expect(create["op"] == "error" && create["code"] == restCreate.json["code"] && create["code"] == 119, "\(create)")
            #expect(create["error"] == restCreate.json["error"])
            let denied = try await Self.call(
                anon, ["op": "save", "requestId": 3, "className": "Player", "object": ["name": "x", "nested": ["__proto__": ["a": 1]]]])
            #expect(denied["op"] == "error" && denied["code"] == 105, "\(denied)")
            let user = try await Self.call(anon, ["op": "save", "requestId": 4, "className": "_User", "object": ["username": "u", "password": "p"]])
            #expect(user["code"] == 119, "\(user)")
            let noQuery = try await Self.call(anon, ["op": "find", "requestId": 5])
            #expect(noQuery["code"] == 1, "\(noQuery)")
            let badWhere = try await Self.call(anon, ["op": "find", "requestId": 6, "query": ["className": "Locked", "limit": "many"]])
            let restBad = try await p.findAs(nil, "Locked", ["limit": "many"])
            #expect(badWhere["code"] == restBad.json["code"] && badWhere["code"] != nil, "\(badWhere) \(restBad.json) \(restBad.status)")
            await anon.close()
        }
    }

    @Test("rateLimit rules count socket operations as the REST requests they stand for, on the same counters", arguments: Backend.all)
    func rateLimited(_ backend: Backend) async throws {
        let rules = [
            RateLimitRule(requestPath: "/classes/Player", window: .seconds(60), count: 2, methods: ["GET"], message: "Slow down."),
            RateLimitRule(requestPath: "/classes/Player/*", window: .seconds(60), count: 1, methods: ["DELETE"]),
        ]
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live), rateLimits: rules) { p in
            let a = try await p.createId("Player", ["name": "a"])
            let b = try await p.createId("Player", ["name": "b"])
            let lq = try await T.client(p)
            let find: JSONValue = ["op": "find", "requestId": 1, "query": ["className": "Player"]]
            #expect(try await Self.call(lq, find)["results"]?.arrayValue?.count == 2)
            // The REST find takes the second count; the third find, over the socket, is refused as REST refuses it.
            #expect(try await p.findAs(nil, "Player").status == 200)
            let refused = try await Self.call(lq, find)
            #expect(refused["op"] == "error" && refused["code"] == 100 && refused["error"] == "Slow down." && refused["requestId"] == 1, "\(refused)")
            #expect(try await p.findAs(nil, "Player").status == 429)
            // A get (`/classes/Player/<id>`) is another route: not counted by the find's rule.
            let got = try await Self.call(lq, ["op": "get", "requestId": 2, "className": "Player", "objectId": .string(a)])
            #expect(got["object"]?["name"] == "a", "\(got)")
            // Deletes: one allowed, the second refused and the object kept.
            let first = try await Self.call(lq, ["op": "delete", "requestId": 3, "className": "Player", "objectId": .string(a)])
            #expect(first["op"] == "result", "\(first)")
            let second = try await Self.call(lq, ["op": "delete", "requestId": 4, "className": "Player", "objectId": .string(b)])
            #expect(second["code"] == 100, "\(second)")
            #expect(try await p.get("Player", b).status == 200)
            await lq.close()
        }
    }
}
