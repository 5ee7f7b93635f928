import Foundation
import ParsleyCore
import ParsleyDomain
import Testing

/// LiveQuery through a real WebSocket client against the real server, on both backends: the protocol's messages and
/// errors, every event kind, `keys`/`fields`, `watch`, `update` and `unsubscribe`.
@Suite("LiveQuery protocol and events")
struct LiveQueryTests {
    static let live = ["Message", "Secret", "Warmup", "_User", "_Session", "Team", "Player", "Locked", "Post"]

    /// Until the node hears its own writes (a PostgreSQL node's listener may still be connecting after the start).
    static func warmUp(_ p: ParseClient, _ lq: LiveQueryClient) async throws {
        try await lq.subscribe(9_999, "Warmup")
        for _ in 0..<100 {
            _ = try await p.createId("Warmup", [:])
            if let frame = try? await lq.next(timeout: .milliseconds(300)) {
                #expect(frame["op"] == "create", "\(frame)")
                break
            }
        }
        lq.send(["op": "unsubscribe", "requestId": 9_999])
        // Late events of the warm-up (a loaded machine delivers them after the loop gave up on them) are skipped.
        while true {
            let frame = try await lq.next()
            if frame["op"] == "unsubscribed" { break }
            #expect(frame["requestId"] == 9_999, "unexpected frame while warming up: \(frame)")
        }
        try await Task.sleep(for: .milliseconds(200))
        lq.discard { $0["requestId"] == 9_999 }
    }

    /// A connected client (with the master key unless `token` or `anonymous`).
    static func client(_ p: ParseClient, token: String? = nil, master: Bool = false) async throws -> LiveQueryClient {
        let lq = try await LiveQueryClient.open(port: try #require(p.port))
        let connected = try await lq.connect(sessionToken: token, masterKey: master ? TestServer.masterKey : nil)
        #expect(connected["op"] == "connected", "\(connected)")
        return lq
    }

    @Test("connect, subscribe, unsubscribe and their errors: codes 1, 2, 3, 4 as Parse Server sends them", arguments: Backend.all)
    func protocolMessages(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(Self.live)) { p in
            let port = try #require(p.port)
            let lq = try await LiveQueryClient.open(port: port)
            // Before connect: 2.
            let early = try await lq.subscribe(1, "Message")
            #expect(early["op"] == "error")
            #expect(early["code"] == 2)
            #expect(early["requestId"] == 1)
            // Not JSON: ignored. Unknown op: 3. Schema violations: 1.
            lq.sendText("this is not json")
            lq.send(["op": "dance"])
            let unknown = try await lq.expect("error")
            #expect(unknown["code"] == 3)
            #expect(unknown["error"] == "Get unknown operation")
            #expect(unknown["reconnect"] == true)
            lq.send(["op": "connect"])
            #expect(try await lq.expect("error")["error"] == "Missing required property: applicationId")
            lq.send(["op": "connect", "applicationId": .string(TestServer.appId), "extra": 1])
            let extra = try await lq.expect("error")
            #expect(extra["code"] == 1)
            #expect(extra["error"] == "Additional properties not allowed")
            // Wrong app id or master key: 4.
            lq.send(["op": "connect", "applicationId": "other-app"])
            #expect(try await lq.expect("error")["code"] == 4)
            lq.send(["op": "connect", "applicationId": .string(TestServer.appId), "masterKey": "wrong"])
            #expect(try await lq.expect("error")["code"] == 4)
            // connected: a UUID clientId, the installationId echoed on every frame but errors.
            let connected = try await lq.connect(extra: ["installationId": "inst-1", "javascriptKey": "anything"])
            #expect(connected["op"] == "connected")
            let clientId = try #require(connected["clientId"]?.stringValue)
            #expect(UUID(uuidString: clientId) != nil)
            #expect(connected["installationId"] == "inst-1")
            try await Self.warmUp(p, lq)
            let bad = try await lq.subscribe(1, "Message", keys: [])
            #expect(bad["code"] == 1)
            lq.send(["op": "subscribe", "requestId": "one", "query": ["className": "Message", "where": [:]]])
            #expect(try await lq.expect("error")["error"] == "Invalid type: string (expected number)")
            let subscribed = try await lq.subscribe(1, "Message", where: ["room": "lobby"])
            #expect(subscribed == ["op": "subscribed", "clientId": .string(clientId), "requestId": 1, "installationId": "inst-1"])
            lq.send(["op": "unsubscribe", "requestId": 1])
            #expect(try await lq.expect("unsubscribed")["requestId"] == 1)
            lq.send(["op": "unsubscribe", "requestId": 7])
            let missing = try await lq.expect("error")
            #expect(missing["code"] == 2)
            #expect(missing["requestId"] == 7)
            // A bad where is the find's error.
            _ = try await p.createId("Message", ["n": 0])
            let badWhere = try await lq.subscribe(2, "Message", where: ["n": ["$bogus": 1]])
            #expect(badWhere["op"] == "error")
            let findAnswer = try await p.find("Message", where: ["n": ["$bogus": 1]])
            #expect(badWhere["code"] == findAnswer["code"], "\(badWhere) vs \(findAnswer.json)")
            let text = try await lq.subscribe(3, "Message", where: ["title": ["$text": ["$search": ["$term": "x"]]]])
            #expect(text["code"] == 102)
            // A pattern that backtracks for ever is refused; an ordinary one is matched.
            let redos = try await lq.subscribe(4, "Message", where: ["text": ["$regex": "^(a+)+$"]])
            #expect(redos["code"] == 102)
            #expect(try await lq.subscribe(5, "Message", where: ["text": ["$regex": "^hel+o", "$options": "i"]])["op"] == "subscribed")
            _ = try await p.createId("Message", ["text": .string(String(repeating: "a", count: 40) + "!")])
            _ = try await p.createId("Message", ["text": "HELLO there"])
            let matched = try await lq.expect("create")
            #expect(matched["requestId"] == 5)
            #expect(matched["object"]?["text"] == "HELLO there")
            await lq.close()
        }
    }

    @Test("create, update, enter, leave and delete reach the subscription whose query matches, with original and className", arguments: Backend.all)
    func eventKinds(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(Self.live)) { p in
            let lq = try await Self.client(p)
            try await Self.warmUp(p, lq)
            let other = try await Self.client(p)
            #expect(try await lq.subscribe(1, "Message", where: ["room": "lobby"])["op"] == "subscribed")
            #expect(try await other.subscribe(5, "Message", where: ["room": "kitchen"])["op"] == "subscribed")
            let id = try await p.createId("Message", ["room": "lobby", "text": "hi", "n": 1])
            let create = try await lq.expect("create")
            #expect(create["requestId"] == 1)
            #expect(create["object"]?["className"] == "Message")
            #expect(create["object"]?["objectId"] == .string(id))
            #expect(create["object"]?["text"] == "hi")
            #expect(create["object"]?["createdAt"]?.stringValue != nil)
            #expect(create["original"] == nil)
            _ = try await p.update("Message", id, ["n": ["__op": "Increment", "amount": 1]])
            let update = try await lq.expect("update")
            #expect(update["object"]?["n"] == 2)
            #expect(update["original"]?["n"] == 1)
            _ = try await p.update("Message", id, ["room": "kitchen"])
            let leave = try await lq.expect("leave")
            #expect(leave["object"]?["room"] == "kitchen")
            #expect(leave["original"]?["room"] == "lobby")
            let enter = try await other.expect("enter")
            #expect(enter["requestId"] == 5)
            #expect(enter["original"]?["room"] == "lobby")
            _ = try await p.update("Message", id, ["room": "lobby"])
            #expect(try await lq.expect("enter")["object"]?["room"] == "lobby")
            #expect(try await other.expect("leave")["object"]?["room"] == "lobby")
            _ = try await p.delete("Message", id)
            let delete = try await lq.expect("delete")
            #expect(delete["object"]?["objectId"] == .string(id))
            #expect(delete["original"] == nil)
            // Another class, and a class that is not live: nothing.
            _ = try await p.createId("Elsewhere", ["room": "lobby"])
            try await lq.nothing()
            try await other.nothing()
            await lq.close()
            await other.close()
        }
    }

    @Test(
        "keys (and the older fields) cut objects; watch sends updates only when a watched field changed; update replaces the query",
        arguments: Backend.all)
    func keysWatchAndUpdate(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(Self.live)) { p in
            let lq = try await Self.client(p)
            try await Self.warmUp(p, lq)
            #expect(try await lq.subscribe(1, "Player", where: ["team": "red"], keys: ["score"], watch: ["score"])["op"] == "subscribed")
            lq.send(["op": "subscribe", "requestId": 2, "query": ["className": "Player", "where": ["team": "blue"], "fields": ["name"]]])
            try await lq.expect("subscribed")
            let red = try await p.createId("Player", ["team": "red", "score": 1, "name": "Ann", "ACL": ["*": ["read": true]]])
            let created = try await lq.expect("create")
            let object = try #require(created["object"]?.objectValue)
            #expect(Set(object.keys) == ["className", "objectId", "createdAt", "updatedAt", "ACL", "score"])
            _ = try await p.update("Player", red, ["name": "Annie"])
            try await lq.nothing()
            _ = try await p.update("Player", red, ["score": 5])
            let update = try await lq.expect("update")
            #expect(update["object"]?["score"] == 5)
            #expect(update["original"]?["score"] == 1)
            #expect(update["object"]?["name"] == nil)
            _ = try await p.createId("Player", ["team": "blue", "score": 1, "name": "Bob"])
            let blue = try await lq.expect("create")
            #expect(blue["requestId"] == 2)
            #expect(blue["object"]?["name"] == "Bob")
            #expect(blue["object"]?["score"] == nil)
            // update: subscription 1 now follows blue players.
            #expect(try await lq.subscribe(1, "Player", where: ["team": "blue"], op: "update")["op"] == "subscribed")
            _ = try await p.update("Player", red, ["score": 6])
            try await lq.nothing()
            _ = try await p.createId("Player", ["team": "blue", "name": "Cy"])
            let both = [try await lq.expect("create"), try await lq.expect("create")]
            #expect(Set(both.compactMap { $0["requestId"]?.integerValue }) == [1, 2])
            // Writes in a batch, and many writes to one object, arrive in commit order.
            for i in 0..<20 { _ = try await p.update("Player", red, ["score": .int(Int64(100 + i)), "team": "blue"]) }
            var scores: [Int] = []
            while scores.count < 40 {
                let f = try await lq.next()
                if f["requestId"] == 1, let s = f["object"]?["score"]?.integerValue { scores.append(s) }
                if f["requestId"] == 2 { scores.append(-1) }
            }
            #expect(scores.filter { $0 >= 0 } == Array(100..<120))
            await lq.close()
        }
    }

    @Test("$inQuery and $notInQuery are matched through storage (before and after the write); pointers by equality", arguments: Backend.all)
    func subQueries(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(Self.live)) { p in
            let lq = try await Self.client(p)
            try await Self.warmUp(p, lq)
            let good = try await p.createId("Team", ["good": true])
            let bad = try await p.createId("Team", ["good": false])
            let teamPointer = { (id: String) -> JSONValue in ["__type": "Pointer", "className": "Team", "objectId": .string(id)] }
            #expect(
                try await lq.subscribe(1, "Player", where: ["team": ["$inQuery": ["className": "Team", "where": ["good": true]]]])["op"]
                    == "subscribed")
            #expect(try await lq.subscribe(2, "Player", where: ["team": teamPointer(bad)])["op"] == "subscribed")
            #expect(
                try await lq.subscribe(3, "Player", where: ["team": ["$notInQuery": ["className": "Team", "where": ["good": false]]]])["op"]
                    == "subscribed")
            let player = try await p.createId("Player", ["team": teamPointer(good), "name": "a"])
            let created = [try await lq.expect("create"), try await lq.expect("create")]
            #expect(Set(created.compactMap { $0["requestId"]?.integerValue }) == [1, 3])
            try await lq.nothing()
            _ = try await p.update("Player", player, ["team": teamPointer(bad)])
            let frames = try await [lq.next(), lq.next(), lq.next()].map {
                "\($0["op"]?.stringValue ?? "-")\($0["requestId"]?.integerValue.map { "\($0)" } ?? "-")"
            }
            #expect(Set(frames) == ["leave1", "enter2", "leave3"])
            await lq.close()
        }
    }
}
