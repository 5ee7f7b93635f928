import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Synchronization
import Testing

/// Rules a second path used to skip (issue 28): rate limits through `/batch` and the JS SDK's `_method` bodies, the
/// cloud context header, log-in timing for unknown users, fields of a session only the master key may change.
@Suite("Hardening: the same rule on every path")
struct HardeningPathsTests {
    static let loginLimit = #"[{"requestPath":"/login","requestTimeWindow":60000,"requestCount":3,"requestMethods":["POST"]}]"#

    /// Sessions of a user, counted with the master key.
    func sessionCount(_ p: ParseClient, _ userId: String) async throws -> Int {
        let w = JSONWriter.string(["user": ["__type": "Pointer", "className": "_User", "objectId": .string(userId)]])
        let r = try await p.request(.get, "/sessions?count=1&limit=0&where=" + ParseClient.encode(w))
        return try #require(r["count"]?.integerValue)
    }

    @Test("rate limits: a batch of log-ins counts each sub-request; over the limit the batch runs nothing (429, code 100)", arguments: Backend.all)
    func batchLoginsAreCounted(_ backend: Backend) async throws {
        let rules = try RateLimitRule.parse(JSONParser.parse(Self.loginLimit))
        try await OperationsTests.with(backend: backend, rateLimits: rules) { p, _ in
            let user = try await p.newUser("limited")
            let before = try await sessionCount(p, user.id)
            let login: JSONValue = ["method": "POST", "path": "/parse/login", "body": ["username": "limited", "password": "pw-limited"]]
            let flood = try await p.request(.post, "/batch", ["requests": .array(Array(repeating: login, count: 10))], master: false)
            #expect(flood.status == 429, "\(flood.json)")
            #expect(flood.json == ["code": 100, "error": "Too many requests."])
            #expect(try await sessionCount(p, user.id) == before, "no session was made by the refused batch")
        }
        try await OperationsTests.with(backend: backend, rateLimits: rules) { p, _ in
            _ = try await p.newUser("counted")
            let login: JSONValue = ["method": "POST", "path": "/parse/login", "body": ["username": "counted", "password": "pw-counted"]]
            // Two in a batch and one alone reach the limit of three; the fourth, alone or in a batch, is refused.
            let two = try await p.request(.post, "/batch", ["requests": [login, login]], master: false)
            #expect(two.status == 200)
            #expect(two.json.arrayValue?.allSatisfy { $0["success"]?["sessionToken"] != nil } == true, "\(two.json)")
            let third = try await p.request(.post, "/login", ["username": "counted", "password": "pw-counted"], master: false)
            #expect(third.status == 200)
            let fourth = try await p.request(.post, "/login", ["username": "counted", "password": "pw-counted"], master: false)
            #expect(fourth.status == 429)
            let batched = try await p.request(.post, "/batch", ["requests": [login]], master: false)
            #expect(batched.status == 429)
            #expect(batched.code == 100)
        }
    }

    @Test("rate limits: a cloud function's validator limit holds for batch sub-requests", arguments: Backend.all)
    func batchFunctionCallsAreCounted(_ backend: Backend) async throws {
        var cloud = CloudCode()
        let runs = RunCounter()
        cloud.define(
            "limited",
            validator: CloudValidator(rateLimit: .init(requestTimeWindow: .seconds(60), requestCount: 2, errorResponseMessage: "Slow down"))
        ) { _ in
            runs.add()
            return "ok"
        }
        try await TestServer.with(backend: backend, cloud: cloud) { p in
            let call: JSONValue = ["method": "POST", "path": "/parse/functions/limited", "body": [:]]
            let r = try await p.request(.post, "/batch", ["requests": [call, call, call, call, call]], master: false)
            #expect(r.status == 429, "\(r.json)")
            #expect(r.json == ["code": 100, "error": "Slow down"])
            #expect(runs.value == 0, "the function ran past its limit")
            // The two calls that were counted used the budget up: the next direct call is refused too.
            #expect(try await p.request(.post, "/functions/limited", [:], master: false).status == 429)
        }
    }

    @Test("rate limits: a POST with _method GET (headers, or the JS SDK's text/plain body) counts as the GET it is", arguments: Backend.all)
    func methodOverrideIsCountedAsItsMethod(_ backend: Backend) async throws {
        let rules = try RateLimitRule.parse(
            JSONParser.parse(#"[{"requestPath":"/classes/*","requestTimeWindow":60000,"requestCount":3,"requestMethods":["GET"]}]"#))
        try await OperationsTests.with(backend: backend, rateLimits: rules) { p, _ in
            _ = try await p.createId("Doc", ["n": 1])
            var plain = HTTPFields()
            plain[.contentType] = "text/plain"
            let jsBody = #"{"_method":"GET","_ApplicationId":"test-app","where":{"n":1}}"#
            var statuses: [Int] = []
            for _ in 0..<2 { statuses.append(try await p.raw(.post, "/parse/classes/Doc", body: jsBody, headers: plain).status) }
            statuses.append(try await p.request(.post, "/classes/Doc", ["_method": "GET"], master: false).status)
            #expect(statuses == [200, 200, 200])
            let fourth = try await p.raw(.post, "/parse/classes/Doc", body: jsBody, headers: plain)
            #expect(fourth.status == 429, "\(fourth.json)")
            #expect(try await p.find("Doc", master: false).status == 429, "a plain GET shares the same budget")
        }
        // A rule on POST does not count POSTs that are GETs.
        let posts = try RateLimitRule.parse(
            JSONParser.parse(#"[{"requestPath":"/classes/*","requestTimeWindow":60000,"requestCount":1,"requestMethods":["POST"]}]"#))
        try await OperationsTests.with(backend: backend, rateLimits: posts) { p, _ in
            _ = try await p.createId("Doc", ["n": 1])
            for _ in 0..<4 { #expect(try await p.request(.post, "/classes/Doc", ["_method": "GET"], master: false).status == 200) }
        }
    }

    @Test("X-Parse-Cloud-Context and _context: denylisted keys are 105, anything but a JSON object is 400/107", arguments: Backend.all)
    func cloudContext(_ backend: Backend) async throws {
        var cloud = CloudCode()
        cloud.define("context") { req in JSONValue.object(req.context) }
        try await TestServer.with(backend: backend, cloud: cloud) { p in
            let fine = try await p.request(.post, "/functions/context", [:], master: false, extra: ["X-Parse-Cloud-Context": #"{"a":1}"#])
            #expect(fine.json == ["result": ["a": 1]])
            for polluted in [#"{"__proto__":{"x":1}}"#, #"{"constructor":{}}"#, #"{"a":{"b":{"__proto__":1}}}"#] {
                let r = try await p.request(.post, "/classes/Ctx", ["n": 1], extra: ["X-Parse-Cloud-Context": polluted])
                #expect(r.status == 400, "\(polluted)")
                #expect(r.code == 105, "\(polluted): \(r.json)")
                // The same keys inside a _context string of the JS SDK's body.
                let asString = try await p.request(.post, "/functions/context", ["_context": .string(polluted)], master: false)
                #expect(asString.code == 105, "\(polluted): \(asString.json)")
            }
            #expect(try await p.find("Ctx").results.isEmpty, "nothing was stored")
            for malformed in ["not json", "[1,2]", #""text""#, "1", "null"] {
                let r = try await p.request(.post, "/functions/context", [:], master: false, extra: ["X-Parse-Cloud-Context": malformed])
                #expect(r.status == 400, "\(malformed)")
                #expect(r.json == ["code": 107, "error": "Invalid object for context."], "\(malformed): \(r.json)")
            }
            for malformed: JSONValue in [5, [1, 2], "text", "[1]"] {
                let r = try await p.request(.post, "/functions/context", ["_context": malformed], master: false)
                #expect(r.json == ["code": 107, "error": "Invalid object for context."], "\(malformed): \(r.json)")
            }
        }
    }

    @Test("log-in with an unknown username takes as long as a wrong password (bcrypt against a dummy hash)", arguments: Backend.all)
    func loginTiming(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.newUser("known")
            _ = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "anon-1"]]], master: false)
            func time(_ body: JSONValue, path: String = "/login") async throws -> Duration {
                let start = ContinuousClock.now
                let r = try await p.request(.post, path, body, master: false)
                #expect(r.code == 101, "\(r.json)")
                return ContinuousClock.now - start
            }
            // Taken in turns, medians: a loaded machine slows both alike. Without the dummy hash the unknown user
            // answers in a few milliseconds against bcrypt's tens.
            var known: [Duration] = [], unknown: [Duration] = [], byEmail: [Duration] = [], verify: [Duration] = []
            for i in 0..<7 {
                known.append(try await time(["username": "known", "password": "wrong"]))
                unknown.append(try await time(["username": .string("nobody-\(i)"), "password": "wrong"]))
                byEmail.append(try await time(["email": .string("nobody-\(i)@example.com"), "password": "wrong"]))
                verify.append(try await time(["username": .string("nobody-\(i)"), "password": "wrong"], path: "/verifyPassword"))
            }
            func median(_ d: [Duration]) -> Double {
                let s = d.sorted()[d.count / 2].components
                return Double(s.seconds) + Double(s.attoseconds) / 1e18
            }
            let reference = median(known)
            #expect(median(unknown) > reference * 0.5, "unknown user \(median(unknown)) s vs wrong password \(reference) s")
            #expect(median(byEmail) > reference * 0.5, "unknown email \(median(byEmail)) s vs wrong password \(reference) s")
            #expect(median(verify) > reference * 0.5, "verifyPassword \(median(verify)) s vs wrong password \(reference) s")
        }
    }

    @Test(
        "a session's expiresAt, createdWith, token, installation, user and ACL: 105 for its user on every path, the master key may",
        arguments: Backend.all)
    func sessionFieldsOnlyTheMasterChanges(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.newUser("alice")
            let bob = try await p.newUser("bob")
            let me = try await p.call(alice.token, .get, "/sessions/me")
            let id = try #require(me["objectId"]?.stringValue)
            let stored = try await p.request(.get, "/sessions/\(id)")
            let refused: [JSONValue] = [
                ["expiresAt": .null], ["expiresAt": ["__type": "Date", "iso": "2999-01-01T00:00:00.000Z"]],
                ["expiresAt": ["__op": "Delete"]], ["createdWith": .null], ["createdWith": ["action": "signup"]],
                ["createdWith.action": "upgrade"], ["sessionToken": "r:forged"], ["installationId": "other-device"],
                ["user": ["__type": "Pointer", "className": "_User", "objectId": .string(bob.id)]], ["ACL": ["*": ["read": true]]],
            ]
            for body in refused {
                for path in ["/sessions/\(id)", "/classes/_Session/\(id)"] {
                    let r = try await p.call(alice.token, .put, path, body)
                    #expect(r.status == 400, "\(path) \(body)")
                    #expect(r.code == 105, "\(path) \(body): \(r.json)")
                }
                // A batch sub-request and the JS SDK's _method body answer the same.
                let batch = try await p.call(
                    alice.token, .post, "/batch", ["requests": [["method": "PUT", "path": .string("/parse/sessions/\(id)"), "body": body]]])
                #expect(batch.json.arrayValue?.first?["error"]?["code"] == 105, "batch \(body): \(batch.json)")
                var viaMethod = body.objectValue ?? [:]
                viaMethod["_method"] = "PUT"
                let overridden = try await p.call(alice.token, .post, "/sessions/\(id)", .object(viaMethod))
                #expect(overridden.code == 105, "_method \(body): \(overridden.json)")
            }
            let after = try await p.request(.get, "/sessions/\(id)")
            for key in ["expiresAt", "createdWith", "sessionToken", "installationId", "user", "ACL"] {
                #expect(after[key] == stored[key], "\(key) changed: \(after.json)")
            }
            // Naming its own user again, or other fields, is fine; the master key may change the rest.
            let own: JSONValue = ["user": ["__type": "Pointer", "className": "_User", "objectId": .string(alice.id)], "note": "mine"]
            #expect(try await p.call(alice.token, .put, "/sessions/\(id)", own).status == 200)
            let byMaster = try await p.request(.put, "/sessions/\(id)", ["expiresAt": ["__type": "Date", "iso": "2030-01-01T00:00:00.000Z"]])
            #expect(byMaster.status == 200, "\(byMaster.json)")
            #expect(try await p.call(alice.token, .get, "/users/me").status == 200)
        }
    }
}

extension HardeningPathsTests {
    @Test("finds: no key may query the password hash; the read-only master key reads and queries no credential", arguments: Backend.all)
    func credentialsThroughFind(_ backend: Backend) async throws {
        let readOnly = "paths-read-only-key"
        try await TestServer.with(backend: backend, TestServer.options { $0.readOnlyMasterKey = readOnly }) { p in
            let alice = try await p.newUser("alice")
            let anon = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "anon-login-id"]]], master: false)
            let anonToken = try #require(anon["sessionToken"]?.stringValue)
            func get(_ path: String, key: String) async throws -> Reply {
                try await p.request(.get, path, master: false, extra: ["X-Parse-Master-Key": key])
            }
            let hashOracle = "/classes/_User?count=1&where=" + ParseClient.encode(#"{"_hashed_password":{"$regex":"^\\$2"}}"#)
            for key in [TestServer.masterKey, readOnly] {
                for path in [hashOracle, "/classes/_User?order=_hashed_password", "/classes/_User?order=-_password_history"] {
                    let r = try await get(path, key: key)
                    #expect(r.status == 400 && r.code == 105, "\(path): \(r.json)")
                }
            }
            // A single-use reset token: the master key may query it, the read-only key may not.
            let tokenProbe = "/classes/_User?count=1&where=" + ParseClient.encode(#"{"_perishable_token":{"$exists":false}}"#)
            #expect(try await get(tokenProbe, key: TestServer.masterKey).status == 200)
            #expect(try await get(tokenProbe, key: readOnly).code == 105)
            // Sessions and authData: the master key reads them, the read-only key neither reads nor queries them.
            let sessions = try await get("/classes/_Session?include=user", key: readOnly)
            #expect(sessions.status == 200 && sessions.results.count == 2, "\(sessions.json)")
            let text = JSONWriter.string(sessions.json)
            #expect(!text.contains(alice.token) && !text.contains(anonToken) && !text.contains("anon-login-id"), "\(text)")
            let users = try await get("/classes/_User", key: readOnly)
            #expect(!JSONWriter.string(users.json).contains("anon-login-id"), "\(users.json)")
            let byToken = "/classes/_Session?where=" + ParseClient.encode(#"{"sessionToken":{"$regex":"^r:"}}"#)
            #expect(try await get(byToken, key: readOnly).code == 119)
            let byAuthData = "/classes/_User?where=" + ParseClient.encode(#"{"authData.anonymous.id":"anon-login-id"}"#)
            #expect(try await get(byAuthData, key: readOnly).code == 119)
            let master = try await get("/classes/_Session", key: TestServer.masterKey)
            #expect(JSONWriter.string(master.json).contains(alice.token), "the master key still reads session tokens")
        }
    }
}

/// A count shared with cloud code handlers.
final class RunCounter: Sendable {
    private let box = Mutex(0)
    func add() { box.withLock { $0 += 1 } }
    var value: Int { box.withLock { $0 } }
}
