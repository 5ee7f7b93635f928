import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyStorage
import Testing

extension ParseClient {
    /// Signs up and returns (objectId, sessionToken).
    func signUp(_ username: String, _ password: String = "secret-pw", extra: [String: JSONValue] = [:]) async throws -> (id: String, token: String) {
        var body: [String: JSONValue] = ["username": .string(username), "password": .string(password)]
        for (k, v) in extra { body[k] = v }
        let r = try await request(.post, "/users", .object(body), master: false)
        guard r.status == 201, let id = r["objectId"]?.stringValue, let token = r["sessionToken"]?.stringValue else {
            throw Failure("sign-up failed: \(r.status) \(r.json)")
        }
        return (id, token)
    }

    /// A request as the user holding `token`.
    func asUser(_ token: String, _ method: HTTPRequest.Method, _ path: String, _ body: JSONValue? = nil) async throws -> Reply {
        try await request(method, path, body, master: false, extra: ["X-Parse-Session-Token": token])
    }
}

@Suite("Users and sessions")
struct UsersTests {
    @Test(
        "a session whose user row is gone (removed outside Parsley) is 209 once its cache trust ends; another user's still works",
        arguments: Backend.all)
    func sessionOfRemovedUser(_ backend: Backend) async throws {
        try await TestServer.withAPI(backend: backend) { _, db, p in
            let gone = try await p.signUp("gone")
            let kept = try await p.signUp("kept")
            #expect(try await p.asUser(gone.token, .get, "/users/me").status == 200)
            _ = try await db.database.write { c in
                try await c.query(SQLFragment(unsafeSQL: #"DELETE FROM "_User" WHERE "objectId" = "# + "'\(gone.id)'"))
            }
            try await Task.sleep(for: CacheTrust.sessions + .milliseconds(200))
            let refused = try await p.asUser(gone.token, .get, "/users/me")
            #expect(refused.code == 209, "\(refused.json)")
            #expect(try await p.asUser(kept.token, .get, "/users/me").status == 200)
        }
    }

    @Test("sign-up returns objectId, createdAt, sessionToken with 201 and Location /users/:id", arguments: Backend.all)
    func signUp(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let r = try await p.request(.post, "/users", ["username": "alice", "password": "pw", "email": "alice@example.com"], master: false)
            #expect(r.status == 201)
            let id = try #require(r["objectId"]?.stringValue)
            let token = try #require(r["sessionToken"]?.stringValue)
            #expect(token.hasPrefix("r:") && token.count == 34)
            #expect(r["createdAt"] != nil)
            #expect(r.headers[.location]?.hasSuffix("/parse/users/\(id)") == true)
            // The password is never stored or returned in any form a client can see.
            let me = try await p.asUser(token, .get, "/users/me")
            #expect(me["username"] == "alice")
            #expect(me["password"] == nil && me["_hashed_password"] == nil)
            #expect(me["sessionToken"]?.stringValue == token)
            let all = try await p.request(.get, "/classes/_User")
            try #require(all.results.count == 1)
            #expect(all.results[0]["_hashed_password"] == nil && all.results[0]["password"] == nil)
        }
    }

    @Test("sign-up errors: 200, 201, 202, 203 (case-insensitive), 125", arguments: Backend.all)
    func signUpErrors(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.signUp("Snoopy", extra: ["email": "snoopy@example.com"])
            let cases: [(JSONValue, Int)] = [
                (["password": "x"], 200), (["username": "", "password": "x"], 200), (["username": "n"], 201),
                (["username": "snoopy", "password": "x"], 202), (["username": "other", "password": "x", "email": "SNOOPY@example.com"], 203),
                (["username": "mail", "password": "x", "email": "not-an-email"], 125),
                (["username": "hacker", "password": "x", "emailVerified": true], 119),
            ]
            for (body, code) in cases {
                let r = try await p.request(.post, "/users", body, master: false)
                #expect(r.code == code, "\(body) -> \(r.json)")
                #expect(r.status == 400)
            }
            let users = try await p.request(.get, "/users")
            #expect(users.results.count == 1)
        }
    }

    @Test("log-in by GET and POST, by username or email; failures are 101; me; logout", arguments: Backend.all)
    func logIn(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let (id, _) = try await p.signUp("bob", "hunter2", extra: ["email": "bob@example.com"])
            let get = try await p.request(.get, "/login?username=bob&password=hunter2", master: false)
            #expect(get.status == 200)
            #expect(get["objectId"]?.stringValue == id)
            let token = try #require(get["sessionToken"]?.stringValue)
            let post = try await p.request(.post, "/login", ["email": "bob@example.com", "password": "hunter2"], master: false)
            #expect(post["objectId"]?.stringValue == id)
            let wrong = try await p.request(.post, "/login", ["username": "bob", "password": "nope"], master: false)
            #expect(wrong.status == 404)
            #expect(wrong.json == ["code": 101, "error": "Invalid username/password."])
            let unknown = try await p.request(.post, "/login", ["username": "nobody", "password": "nope"], master: false)
            #expect(unknown.code == 101)
            // Log-in matches the username exactly.
            let caseDiffers = try await p.request(.post, "/login", ["username": "BOB", "password": "hunter2"], master: false)
            #expect(caseDiffers.code == 101)
            let missing = try await p.request(.post, "/login", ["username": "bob"], master: false)
            #expect(missing.code == 201)
            let me = try await p.asUser(token, .get, "/users/me")
            #expect(me["objectId"]?.stringValue == id)
            let out = try await p.asUser(token, .post, "/logout")
            #expect(out.json == [:])
            let after = try await p.asUser(token, .get, "/users/me")
            #expect(after.status == 400)
            #expect(after.json == ["code": 209, "error": "Invalid session token"])
            // A bad token fails even on endpoints that work anonymously.
            let anon = try await p.asUser("r:doesnotexist", .get, "/classes/Anything")
            #expect(anon.code == 209)
            // /login ignores a bad token.
            let relogin = try await p.request(
                .post, "/login", ["username": "bob", "password": "hunter2"], master: false, extra: ["X-Parse-Session-Token": "r:bad"])
            #expect(relogin.status == 200)
        }
    }

    @Test("users are private: others cannot read, change or delete them", arguments: Backend.all)
    func privacy(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.signUp("alice", extra: ["email": "a@example.com"])
            let bob = try await p.signUp("bob")
            let read = try await p.asUser(bob.token, .get, "/users/\(alice.id)")
            #expect(read.code == 101)
            let list = try await p.asUser(bob.token, .get, "/users")
            #expect(list.results.compactMap { $0["objectId"]?.stringValue } == [bob.id])
            let change = try await p.asUser(bob.token, .put, "/users/\(alice.id)", ["password": "owned"])
            #expect(change.code == 206)
            let anonymous = try await p.request(.put, "/users/\(alice.id)", ["username": "x"], master: false)
            #expect(anonymous.code == 206)
            let delete = try await p.asUser(bob.token, .delete, "/users/\(alice.id)")
            #expect(delete.status != 200)
            // Alice is unchanged and can still log in with her password.
            let login = try await p.request(.post, "/login", ["username": "alice", "password": "secret-pw"], master: false)
            #expect(login.status == 200)
            // She reads herself, with her token, email and all.
            let own = try await p.asUser(alice.token, .get, "/users/\(alice.id)")
            #expect(own["email"] == "a@example.com")
            #expect(own["sessionToken"]?.stringValue == alice.token)
        }
    }

    @Test("a password change keeps this session, revokes the others, and the new password works", arguments: Backend.all)
    func passwordChange(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.signUp("alice", "old-pw")
            let other = try await p.request(.post, "/login", ["username": "alice", "password": "old-pw"], master: false)
            let otherToken = try #require(other["sessionToken"]?.stringValue)
            let r = try await p.asUser(alice.token, .put, "/users/\(alice.id)", ["password": "new-pw"])
            #expect(r.status == 200)
            #expect(r["updatedAt"] != nil)
            let still = try await p.asUser(alice.token, .get, "/users/me")
            #expect(still.status == 200)
            let revoked = try await p.asUser(otherToken, .get, "/users/me")
            #expect(revoked.code == 209)
            let oldLogin = try await p.request(.post, "/login", ["username": "alice", "password": "old-pw"], master: false)
            #expect(oldLogin.code == 101)
            let newLogin = try await p.request(.post, "/login", ["username": "alice", "password": "new-pw"], master: false)
            #expect(newLogin.status == 200)
            let verify = try await p.request(.post, "/verifyPassword", ["username": "alice", "password": "new-pw"], master: false)
            #expect(verify["objectId"]?.stringValue == alice.id)
            #expect(verify["sessionToken"] == nil)
        }
    }

    @Test("deleting a user removes it and its sessions", arguments: Backend.all)
    func deleteUser(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.signUp("alice")
            let r = try await p.asUser(alice.token, .delete, "/users/\(alice.id)")
            #expect(r.json == [:])
            let me = try await p.asUser(alice.token, .get, "/users/me")
            #expect(me.code == 209)
            let sessions = try await p.request(.get, "/classes/_Session")
            #expect(sessions.results.isEmpty)
            let anonymous = try await p.request(.delete, "/users/\(alice.id)", master: false)
            #expect(anonymous.code == 206)
        }
    }

    @Test("anonymous authData signs up once and logs in afterwards; linking and unlinking", arguments: Backend.all)
    func anonymous(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let first = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "device-1"]]], master: false)
            #expect(first.status == 201)
            let id = try #require(first["objectId"]?.stringValue)
            #expect(first["username"]?.stringValue?.isEmpty == false)
            let second = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "device-1"]]], master: false)
            #expect(second.status == 200)
            #expect(second["objectId"]?.stringValue == id)
            let token = try #require(second["sessionToken"]?.stringValue)
            let unsupported = try await p.request(.post, "/users", ["authData": ["madeup": ["id": "x"]]], master: false)
            #expect(unsupported.code == 252)
            // Upgrade the anonymous user to a real account, then unlink the anonymous provider.
            let upgrade = try await p.asUser(token, .put, "/users/\(id)", ["username": "real", "password": "pw", "authData": ["anonymous": nil]])
            #expect(upgrade.status == 200)
            let me = try await p.asUser(token, .get, "/users/me")
            #expect(me["username"] == "real")
            #expect(me["authData"]?["anonymous"] == nil)
            let login = try await p.request(.post, "/login", ["username": "real", "password": "pw"], master: false)
            #expect(login["objectId"]?.stringValue == id)
            // Another user cannot take over an id already linked elsewhere.
            let other = try await p.signUp("other")
            _ = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "device-2"]]], master: false)
            let steal = try await p.asUser(other.token, .put, "/users/\(other.id)", ["authData": ["anonymous": ["id": "device-2"]]])
            #expect(steal.code == 208)
        }
    }

    @Test("sessions: own sessions only, /sessions/me, revoking by delete, expiry is 209", arguments: Backend.all)
    func sessions(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.signUp("alice")
            let bob = try await p.signUp("bob")
            let mine = try await p.asUser(alice.token, .get, "/sessions")
            try #require(mine.results.count == 1)
            #expect(mine.results[0]["sessionToken"]?.stringValue == alice.token)
            let me = try await p.asUser(alice.token, .get, "/sessions/me")
            let sessionId = try #require(me["objectId"]?.stringValue)
            #expect(me["user"]?["objectId"]?.stringValue == alice.id)
            // Bob can neither see nor revoke Alice's session.
            let peek = try await p.asUser(bob.token, .get, "/sessions/\(sessionId)")
            #expect(peek.code == 101)
            let kill = try await p.asUser(bob.token, .delete, "/classes/_Session/\(sessionId)")
            #expect(kill.code == 101)
            #expect(try await p.asUser(alice.token, .get, "/users/me").status == 200)
            // Expire Bob's session with the master key.
            let bobSession = try await p.asUser(bob.token, .get, "/sessions/me")
            let bobSessionId = try #require(bobSession["objectId"]?.stringValue)
            _ = try await p.request(.put, "/sessions/\(bobSessionId)", ["expiresAt": ["__type": "Date", "iso": "2001-01-01T00:00:00.000Z"]])
            let expired = try await p.asUser(bob.token, .get, "/users/me")
            #expect(expired.json == ["code": 209, "error": "Session token is expired."])
            // Alice revokes her own session.
            let revoke = try await p.asUser(alice.token, .delete, "/sessions/\(sessionId)")
            #expect(revoke.json == [:])
            let gone = try await p.asUser(alice.token, .get, "/users/me")
            #expect(gone.code == 209)
        }
    }

    @Test("loginAs needs the master key; /classes/_User sign-up works like /users", arguments: Backend.all)
    func loginAsAndAliases(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let created = try await p.request(.post, "/classes/_User", ["username": "carol", "password": "pw"], master: false)
            #expect(created.status == 201)
            let id = try #require(created["objectId"]?.stringValue)
            #expect(created["sessionToken"] != nil)
            let denied = try await p.request(.post, "/loginAs", ["userId": .string(id)], master: false)
            #expect(denied.status == 400)
            #expect(denied.json == ["code": 119, "error": "master key is required"])
            let asCarol = try await p.request(.post, "/loginAs", ["userId": .string(id)])
            let token = try #require(asCarol["sessionToken"]?.stringValue)
            let me = try await p.asUser(token, .get, "/users/me")
            #expect(me["username"] == "carol")
            let bad = try await p.request(.post, "/loginAs", ["userId": ""])
            #expect(bad.code == 162)
            let hidden = try await p.request(
                .get, "/classes/_User?where=" + ParseClient.encode(#"{"_hashed_password":{"$exists":true}}"#), master: false)
            #expect(hidden.code == 105)
        }
    }

    @Test("objects ACL'd to a user are visible to that user only", arguments: Backend.all)
    func aclWithUsers(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.allowClientClassCreation = true }) { p in
            let alice = try await p.signUp("alice")
            let bob = try await p.signUp("bob")
            let acl: JSONValue = .object([alice.id: ["read": true, "write": true]])
            let created = try await p.asUser(alice.token, .post, "/classes/Diary", ["text": "secret", "ACL": acl])
            let id = try #require(created["objectId"]?.stringValue)
            let own = try await p.asUser(alice.token, .get, "/classes/Diary/\(id)")
            #expect(own["text"] == "secret")
            let other = try await p.asUser(bob.token, .get, "/classes/Diary/\(id)")
            #expect(other.code == 101)
            let count = try await p.asUser(bob.token, .get, "/classes/Diary?count=1&limit=0")
            #expect(count["count"] == 0)
            let write = try await p.asUser(bob.token, .put, "/classes/Diary/\(id)", ["text": "hacked"])
            #expect(write.code == 101)
            let delete = try await p.asUser(bob.token, .delete, "/classes/Diary/\(id)")
            #expect(delete.code == 101)
            let stillThere = try await p.get("Diary", id)
            #expect(stillThere["text"] == "secret")
        }
    }
}
