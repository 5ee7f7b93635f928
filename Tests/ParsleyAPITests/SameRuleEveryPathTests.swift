import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Testing

/// One request pipeline: every rule answers the same whether the request comes alone or as a `/batch` sub-request (and
/// through the JS SDK's `_method` body), because both pass the same router and middleware.
@Suite("One pipeline: the same rule on every path")
struct SameRuleEveryPathTests {
    static let readOnly = "same-rule-read-only-key"

    /// `{"code","error"}` of a direct answer, or of a batch's only sub-request (a batch refused as a whole answers
    /// directly, as a rate limit does).
    static func outcome(_ r: Reply) -> JSONValue? {
        if let first = r.json.arrayValue?.first { return first["error"] ?? (first["success"] != nil ? "success" : nil) }
        if r.status < 300 { return "success" }
        return ["code": r.json["code"] ?? .null, "error": r.json["error"] ?? .null]
    }

    /// The request alone, in a batch and through `_method` (for non-POST methods), as `token` (nil: anonymous) or `key`.
    static func threeWays(
        _ p: ParseClient, _ method: HTTPRequest.Method, _ path: String, _ body: JSONValue? = nil, token: String? = nil, key: String? = nil
    ) async throws -> [JSONValue?] {
        var extra: [String: String] = [:]
        if let token { extra["X-Parse-Session-Token"] = token }
        if let key { extra["X-Parse-Master-Key"] = key }
        let direct = try await p.request(method, path, body, master: false, extra: extra)
        var sub: [String: JSONValue] = ["method": .string(method.rawValue), "path": .string("/parse" + path)]
        if let body { sub["body"] = body }
        let batch = try await p.request(.post, "/batch", ["requests": [.object(sub)]], master: false, extra: extra)
        var answers = [outcome(direct), outcome(batch)]
        if method != .post {
            var overridden = body?.objectValue ?? [:]
            overridden["_method"] = .string(method.rawValue)
            answers.append(outcome(try await p.request(.post, path, .object(overridden), master: false, extra: extra)))
        }
        return answers
    }

    @Test("denylist, CLP, ACL, read-only key, protected fields: one answer alone, in a batch and through _method", arguments: Backend.all)
    func rules(_ backend: Backend) async throws {
        let options = TestServer.options {
            $0.readOnlyMasterKey = Self.readOnly
            $0.allowClientClassCreation = true
        }
        try await TestServer.with(backend: backend, options) { p in
            let owner = try await p.newUser("owner")
            let other = try await p.newUser("other")
            let doc = try await p.createId(
                "Doc", ["text": "mine", "pin": "1234", "ACL": [owner.id: ["read": true, "write": true], "*": ["read": true]]])
            _ = try await p.request(
                .put, "/schemas/Doc",
                [
                    "classLevelPermissions": [
                        "find": ["*": true], "get": ["*": true], "count": ["*": true], "create": ["*": true], "update": ["*": true],
                        "delete": ["*": true], "addField": ["*": true], "protectedFields": ["*": ["pin"]],
                    ]
                ])
            let locked = try await p.request(.post, "/schemas/Locked", ["classLevelPermissions": ["create": [:], "find": [:]]])
            #expect(locked.status == 200, "\(locked.json)")
            let cases: [(String, HTTPRequest.Method, String, JSONValue?, String?, String?, JSONValue)] = [
                ("denylist", .post, "/classes/Doc", ["x": ["constructor": 1]], owner.token, nil, 105),
                ("CLP create", .post, "/classes/Locked", ["x": 1], owner.token, nil, 119),
                ("CLP find", .get, "/classes/Locked", nil, owner.token, nil, 119),
                ("ACL write", .put, "/classes/Doc/\(doc)", ["text": "theirs"], other.token, nil, 101),
                ("ACL delete", .delete, "/classes/Doc/\(doc)", nil, other.token, nil, 101),
                ("read-only key", .post, "/classes/Doc", ["x": 1], nil, Self.readOnly, 119),
                ("read-only key update", .put, "/classes/Doc/\(doc)", ["text": "x"], nil, Self.readOnly, 119),
                ("protected field query", .get, "/classes/Doc", ["where": ["pin": "1234"]], other.token, nil, 119),
                ("session", .get, "/users/me", nil, "r:not-a-session", nil, 209),
            ]
            for (name, method, path, body, token, key, code) in cases {
                let answers = try await Self.threeWays(p, method, path, body, token: token, key: key)
                #expect(answers.allSatisfy { $0?["code"] == code }, "\(name): \(answers)")
                #expect(Set(answers.map { $0.map(JSONWriter.string) ?? "nil" }).count == 1, "\(name) differs by path: \(answers)")
            }
            // A protected field is stripped the same way: alone and in a batch.
            let alone = try await p.call(other.token, .get, "/classes/Doc/\(doc)")
            let batched = try await p.call(
                other.token, .post, "/batch", ["requests": [["method": "GET", "path": .string("/parse/classes/Doc/\(doc)")]]])
            #expect(alone["pin"] == nil && alone["text"] == "mine")
            #expect(batched.json.arrayValue?.first?["success"] == alone.json, "\(batched.json)")
            let stored = try await p.get("Doc", doc)
            #expect(stored["text"] == "mine", "nothing above changed the object: \(stored.json)")
        }
    }

    @Test("rate limits and idempotency: a batch counts and claims as the same requests alone", arguments: Backend.all)
    func countedRules(_ backend: Backend) async throws {
        let rules = try RateLimitRule.parse(
            JSONParser.parse(#"[{"requestPath":"/classes/Doc","requestTimeWindow":60000,"requestCount":2,"requestMethods":["POST"]}]"#))
        let options = TestServer.options {
            $0.allowClientClassCreation = true
            $0.security.idempotency = IdempotencyOptions(paths: ["classes/.*", "batch"], ttl: 600)
        }
        try await OperationsTests.with(backend: backend, options: options, rateLimits: rules) { p, _ in
            let create: JSONValue = ["method": "POST", "path": "/parse/classes/Doc", "body": ["n": 1]]
            #expect(try await p.request(.post, "/classes/Doc", ["n": 1], master: false).status == 201)
            #expect(try await p.request(.post, "/batch", ["requests": [create]], master: false).status == 200)
            let direct = try await p.request(.post, "/classes/Doc", ["n": 1], master: false)
            let batched = try await p.request(.post, "/batch", ["requests": [create]], master: false)
            #expect(direct.status == 429 && batched.status == 429)
            #expect(direct.json == batched.json, "\(direct.json) vs \(batched.json)")
            // The same X-Parse-Request-Id twice: applied once, 159 the second time, alone or as a batch.
            for path in ["/classes/Other", "/batch"] {
                let body: JSONValue =
                    path == "/batch" ? ["requests": [["method": "POST", "path": "/parse/classes/Other", "body": ["m": 1]]]] : ["m": 1]
                let id = "retry-\(path)"
                let first = try await p.request(.post, path, body, extra: ["X-Parse-Request-Id": id])
                let second = try await p.request(.post, path, body, extra: ["X-Parse-Request-Id": id])
                #expect(first.status < 300, "\(path): \(first.json)")
                #expect(second.status == 400 && second.code == 159, "\(path): \(second.json)")
            }
            #expect(try await p.find("Other").results.count == 2, "each retried call was applied once")
        }
    }
}

/// A transactional batch holds the database's writer (SQLite's only one) while its sub-requests run, before-hooks
/// included: their webhooks share one timeout's budget, so a slow hook service cannot stall every other write for
/// (sub-requests x timeout).
@Suite("Transactional batch: webhook budget")
struct TransactionalBatchHookBudgetTests {
    @Test("beforeSave webhooks of a transactional batch share one webhookTimeout; past it the batch rolls back", arguments: Backend.all)
    func budget(_ backend: Backend) async throws {
        // Generous against a loaded machine: each hook answers in 1.5 s (well within its 4 s), four of them in one
        // transaction (6 s) pass the budget of one timeout (4 s).
        let options = TestServer.options { $0.webhookTimeout = .seconds(4) }
        try await WebhookReceiver.with { hooks in
            try await TestServer.with(backend: backend, options) { p in
                hooks.respond("/beforeSave", .slow(.milliseconds(1500)))
                let hook = try await p.request(
                    .post, "/hooks/triggers", ["className": "Slow", "triggerName": "beforeSave", "url": .string(hooks.url("/beforeSave"))])
                #expect(hook.status < 300, "\(hook.json)")
                let create: JSONValue = ["method": "POST", "path": "/parse/classes/Slow", "body": ["n": 1]]
                // Alone, each hook answers within its timeout.
                let plain = try await p.request(.post, "/batch", ["requests": [create, create, create, create]])
                #expect(plain.json.arrayValue?.allSatisfy { $0["success"] != nil } == true, "\(plain.json)")
                // In one transaction the four answers (6 s) pass the budget of one timeout (4 s): nothing is stored.
                let started = ContinuousClock.now
                let atomic = try await p.request(.post, "/batch", ["requests": [create, create, create, create], "transaction": true])
                #expect(atomic.status == 400 && atomic.code == 141, "\(atomic.json)")
                #expect(atomic["error"]?.stringValue?.contains("timed out") == true, "\(atomic.json)")
                #expect(ContinuousClock.now - started < .seconds(12), "the writer was held past the budget")
                #expect(try await p.find("Slow").results.count == 4, "the transactional batch stored nothing")
            }
        }
    }
}
