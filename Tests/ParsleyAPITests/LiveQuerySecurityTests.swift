import HTTPTypes
import Foundation
import ParsleyCore
import ParsleyDomain
import Testing

/// LiveQuery applies the read rules of a find to every event for every subscriber: ACLs with roles (changes seen
/// without reconnecting), CLPs and pointer permissions, protected fields, credentials never sent, sessions that end.
@Suite("LiveQuery security")
struct LiveQuerySecurityTests {
    typealias T = LiveQueryTests

    @Test(
        "ACL: a subscriber who may not read an object hears nothing of it, not even leave; roles count, also when they change later",
        arguments: Backend.all)
    func acls(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (ann, annToken) = try await p.newUser("ann")
            let (bob, bobToken) = try await p.newUser("bob")
            let annLQ = try await T.client(p, token: annToken)
            let bobLQ = try await T.client(p, token: bobToken)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            for lq in [annLQ, bobLQ, master] { #expect(try await lq.subscribe(1, "Secret", where: ["room": "a"])["op"] == "subscribed") }
            let own = try await p.createId("Secret", ["room": "a", "v": 1, "ACL": [ann: ["read": true, "write": true]]])
            #expect(try await annLQ.expect("create")["object"]?["objectId"] == .string(own))
            #expect(try await master.expect("create")["object"]?["objectId"] == .string(own))
            _ = try await p.update("Secret", own, ["room": "b"])
            #expect(try await annLQ.expect("leave")["object"]?["room"] == "b")
            try await master.expect("leave")
            _ = try await p.update("Secret", own, ["room": "a", "ACL": ["*": ["read": true]]])
            // Bob could not read the object before: its original carries only what names it.
            let entered = try await bobLQ.expect("enter")
            #expect(entered["object"]?["room"] == "a")
            #expect(entered["original"]?["objectId"] == .string(own))
            #expect(entered["original"]?["room"] == nil)
            try await annLQ.expect("enter")
            try await master.expect("enter")
            // Private again while matching: ann and the master see an update, bob sees it go (he saw it before).
            _ = try await p.update("Secret", own, ["ACL": [ann: ["read": true]]])
            try await annLQ.expect("update")
            try await master.expect("update")
            #expect(try await bobLQ.expect("leave")["object"]?["objectId"] == .string(own))
            _ = try await p.delete("Secret", own)
            try await annLQ.expect("delete")
            try await master.expect("delete")
            try await bobLQ.nothing()
            // Roles: readable by role Staff; bob joins later and hears the next write without reconnecting.
            let roleId = try await p.createRole("Staff", users: [ann])
            let staffOnly = try await p.createId("Secret", ["room": "a", "ACL": ["role:Staff": ["read": true]]])
            #expect(try await annLQ.expect("create")["object"]?["objectId"] == .string(staffOnly))
            try await master.expect("create")
            try await bobLQ.nothing()
            let joined = try await p.request(.put, "/roles/\(roleId)", ["users": ["__op": "AddRelation", "objects": [p.userPointer(bob)]]])
            #expect(joined.status == 200)
            _ = try await p.update("Secret", staffOnly, ["v": 2])
            // Roles are read at each event: the original is readable to bob now too, so this is an update for him.
            #expect(try await bobLQ.expect("update")["object"]?["v"] == 2)
            for lq in [annLQ, bobLQ, master] { await lq.close() }
        }
    }

    @Test(
        "CLP: find closed is refused at subscribe (119), requiresAuthentication (101 / 209), pointer permissions per event; internal classes 119",
        arguments: Backend.all)
    func classLevelPermissions(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (ann, annToken) = try await p.newUser("ann")
            let (_, bobToken) = try await p.newUser("bob")
            _ = try await p.createId("Locked", ["owner": p.userPointer(ann)])
            _ = try await p.createId("Post", ["owner": p.userPointer(ann)])
            _ = try await p.createId("Team", ["owner": p.userPointer(ann)])
            try await p.setCLP("Locked", ["get": ["*": true]])
            try await p.setCLP("Team", ["find": ["requiresAuthentication": true], "get": ["requiresAuthentication": true]])
            // Pointer permissions only: each user reads the posts whose owner they are.
            try await p.setCLP("Post", ["readUserFields": ["owner"]])
            let anon = try await T.client(p)
            let closed = try await anon.subscribe(1, "Locked")
            #expect(closed["op"] == "error")
            #expect(closed["code"] == 119)
            #expect(closed["reconnect"] == false)
            let unauthenticated = try await anon.subscribe(2, "Team")
            #expect(unauthenticated["code"] == 101 || unauthenticated["code"] == 119)
            #expect(try await anon.subscribe(3, "_PushStatus")["code"] == 119)
            #expect(try await anon.subscribe(4, "_Installation")["code"] == 119)
            let annLQ = try await T.client(p, token: annToken)
            let bobLQ = try await T.client(p, token: bobToken)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            #expect(try await annLQ.subscribe(1, "Post")["op"] == "subscribed")
            #expect(try await bobLQ.subscribe(1, "Post")["op"] == "subscribed")
            #expect(try await master.subscribe(1, "Locked")["op"] == "subscribed")
            let post = try await p.createId("Post", ["owner": p.userPointer(ann), "title": "mine"])
            #expect(try await annLQ.expect("create")["object"]?["objectId"] == .string(post))
            try await bobLQ.nothing()
            _ = try await p.createId("Locked", ["n": 1])
            try await master.expect("create")
            // The CLP changes after subscribing: events stop at once.
            try await p.setCLP("Post", ["find": [:], "get": [:]])
            _ = try await p.update("Post", post, ["title": "still mine"])
            try await annLQ.nothing()
            for lq in [anon, annLQ, bobLQ, master] { await lq.close() }
        }
    }

    @Test(
        "one event to many subscribers of one unindexed query: each gets what its own rights allow (ACL, role, protected fields), in subscription order",
        arguments: Backend.all)
    func sharedQueryDifferentRights(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (ann, annToken) = try await p.newUser("ann")
            let (bob, bobToken) = try await p.newUser("bob")
            let (cy, cyToken) = try await p.newUser("cy")
            let (_, danToken) = try await p.newUser("dan")
            _ = try await p.createRole("Staff", users: [bob, cy])
            _ = try await p.createId("Secret", ["n": 0, "pin": "0"])
            let open: JSONValue = ["*": true]
            try await p.setCLP(
                "Secret",
                [
                    "find": open, "get": open, "create": open, "update": open, "delete": open, "addField": open,
                    "protectedFields": ["*": ["pin"], "role:Staff": []],
                ])
            let clients = [
                ("anonymous", try await T.client(p)), ("ann", try await T.client(p, token: annToken)),
                ("bob", try await T.client(p, token: bobToken)), ("cy", try await T.client(p, token: cyToken)),
                ("dan", try await T.client(p, token: danToken)), ("master", try await T.client(p, master: true)),
            ]
            try await T.warmUp(p, clients[5].1)
            // The same range query (no equality to index it) for everyone; ann subscribes twice, to a wider range too.
            for (_, lq) in clients { #expect(try await lq.subscribe(1, "Secret", where: ["n": ["$gt": 5]])["op"] == "subscribed") }
            #expect(try await clients[1].1.subscribe(2, "Secret", where: ["n": ["$gt": 1]])["op"] == "subscribed")
            // Readable by ann and by the role; dan and the anonymous client may not read it.
            let acl: JSONValue = [ann: ["read": true], "role:Staff": ["read": true]]
            let id = try await p.createId("Secret", ["n": 7, "pin": "1234", "ACL": acl])
            for (name, lq) in clients where name == "bob" || name == "cy" || name == "master" {
                let created = try await lq.expect("create")
                #expect(created["object"]?["objectId"] == .string(id), "\(name)")
                #expect(created["object"]?["pin"] == "1234", "\(name) may see pin")
            }
            // ann: both subscriptions, in the order they were made, neither with the protected pin.
            let first = try await clients[1].1.expect("create")
            let second = try await clients[1].1.expect("create")
            #expect(first["requestId"] == 1 && second["requestId"] == 2)
            #expect(first["object"]?["pin"] == nil && second["object"]?["pin"] == nil)
            #expect(first["object"]?["n"] == 7)
            for (name, lq) in clients where name == "anonymous" || name == "dan" { try await lq.nothing() }
            // Not matching the range: only ann's wider subscription hears it.
            _ = try await p.createId("Secret", ["n": 3, "ACL": ["*": ["read": true]]])
            #expect(try await clients[1].1.expect("create")["requestId"] == 2)
            // A subscription given up is not served, the others with the same query still are.
            clients[2].1.send(["op": "unsubscribe", "requestId": 1])
            try await clients[2].1.expect("unsubscribed")
            _ = try await p.createId("Secret", ["n": 9, "ACL": ["*": ["read": true]]])
            for (name, lq) in clients where name != "bob" {
                #expect(try await lq.expect("create")["object"]?["n"] == 9, "\(name)")
            }
            try await clients[1].1.expect("create")
            for (_, lq) in clients { try await lq.nothing() }
            for (_, lq) in clients { await lq.close() }
        }
    }

    @Test("protected fields and credentials never leave: _User email, authData, sessionToken; a user's own _Session only", arguments: Backend.all)
    func protectedFields(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (ann, annToken) = try await p.newUser("ann")
            let (_, bobToken) = try await p.newUser("bob")
            _ = try await p.createId("Secret", ["room": "z", "pin": "0"])
            try await p.setCLP(
                "Secret",
                [
                    "find": ["*": true], "get": ["*": true], "create": ["*": true], "update": ["*": true], "delete": ["*": true],
                    "addField": ["*": true], "protectedFields": ["*": ["pin"]],
                ])
            let bobLQ = try await T.client(p, token: bobToken)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            #expect(try await bobLQ.subscribe(1, "_User")["op"] == "subscribed")
            #expect(try await bobLQ.subscribe(2, "Secret", keys: ["pin", "room"])["op"] == "subscribed")
            #expect(try await master.subscribe(2, "Secret")["op"] == "subscribed")
            // Protected fields cannot be queried either (as in a find).
            #expect(try await bobLQ.subscribe(3, "Secret", where: ["pin": "1234"])["code"] == 119)
            _ = try await p.update("_User", ann, ["email": "ann@example.com", "nickname": "A", "ACL": ["*": ["read": true]]])
            let user = try await bobLQ.expect("enter")
            #expect(user["object"]?["nickname"] == "A")
            #expect(user["object"]?["email"] == nil)
            #expect(user["original"]?["email"] == nil)
            #expect(user["object"]?["authData"] == nil)
            #expect(user["object"]?["sessionToken"] == nil)
            #expect(user["object"]?["password"] == nil)
            #expect(user["object"]?["_hashed_password"] == nil)
            _ = try await p.createId("Secret", ["room": "a", "pin": "1234"])
            let secret = try await bobLQ.expect("create")
            #expect(secret["object"]?["room"] == "a")
            #expect(secret["object"]?["pin"] == nil)
            #expect(try await master.expect("create")["object"]?["pin"] == "1234")
            // _Session: without a session 209 (no reconnect); with one, only the user's own sessions, never a token.
            let anon = try await T.client(p)
            let refused = try await anon.subscribe(1, "_Session")
            #expect(refused["code"] == 209)
            #expect(refused["reconnect"] == false)
            #expect(try await bobLQ.subscribe(4, "_Session")["op"] == "subscribed")
            bobLQ.send(["op": "unsubscribe", "requestId": 1])
            try await bobLQ.expect("unsubscribed")
            _ = try await p.request(.post, "/login", ["username": "ann", "password": "pw-ann"], master: false)
            let login = try await p.request(.post, "/login", ["username": "bob", "password": "pw-bob"], master: false)
            #expect(login.status == 200)
            let session = try await bobLQ.expect("create")
            #expect(session["requestId"] == 4)
            #expect(session["object"]?["user"]?["objectId"] != .string(ann))
            #expect(session["object"]?["sessionToken"] == nil)
            try await bobLQ.nothing()
            _ = annToken
            for lq in [anon, bobLQ, master] { await lq.close() }
        }
    }

    @Test(
        "a revoked session ends its subscriptions with error 209 (no reconnect) and nothing more is sent; a bad token at connect is 209",
        arguments: Backend.all)
    func sessionRevocation(_ backend: Backend) async throws {
        // (`_Session` not live: its deletes still reach LiveQuery.)
        try await TestServer.with(backend: backend, TestServer.liveOptions(["Message", "Warmup"])) { p in
            let (_, annToken) = try await p.newUser("ann")
            let annLQ = try await T.client(p, token: annToken)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            #expect(try await annLQ.subscribe(1, "Message")["op"] == "subscribed")
            _ = try await p.createId("Message", ["text": "one"])
            try await annLQ.expect("create")
            let logout = try await p.asUser(annToken, .post, "/logout")
            #expect(logout.status == 200)
            let ended = try await annLQ.expect("error")
            #expect(ended["code"] == 209)
            #expect(ended["requestId"] == 1)
            #expect(ended["reconnect"] == false)
            _ = try await p.createId("Message", ["text": "two"])
            try await annLQ.nothing()
            // Subscribing again with the revoked token fails.
            #expect(try await annLQ.subscribe(2, "Message")["code"] == 209)
            let stale = try await LiveQueryClient.open(port: try #require(p.port))
            let refused = try await stale.connect(sessionToken: annToken)
            #expect(refused["op"] == "error")
            #expect(refused["code"] == 209)
            for lq in [annLQ, master, stale] { await lq.close() }
        }
    }
}
