import Foundation
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP

/// Log-in throughput, and reads as a signed-in user through ACLs (10 roles, the user in 3).
enum SecurityBench {
    struct Result {
        var login: Measure
        var get: Measure
        var query: Measure
        /// The same indexed query on objects without ACLs, measured in turns with `query` (medians of `rounds` each).
        var plainQuery: Measure
    }

    static func call(_ api: ParseAPI, _ method: ParseRequest.Method, _ path: [String], _ body: JSONValue? = nil, base: String) async throws
        -> JSONValue
    {
        try await api.handle(ParseRequest(method: method, path: path, body: body, auth: .master, mountURL: base + "/parse")).body
    }

    /// The signed-in user and the SecureItem objects it reads through roles (10 roles, the user in 3).
    struct Fixture {
        var userId: String
        var token: String
        static let queryPath = BenchData.queryPath("SecureItem")
    }

    static func populate(api: ParseAPI, base: String, arguments: BenchArguments) async throws -> Fixture {
        let signUp = try await api.users.signUp(
            SignUp(credentials: .password(username: "bench-user", password: "bench-password"), fields: ["username": "bench-user"]), auth: .nobody)
        let userId = signUp.objectId
        let token = signUp.body["sessionToken"]?.stringValue ?? ""
        // 10 roles; the user is in role0..role2.
        for r in 0..<10 {
            var body: JSONValue = ["name": .string("role\(r)"), "ACL": ["*": ["read": true]]]
            if r < 3 {
                body = [
                    "name": .string("role\(r)"), "ACL": ["*": ["read": true]],
                    "users": ["__op": "AddRelation", "objects": [Pointer(className: "_User", objectId: userId).json]],
                ]
            }
            _ = try await call(api, .post, ["roles"], body, base: base)
        }
        // Every object readable by one of 10 roles (or the user), mixed within each category; the user reads 4 in 10.
        _ = try await call(
            api, .post, ["schemas", "SecureItem"],
            [
                "className": "SecureItem", "fields": ["category": ["type": "String"], "score": ["type": "Number"], "title": ["type": "String"]],
                "indexes": ["category_score": ["category": 1, "score": -1]],
            ], base: base)
        try await BenchData.populate(api, className: "SecureItem", count: arguments.objects, what: " with ACLs") { i in
            let bucket = (i / 100) % 10
            let reader: String = bucket == 9 ? userId : "role:role\(bucket)"
            return ["ACL": .object([reader: ["read": true], "role:role9": ["read": true, "write": true]])]
        }
        return Fixture(userId: userId, token: token)
    }

    static func measure(
        _ fixture: Fixture, api: ParseAPI, wrk: Wrk, base: String, headers: [String: String], plainQueryScript: String, arguments: BenchArguments,
        directory: URL
    ) async throws -> Result {
        let (userId, token) = (fixture.userId, fixture.token)
        var userHeaders = headers
        userHeaders["X-Parse-Master-Key"] = nil
        userHeaders["X-Parse-Session-Token"] = token
        let login = try wrk.run(
            name: "login", url: base, seconds: arguments.seconds,
            script: WrkScript.fixed(
                method: "POST", path: "/parse/login", headers: userHeaders.filter { $0.key != "X-Parse-Session-Token" },
                body: #"{"username":"bench-user","password":"bench-password"}"#), directory: directory)
        var options = FindOptions()
        options.whereValue = ["category": ["$in": ["c0", "c1", "c2", "c3"]]]
        options.limit = 2000
        options.keys = ["objectId"]
        let readable = try await api.queries.find(
            "SecureItem", options, auth: Auth(isMaster: false, userId: userId, roles: ["role0", "role1", "role2"])
        )
        .results.compactMap { $0["objectId"]?.stringValue }
        print("  the user can read \(readable.count) of the sampled objects")
        let get = try wrk.run(
            name: "get-acl", url: base, seconds: arguments.seconds,
            script: WrkScript.randomId(method: "GET", prefix: "/parse/classes/SecureItem/", ids: readable, headers: userHeaders, body: nil),
            directory: directory)
        let queryPath = Fixture.queryPath
        // The ACL'd query and the same query without ACLs in turns, so drift of the machine hits both alike.
        var acl: [Measure] = [], plain: [Measure] = []
        for round in 1...rounds {
            acl.append(
                try wrk.run(
                    name: "query-acl #\(round)", url: base, seconds: arguments.seconds,
                    script: WrkScript.fixed(method: "GET", path: queryPath, headers: userHeaders, body: nil), directory: directory))
            plain.append(try wrk.run(name: "query #\(round)", url: base, seconds: arguments.seconds, script: plainQueryScript, directory: directory))
        }
        return Result(login: login, get: get, query: median(acl), plainQuery: median(plain))
    }

    /// Rounds of the two queries, in turns (this machine's speed drifts by ±15% within a minute).
    static let rounds = 5

    static func median(_ runs: [Measure]) -> Measure {
        runs.sorted { $0.requestsPerSecond < $1.requestsPerSecond }[runs.count / 2]
    }
}
