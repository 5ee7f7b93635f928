import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Credentials and private fields never leave, on every read path; internal classes are closed to clients; Parse
/// Server 7's answers for sessions, log-in and sign-up edge cases; the request keyword denylist; idempotency.
@Suite("Hardening: credentials, sessions, keywords, idempotency")
struct HardeningSecurityTests {
    /// Anonymous sign-up (authData.anonymous): the id is that user's login.
    func anonymousUser(_ p: ParseClient, _ id: String) async throws -> (id: String, token: String) {
        let r = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": .string(id)]], "ACL": ["*": ["read": true]]], master: false)
        guard let objectId = r["objectId"]?.stringValue, let token = r["sessionToken"]?.stringValue else {
            throw Failure("anonymous sign-up: \(r.json)")
        }
        return (objectId, token)
    }

    @Test(
        "authData, session tokens and password hashes never reach another user: get, find, include, keys, batch, sub-queries", arguments: Backend.all)
    func credentialsNeverLeave(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let victim = try await anonymousUser(p, "secret-anonymous-login-id")
            let other = try await p.signUp("mallory")
            let pointer = p.userPointer(victim.id)
            _ = try await p.createId("Team", ["members": [pointer], "captain": pointer, "ACL": ["*": ["read": true]]])
            // The victim's login id, token or any password hash (the caller's own session token may appear: it is theirs).
            func leaks(_ r: Reply) -> Bool {
                let text = JSONWriter.string(r.json)
                return text.contains("secret-anonymous-login-id") || text.contains(victim.token) || text.contains("_hashed_password")
                    || text.contains("\"anonymous\"")
            }
            let reads: [Reply] = [
                try await p.call(other.token, .get, "/classes/Team?include=members"),
                try await p.call(other.token, .get, "/classes/Team?include=captain"),
                try await p.call(other.token, .get, "/classes/Team?include=*"),
                try await p.call(other.token, .get, "/classes/Team?keys=members.authData,captain.authData"),
                try await p.call(nil, .get, "/classes/Team?include=members,captain"),
                try await p.call(other.token, .get, "/users/\(victim.id)"),
                try await p.call(other.token, .get, "/classes/_User/\(victim.id)"),
                try await p.call(other.token, .get, "/users"),
                try await p.call(other.token, .get, "/users?keys=authData"),
                try await p.call(
                    other.token, .post, "/batch",
                    [
                        "requests": [
                            ["method": "GET", "path": "/parse/classes/Team", "body": ["include": "members"]],
                            ["method": "GET", "path": .string("/parse/users/\(victim.id)")],
                        ]
                    ]),
            ]
            for (i, r) in reads.enumerated() {
                #expect(r.status == 200, "read \(i): \(r.json)")
                #expect(!leaks(r), "read \(i) leaked: \(r.json)")
            }
            // The included user itself is there (publicly readable), only its credentials are not.
            let included = try await p.call(other.token, .get, "/classes/Team?include=captain")
            #expect(included.results.first?["captain"]?["objectId"]?.stringValue == victim.id)
            // The user itself and the master key see authData.
            let me = try await p.call(victim.token, .get, "/users/me")
            #expect(me["authData"]?["anonymous"]?["id"] == "secret-anonymous-login-id")
            let byMaster = try await p.request(.get, "/classes/Team?include=captain")
            #expect(byMaster.results.first?["captain"]?["authData"]?["anonymous"]?["id"] == "secret-anonymous-login-id")
            // /users/me of another token is that token's user, never the victim.
            let otherMe = try await p.call(other.token, .get, "/users/me")
            #expect(otherMe["objectId"]?.stringValue == other.id)
        }
    }

    @Test("queries on authData (equality, $exists, dotted keys, sub-queries) are refused for clients (119)", arguments: Backend.all)
    func authDataIsNotAnOracle(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let victim = try await anonymousUser(p, "guess-me")
            let other = try await p.signUp("prober")
            let probes: [JSONValue] = [
                ["authData.anonymous.id": "guess-me"],
                ["authData": ["$exists": true]],
                ["authData.anonymous": ["$exists": true]],
                ["$or": [["authData.anonymous.id": "guess-me"], ["username": "nobody"]]],
            ]
            for probe in probes {
                for token in [other.token, nil] as [String?] {
                    let r = try await p.findAs(token, "_User", where: probe)
                    #expect(r.status == 400, "\(probe)")
                    #expect(r.code == 119, "\(probe): \(r.json)")
                }
            }
            // Through a sub-query of another class.
            _ = try await p.createId("Team", ["captain": p.userPointer(victim.id)])
            let sub = try await p.findAs(
                other.token, "Team", where: ["captain": ["$inQuery": ["className": "_User", "where": ["authData.anonymous.id": "guess-me"]]]])
            #expect(sub.code == 119)
            let select = try await p.findAs(
                other.token, "Team", where: ["captain": ["$select": ["query": ["className": "_User", "where": [:]], "key": "authData"]]])
            #expect(select.code == 119)
            // The master key may.
            let master = try await p.find("_User", where: ["authData.anonymous.id": "guess-me"])
            #expect(master.results.compactMap { $0["objectId"]?.stringValue } == [victim.id])
        }
    }

    @Test("a _Session pointer is resolved for its own user only; GET /sessions without a token is 209", arguments: Backend.all)
    func sessionsStayPrivate(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.signUp("alice")
            let bob = try await p.signUp("bob")
            let aliceSession = try await p.call(alice.token, .get, "/sessions/me")
            let sessionId = try #require(aliceSession["objectId"]?.stringValue)
            // Even with a public ACL on the session row.
            #expect(try await p.request(.put, "/sessions/\(sessionId)", ["ACL": ["*": ["read": true]]]).status == 200)
            _ = try await p.createId("Note", ["session": ["__type": "Pointer", "className": "_Session", "objectId": .string(sessionId)]])
            for token in [bob.token, nil] as [String?] {
                let r = try await p.findAs(token, "Note", ["include": "session"])
                #expect(r.status == 200)
                #expect(!JSONWriter.string(r.json).contains(alice.token))
                #expect(r.results.first?["session"]?["sessionToken"] == nil)
            }
            let own = try await p.findAs(alice.token, "Note", ["include": "session"])
            #expect(own.results.first?["session"]?["sessionToken"]?.stringValue == alice.token)
            // Bob's queries of _Session see only his own sessions; with no token at all: 209.
            let bobs = try await p.call(bob.token, .get, "/sessions")
            #expect(bobs.results.allSatisfy { $0["user"]?["objectId"]?.stringValue == bob.id })
            #expect(bobs.results.count == 1)
            let sub = try await p.findAs(bob.token, "Note", where: ["session": ["$inQuery": ["className": "_Session", "where": [:]]]])
            #expect(sub.results.isEmpty)
            for path in ["/sessions", "/classes/_Session", "/sessions/\(sessionId)"] {
                let anonymous = try await p.call(nil, .get, path)
                #expect(anonymous.status == 400, "\(path)")
                #expect(anonymous.code == 209, "\(path): \(anonymous.json)")
            }
        }
    }

    @Test("session and log-in edge cases answer as Parse Server 7", arguments: Backend.all)
    func sessionEdgeCases(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.signUp("alice", "alice-pw")
            let bob = try await p.signUp("bob")
            let aliceSession = try #require(try await p.call(alice.token, .get, "/sessions/me")["objectId"]?.stringValue)
            // Another user's session: 101 on PUT and DELETE; the session still works.
            var r = try await p.call(bob.token, .put, "/sessions/\(aliceSession)", ["note": "x"])
            #expect(r.status == 404)
            #expect(r.code == 101)
            r = try await p.call(bob.token, .delete, "/sessions/\(aliceSession)")
            #expect(r.status == 404)
            #expect(r.code == 101)
            #expect(try await p.call(alice.token, .get, "/users/me").status == 200)
            // Its own session: other fields may change, not its user or token.
            #expect(try await p.call(alice.token, .put, "/sessions/\(aliceSession)", ["note": "mine"]).status == 200)
            r = try await p.call(alice.token, .put, "/sessions/\(aliceSession)", ["sessionToken": "r:forged"])
            #expect(r.code == 105)
            // A session token that is not a string: 209, not an anonymous request.
            let headers = p.headers(master: false)
            r = try await p.raw(.post, "/parse/classes/Doc", body: #"{"_method":"GET","_SessionToken":{"$ne":null}}"#, headers: headers)
            #expect(r.status == 400)
            #expect(r.code == 209)
            r = try await p.raw(.post, "/parse/users/me", body: #"{"_method":"GET","_SessionToken":12}"#, headers: headers)
            #expect(r.code == 209)
            // /upgradeToRevocableSession without a session: 101.
            r = try await p.call(nil, .post, "/upgradeToRevocableSession")
            #expect(r.status == 404)
            #expect(r.code == 101)
            // /login with operator objects: 101 Invalid username/password.
            for body: JSONValue in [
                ["username": ["$ne": "x"], "password": "alice-pw"], ["username": "alice", "password": ["$ne": "x"]],
                ["username": "alice", "password": ["$regex": ".*"]], ["email": ["$exists": true], "password": "x"],
            ] {
                r = try await p.call(nil, .post, "/login", body)
                #expect(r.status == 404, "\(body)")
                #expect(r.json == ["code": 101, "error": "Invalid username/password."], "\(body)")
            }
            r = try await p.call(nil, .get, "/login?username=alice&password=alice-pw")
            #expect(r.status == 200)
            // /loginAs without the master key: 400/119.
            r = try await p.call(alice.token, .post, "/loginAs", ["userId": .string(bob.id)])
            #expect(r.status == 400)
            #expect(r.code == 119)
        }
    }

    @Test("internal classes answer 119 to clients on every operation and path; the master key may", arguments: Backend.all)
    func internalClasses(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let user = try await p.signUp("curious")
            _ = try await p.createId("_JobStatus", ["jobName": "nightly", "status": "succeeded"])
            for className in Permissions.masterOnlyClasses.sorted() {
                for token in [user.token, nil] as [String?] {
                    let answers: [(String, Reply)] = [
                        ("find", try await p.call(token, .get, "/classes/\(className)")),
                        ("get", try await p.call(token, .get, "/classes/\(className)/abcdefghij")),
                        ("create", try await p.call(token, .post, "/classes/\(className)", ["x": 1])),
                        ("update", try await p.call(token, .put, "/classes/\(className)/abcdefghij", ["x": 1])),
                        ("delete", try await p.call(token, .delete, "/classes/\(className)/abcdefghij")),
                    ]
                    for (op, r) in answers {
                        #expect(r.status == 400, "\(className) \(op)")
                        #expect(
                            r.json == [
                                "code": 119,
                                "error": "Permission denied",
                            ],
                            "\(className) \(op): \(r.json)")
                    }
                }
            }
            // Counting, sub-queries and batches are closed too.
            var r = try await p.call(user.token, .get, "/classes/_JobStatus?count=1&limit=0")
            #expect(r.code == 119)
            _ = try await p.createId("Doc", ["name": "d"])
            r = try await p.findAs(
                user.token, "Doc", where: ["name": ["$select": ["query": ["className": "_JobStatus", "where": [:]], "key": "jobName"]]])
            #expect(r.code == 119)
            r = try await p.call(user.token, .post, "/batch", ["requests": [["method": "GET", "path": "/parse/classes/_JobStatus"]]])
            #expect(r.json.arrayValue?.first?["error"]?["code"] == 119)
            // The master key reads them.
            #expect(try await p.find("_JobStatus").results.count == 1)
            // Installations: clients may not delete.
            let inst = try await p.request(
                .post, "/installations", ["deviceType": "ios", "installationId": "0b6cbb4c-4b3a-4a9e-9f2b-1b1b1b1b1b1b"], master: false)
            let instId = try #require(inst["objectId"]?.stringValue)
            r = try await p.call(user.token, .delete, "/installations/\(instId)")
            #expect(r.json == ["code": 119, "error": "Permission denied"])
            // ... nor find them, in a list, a count or a sub-query; a get by id is allowed (Parse Server's rule).
            let findRefused: JSONValue = [
                "code": 119, "error": "Permission denied",
            ]
            #expect(try await p.call(user.token, .get, "/installations").json == findRefused)
            #expect(try await p.call(user.token, .get, "/classes/_Installation?count=1&limit=0").json == findRefused)
            r = try await p.findAs(
                user.token, "Doc", where: ["name": ["$select": ["query": ["className": "_Installation", "where": [:]], "key": "deviceType"]]])
            #expect(r.json == findRefused)
            #expect(try await p.call(user.token, .get, "/installations/\(instId)").status == 200)
        }
    }

    @Test(
        "masterKeyIps: the master key from another address counts for nothing (a client's request, as in Parse Server); from a listed one it works",
        arguments: Backend.all)
    func masterKeyIps(_ backend: Backend) async throws {
        let elsewhere = TestServer.options {
            $0.security.masterKeyIps = [IPRange("10.0.0.0/8")!, IPRange("::2")!]
            $0.allowClientClassCreation = true
        }
        try await TestServer.with(backend: backend, elsewhere) { p in
            let secret = try await p.request(.post, "/classes/Doc", ["text": "private", "ACL": [:]], master: false)
            #expect(secret.status == 201)
            // The master key is ignored: no private object, no master-only route, no loginAs.
            let r = try await p.request(.get, "/classes/Doc")
            #expect(r.status == 200)
            #expect(r.results.isEmpty, "\(r.json)")
            let schemas = try await p.request(.get, "/schemas")
            #expect(schemas.status == 403)
            #expect(schemas.json == ["error": "Permission denied"])
            // Clients are not affected.
            #expect(try await p.request(.get, "/classes/_User", master: false).status == 200)
        }
        let local = TestServer.options { $0.security.masterKeyIps = [IPRange("127.0.0.0/8")!, IPRange("::1")!] }
        try await TestServer.with(backend: backend, local) { p in
            let find = try await p.request(.get, "/classes/Doc")
            let schemas = try await p.request(.get, "/schemas")
            #expect(find.status == 200)
            #expect(schemas.status == 200)
        }
        // Ranges: IPv4 inside IPv6 (dual-stack sockets), prefixes, bad entries.
        #expect(IPRange("127.0.0.1")!.contains("::ffff:127.0.0.1"))
        #expect(IPRange("10.1.0.0/16")!.contains("10.1.255.7"))
        #expect(!IPRange("10.1.0.0/16")!.contains("10.2.0.1"))
        #expect(IPRange("::/0")!.contains("2001:db8::1"))
        #expect(IPRange("0.0.0.0/0")!.contains("192.168.1.1"))
        #expect(IPRange("10.0.0.0/33") == nil && IPRange("localhost") == nil)
    }

    @Test("sign-up with an explicit ACL gets the user's own read and write entry", arguments: Backend.all)
    func signUpACL(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let u = try await p.signUp("finder", extra: ["ACL": ["*": ["read": true]]])
            let stored = try await p.request(.get, "/users/\(u.id)")
            #expect(stored["ACL"] == .object(["*": ["read": true], u.id: ["read": true, "write": true]]))
            let update = try await p.asUser(u.token, .put, "/users/\(u.id)", ["bio": "hi"])
            #expect(update.status == 200, "\(update.json)")
            // Readable by others as the ACL says.
            let other = try await p.signUp("other")
            #expect(try await p.asUser(other.token, .get, "/users/\(u.id)").status == 200)
            // An ACL that tried to lock the user out of itself still grants it.
            let locked = try await p.signUp("locked", extra: ["ACL": ["*": ["read": true]]])
            #expect(try await p.asUser(locked.token, .put, "/users/\(locked.id)", ["bio": "still mine"]).status == 200)
            // authData sign-up too.
            let anon = try await anonymousUser(p, "anon-acl")
            #expect(try await p.asUser(anon.token, .put, "/users/\(anon.id)", ["bio": "x"]).status == 200)
            // Without an ACL: private (enforcePrivateUsers, Parse Server 7's default).
            let plain = try await p.signUp("plain")
            #expect(try await p.request(.get, "/users/\(plain.id)")["ACL"] == .object([plain.id: ["read": true, "write": true]]))
            #expect(try await p.asUser(other.token, .get, "/users/\(plain.id)").status == 404)
        }
    }

    @Test(
        "requestKeywordDenylist: __proto__, constructor and {_bsontype: Code} anywhere in a body, a where or /config are 105", arguments: Backend.all)
    func keywordDenylist(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("Doc", ["name": "a"])
            let refused: [(String, String)] = [
                ("/parse/classes/Doc", #"{"__proto__":{"isAdmin":true}}"#),
                ("/parse/classes/Doc", #"{"a":{"b":[{"constructor":{"prototype":{"x":1}}}]}}"#),
                ("/parse/classes/Doc", #"{"code":{"_bsontype":"Code","code":"shell"}}"#),
                ("/parse/classes/Doc", #"{"_method":"GET","where":{"name":{"$in":[{"__proto__":1}]}}}"#),
                ("/parse/batch", #"{"requests":[{"method":"POST","path":"/parse/classes/Doc","body":{"x":{"constructor":1}}}]}"#),
                ("/parse/config", #"{"params":{"__proto__":{"polluted":true}}}"#),
            ]
            for (path, body) in refused {
                let r = try await p.raw(path.hasSuffix("config") ? .put : .post, path, body: body, headers: p.headers(master: true))
                #expect(r.status == 400, "\(body)")
                #expect(r.code == 105, "\(body): \(r.json)")
                #expect(r["error"]?.stringValue?.hasPrefix("Prohibited keyword in request data: {\"key\":") == true, "\(r.json)")
            }
            var r = try await p.find("Doc", where: ["a.__proto__": ["$exists": true]])
            #expect(r.code == 105)
            r = try await p.update("Doc", id, ["name": ["_bsontype": "Code"]])
            #expect(r.json == ["code": 105, "error": #"Prohibited keyword in request data: {"key":"_bsontype","value":"Code"}."#])
            // Other values of _bsontype are fine, and nothing was stored by the refused requests.
            #expect(try await p.update("Doc", id, ["meta": ["_bsontype": "Other"]]).status == 200)
            #expect(try await p.find("Doc", ["count": "1", "limit": "0"])["count"] == 1)
        }
        // Configurable: an empty list allows everything; a custom rule refuses its key.
        try await TestServer.with(backend: backend, TestServer.options { $0.security.requestKeywordDenylist = [KeywordRule(key: "^forbidden$")] }) {
            p in
            #expect(try await p.create("Doc", ["constructor": 1]).status == 201)
            let r = try await p.create("Doc", ["x": ["forbidden": true]])
            #expect(r.code == 105)
        }
    }

    @Test("idempotency: a retried request with the same X-Parse-Request-Id is applied once (159), per path and ttl", arguments: Backend.all)
    func idempotency(_ backend: Backend) async throws {
        let options = TestServer.options { $0.security.idempotency = IdempotencyOptions(paths: ["classes/.*", "users"], ttl: 600) }
        try await TestServer.with(backend: backend, options) { p in
            let retry = ["X-Parse-Request-Id": "8f7e1c2a-retry-1"]
            let first = try await p.request(.post, "/classes/Order", ["item": "book"], extra: retry)
            #expect(first.status == 201)
            let second = try await p.request(.post, "/classes/Order", ["item": "book"], extra: retry)
            #expect(second.status == 400)
            #expect(second.json == ["code": 159, "error": "Duplicate request"])
            #expect(try await p.find("Order", ["count": "1", "limit": "0"])["count"] == 1)
            // Updates too; other ids, requests without an id, and GET are not affected.
            let id = try #require(first["objectId"]?.stringValue)
            let inc: JSONValue = ["n": ["__op": "Increment", "amount": 1]]
            #expect(try await p.request(.put, "/classes/Order/\(id)", inc, extra: ["X-Parse-Request-Id": "upd-1"]).status == 200)
            #expect(try await p.request(.put, "/classes/Order/\(id)", inc, extra: ["X-Parse-Request-Id": "upd-1"]).code == 159)
            #expect(try await p.request(.put, "/classes/Order/\(id)", inc).status == 200)
            #expect(try await p.request(.get, "/classes/Order/\(id)", extra: ["X-Parse-Request-Id": "upd-1"])["n"] == 2)
            // Sign-up is covered; a path that is not configured is not.
            let signUp: JSONValue = ["username": "once", "password": "pw-once"]
            #expect(try await p.request(.post, "/users", signUp, master: false, extra: ["X-Parse-Request-Id": "su-1"]).status == 201)
            #expect(try await p.request(.post, "/users", signUp, master: false, extra: ["X-Parse-Request-Id": "su-1"]).code == 159)
            #expect(try await p.request(.put, "/config", ["params": ["a": 1]], extra: ["X-Parse-Request-Id": "cfg"]).status == 200)
            #expect(try await p.request(.put, "/config", ["params": ["a": 2]], extra: ["X-Parse-Request-Id": "cfg"]).status == 200)
            // Clients cannot read or forge the records.
            #expect(try await p.request(.get, "/classes/_Idempotency", master: false).code == 119)
        }
        // After the ttl the id may be used again.
        try await TestServer.with(backend: backend, TestServer.options { $0.security.idempotency = IdempotencyOptions(paths: ["classes/"], ttl: 1) })
        { p in
            let retry = ["X-Parse-Request-Id": "short-lived"]
            #expect(try await p.request(.post, "/classes/Order", ["item": "book"], extra: retry).status == 201)
            try await Task.sleep(for: .milliseconds(1_200))
            #expect(try await p.request(.post, "/classes/Order", ["item": "book"], extra: retry).status == 201)
        }
        // Off by default.
        try await TestServer.with(backend: backend) { p in
            let retry = ["X-Parse-Request-Id": "same"]
            let a = try await p.request(.post, "/classes/Order", ["item": "a"], extra: retry)
            let b = try await p.request(.post, "/classes/Order", ["item": "a"], extra: retry)
            #expect(a.status == 201)
            #expect(b.status == 201)
        }
    }
}
