import Foundation
import ParsleyCore
import ParsleyDomain
import Testing

/// LiveQuery never tells a subscriber what it may not read: not the new state of an object it loses access to, not the
/// previous state of an object it could not read, not the changes of a protected field through `watch`, not a field
/// that became protected after it subscribed.
@Suite("LiveQuery hardening")
struct LiveQueryHardeningTests {
    typealias T = LiveQueryTests

    /// Every operation open to everyone, with `protectedFields`.
    static func openCLP(protected: JSONValue = [:]) -> JSONValue {
        [
            "find": ["*": true], "get": ["*": true], "create": ["*": true], "update": ["*": true], "delete": ["*": true],
            "addField": ["*": true], "protectedFields": protected,
        ]
    }

    @Test("a reader who loses read access in a write that also changes fields gets a leave with only what it saw before", arguments: Backend.all)
    func losingReaderSeesOnlyThePast(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (ann, annToken) = try await p.newUser("ann")
            let (bob, bobToken) = try await p.newUser("bob")
            _ = try await p.createId("Secret", ["room": "z", "text": "", "pin": "0"])
            try await p.setCLP("Secret", Self.openCLP(protected: ["*": ["pin"]]))
            _ = try await p.createId("Post", ["owner": p.userPointer(ann), "title": ""])
            try await p.setCLP("Post", ["readUserFields": ["owner"]])
            let annLQ = try await T.client(p, token: annToken)
            let bobLQ = try await T.client(p, token: bobToken)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            for lq in [annLQ, bobLQ, master] { #expect(try await lq.subscribe(1, "Secret", where: ["room": "a"])["op"] == "subscribed") }
            let id = try await p.createId("Secret", ["room": "a", "text": "old text", "pin": "1111", "ACL": ["*": ["read": true]]])
            for lq in [annLQ, bobLQ, master] { try await lq.expect("create") }
            // ACL from public to ann only, and new values, in one write.
            _ = try await p.update("Secret", id, ["text": "changed text", "pin": "2222", "ACL": [ann: ["read": true]]])
            let left = try await bobLQ.expect("leave")
            #expect(left["object"]?["objectId"] == .string(id))
            #expect(left["object"]?["text"] == "old text")
            #expect(left["object"]?["ACL"] == ["*": ["read": true]])
            #expect(left["object"]?["pin"] == nil)
            #expect(left["original"]?["text"] == "old text")
            #expect(left["original"]?["pin"] == nil)
            let leftText = JSONWriter.string(left)
            #expect(!leftText.contains("changed text") && !leftText.contains("2222") && !leftText.contains(ann), "\(leftText)")
            let kept = try await annLQ.expect("update")
            #expect(kept["object"]?["text"] == "changed text")
            #expect(kept["object"]?["pin"] == nil)
            #expect(try await master.expect("update")["object"]?["pin"] == "2222")
            _ = try await p.update("Secret", id, ["text": "later"])
            try await annLQ.expect("update")
            try await master.expect("update")
            try await bobLQ.nothing()
            // Pointer permissions: the post's owner changes from bob to ann with its title.
            #expect(try await bobLQ.subscribe(2, "Post")["op"] == "subscribed")
            let post = try await p.createId("Post", ["owner": p.userPointer(bob), "title": "bob's draft"])
            #expect(try await bobLQ.expect("create")["object"]?["objectId"] == .string(post))
            _ = try await p.update("Post", post, ["owner": p.userPointer(ann), "title": "ann's now"])
            let gone = try await bobLQ.expect("leave")
            #expect(gone["object"]?["objectId"] == .string(post))
            #expect(gone["object"]?["title"] == "bob's draft")
            #expect(gone["object"]?["owner"]?["objectId"] == .string(bob))
            #expect(!JSONWriter.string(gone).contains("ann's now"))
            try await bobLQ.nothing()
            for lq in [annLQ, bobLQ, master] { await lq.close() }
        }
    }

    @Test("original is filtered with the rights before the write: an object unreadable before enters with only its identity", arguments: Backend.all)
    func originalUsesRightsBeforeTheWrite(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (ann, _) = try await p.newUser("ann")
            let (bob, bobToken) = try await p.newUser("bob")
            _ = try await p.createId("Team", ["owner": p.userPointer(ann), "pin": "0", "name": ""])
            try await p.setCLP("Team", Self.openCLP(protected: ["*": ["pin"], "userField:owner": []]))
            let bobLQ = try await T.client(p, token: bobToken)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            #expect(try await bobLQ.subscribe(1, "Message")["op"] == "subscribed")
            let id = try await p.createId("Message", ["text": "private words", "ACL": [ann: ["read": true]]])
            try await bobLQ.nothing()
            _ = try await p.update("Message", id, ["text": "public words", "ACL": ["*": ["read": true]]])
            let entered = try await bobLQ.expect("enter")
            #expect(entered["object"]?["text"] == "public words")
            #expect(entered["original"]?["objectId"] == .string(id))
            #expect(entered["original"]?["className"] == "Message")
            #expect(entered["original"]?["text"] == nil)
            #expect(entered["original"]?["ACL"] == nil)
            #expect(!JSONWriter.string(entered).contains("private words"))
            // Protected fields per version: bob becomes the owner; the original is stripped as he saw it then.
            #expect(try await bobLQ.subscribe(2, "Team")["op"] == "subscribed")
            let team = try await p.createId("Team", ["owner": p.userPointer(ann), "pin": "p-ann", "name": "t", "ACL": ["*": ["read": true]]])
            #expect(try await bobLQ.expect("create")["object"]?["pin"] == nil)
            _ = try await p.update("Team", team, ["owner": p.userPointer(bob), "pin": "p-bob"])
            let handed = try await bobLQ.expect("update")
            #expect(handed["object"]?["pin"] == "p-bob")
            #expect(handed["original"]?["pin"] == nil)
            #expect(!JSONWriter.string(handed).contains("p-ann"))
            for lq in [bobLQ, master] { await lq.close() }
        }
    }

    @Test("watch on a protected, internal or credential field is refused with 119 (subscribe and update); keys only cut", arguments: Backend.all)
    func watchCannotProbe(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (_, bobToken) = try await p.newUser("bob")
            _ = try await p.createId("Secret", ["room": "z", "text": "", "pin": "0"])
            try await p.setCLP("Secret", Self.openCLP(protected: ["*": ["pin"]]))
            let bobLQ = try await T.client(p, token: bobToken)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            let refusals: [(Int, String, [String])] = [
                (1, "Secret", ["pin"]), (2, "Secret", ["room", "pin.digits"]), (3, "_User", ["email"]), (4, "_User", ["authData"]),
                (5, "_User", ["_hashed_password"]), (6, "_Session", ["sessionToken"]), (7, "Secret", ["_rperm"]),
            ]
            for (requestId, className, watch) in refusals {
                let refused = try await bobLQ.subscribe(requestId, className, watch: watch)
                #expect(refused["op"] == "error", "\(className) \(watch): \(refused)")
                #expect(refused["code"] == 119, "\(className) \(watch): \(refused)")
                #expect(refused["reconnect"] == false)
            }
            // `keys` naming a protected field is accepted and only cuts: the field never comes.
            #expect(try await bobLQ.subscribe(8, "Secret", where: ["room": "a"], keys: ["pin", "text"], watch: ["text"])["op"] == "subscribed")
            // An update of the subscription is checked as a subscribe is: watch and where.
            #expect(try await bobLQ.subscribe(8, "Secret", where: ["room": "a"], watch: ["pin"], op: "update")["code"] == 119)
            #expect(try await bobLQ.subscribe(8, "Secret", where: ["room": "a", "pin": "1111"], op: "update")["code"] == 119)
            #expect(try await master.subscribe(1, "Secret", where: ["room": "a"], watch: ["pin"])["op"] == "subscribed")
            let id = try await p.createId("Secret", ["room": "a", "text": "t", "pin": "1111"])
            #expect(try await master.expect("create")["object"]?["pin"] == "1111")
            let created = try await bobLQ.expect("create")
            #expect(created["object"]?["text"] == "t")
            #expect(created["object"]?["pin"] == nil)
            _ = try await p.update("Secret", id, ["pin": "2222"])
            #expect(try await master.expect("update")["object"]?["pin"] == "2222")
            try await bobLQ.nothing()
            for lq in [bobLQ, master] { await lq.close() }
        }
    }

    @Test("beforeSubscribe cannot bring a protected field into the where or the watch (119)", arguments: Backend.all)
    func beforeSubscribeIsChecked(_ backend: Backend) async throws {
        var cloud = CloudCode()
        cloud.beforeSubscribe("Secret") { req in
            if req.whereValue["room"] == "watch" { req.watch = ["pin"] }
            if req.whereValue["room"] == "query" { req.whereValue = ["pin": "1111"] }
        }
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live), cloud: cloud) { p in
            let (_, bobToken) = try await p.newUser("bob")
            _ = try await p.createId("Secret", ["room": "z", "pin": "0"])
            try await p.setCLP("Secret", Self.openCLP(protected: ["*": ["pin"]]))
            let bobLQ = try await T.client(p, token: bobToken)
            #expect(try await bobLQ.subscribe(1, "Secret", where: ["room": "watch"])["code"] == 119)
            #expect(try await bobLQ.subscribe(2, "Secret", where: ["room": "query"])["code"] == 119)
            #expect(try await bobLQ.subscribe(3, "Secret", where: ["room": "a"])["op"] == "subscribed")
            #expect(try await bobLQ.subscribe(3, "Secret", where: ["room": "watch"], op: "update")["code"] == 119)
            #expect(try await bobLQ.subscribe(3, "Secret", where: ["room": "query"], op: "update")["code"] == 119)
            await bobLQ.close()
        }
    }

    @Test("a field the query or watch reads that becomes protected later ends the subscription with 119 at the next event", arguments: Backend.all)
    func protectedLaterEndsSubscription(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (_, bobToken) = try await p.newUser("bob")
            _ = try await p.createId("Secret", ["room": "z", "code": "", "pin": "0"])
            try await p.setCLP("Secret", Self.openCLP())
            let bobLQ = try await T.client(p, token: bobToken)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            #expect(try await bobLQ.subscribe(1, "Secret", where: ["code": "x"])["op"] == "subscribed")
            #expect(try await bobLQ.subscribe(2, "Secret", where: ["room": "a"], watch: ["pin"])["op"] == "subscribed")
            #expect(try await master.subscribe(1, "Secret", where: ["room": "a"])["op"] == "subscribed")
            let id = try await p.createId("Secret", ["room": "a", "code": "x", "pin": "1"])
            let first = [try await bobLQ.expect("create"), try await bobLQ.expect("create")]
            #expect(Set(first.compactMap { $0["requestId"]?.integerValue }) == [1, 2])
            try await master.expect("create")
            try await p.setCLP("Secret", Self.openCLP(protected: ["*": ["code", "pin"]]))
            _ = try await p.update("Secret", id, ["pin": "2", "code": "y"])
            try await master.expect("update")
            let ended = [try await bobLQ.expect("error"), try await bobLQ.expect("error")]
            #expect(Set(ended.compactMap { $0["requestId"]?.integerValue }) == [1, 2])
            for e in ended {
                #expect(e["code"] == 119)
                // Sanitized as REST answers the same refusal (`enableSanitizedErrorResponse`, on by default).
                #expect(e["error"] == "Permission denied")
                #expect(e["reconnect"] == false)
            }
            _ = try await p.update("Secret", id, ["pin": "3", "code": "x"])
            try await master.expect("update")
            try await bobLQ.nothing()
            for lq in [bobLQ, master] { await lq.close() }
        }
    }
}
