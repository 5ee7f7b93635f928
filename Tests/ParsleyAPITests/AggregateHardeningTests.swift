import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// What leaves the server through `GET /aggregate`: no internal field (password hash, tokens, lockout counters,
/// `_rperm`/`_wperm`) and no session token is answered, matched, grouped or sorted on, with the master key or the
/// read-only one (105); `ACL`, unknown fields, constants and odd operands answer Parse Server's result or a Parse
/// error on both backends, never a 5xx.
@Suite("Aggregate hardening")
struct AggregateHardeningTests {
    static let readOnlyKey = "aggregate-read-only-key"

    static func options() -> ParseServerOptions {
        TestServer.options { $0.readOnlyMasterKey = readOnlyKey }
    }

    /// `GET /aggregate/<className>?<params>` with `key` as the master key.
    static func aggregate(
        _ p: ParseClient, _ className: String, _ params: [String: String], key: String = TestServer.masterKey
    ) async throws -> Reply {
        let query = params.sorted { $0.key < $1.key }.map { "\($0.key)=\(ParseClient.encode($0.value))" }.joined(separator: "&")
        return try await p.request(.get, "/aggregate/\(className)?" + query, master: false, extra: ["X-Parse-Master-Key": key])
    }

    static func pipeline(_ p: ParseClient, _ className: String, _ stages: String, key: String = TestServer.masterKey) async throws -> Reply {
        try await aggregate(p, className, ["pipeline": stages], key: key)
    }

    /// Whether an answer carries a bcrypt hash or one of `secrets`.
    static func leaks(_ r: Reply, _ secrets: [String]) -> Bool {
        let text = JSONWriter.string(r.json)
        return ["$2a$", "$2b$", "$2y$"].contains(where: text.contains) || secrets.contains(where: text.contains)
    }

    @Test(
        "internal fields and session tokens are 105 in distinct, where, $match, $group, $project and $sort, with either master key",
        arguments: Backend.all)
    func credentials(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            let alice = try await p.signUp("alice", "correct horse battery")
            let anon = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "anon-login-id"]]], master: false)
            let anonId = try #require(anon["objectId"]?.stringValue)
            let anonToken = try #require(anon["sessionToken"]?.stringValue)
            let secrets = [alice.token, anonToken]
            for key in [TestServer.masterKey, Self.readOnlyKey] {
                func refused(_ r: Reply, _ what: String) {
                    #expect(r.status == 400 && r.code == 105, "\(what): \(r.status) \(r.json)")
                    #expect(!Self.leaks(r, secrets), "\(what) leaks: \(r.json)")
                }
                let internalFields = [
                    "_hashed_password", "_email_verify_token", "_perishable_token", "_perishable_token_expires_at", "_failed_login_count",
                    "_account_lockout_expires_at", "_password_changed_at", "_password_history", "_rperm", "_wperm", "_hashed_password.x",
                ]
                for field in internalFields {
                    refused(try await Self.aggregate(p, "_User", ["distinct": field], key: key), "distinct \(field)")
                }
                refused(try await Self.aggregate(p, "_Session", ["distinct": "sessionToken"], key: key), "distinct sessionToken")
                refused(
                    try await Self.aggregate(p, "_User", ["distinct": "username", "where": #"{"_hashed_password":{"$regex":"^\\$2"}}"#], key: key),
                    "distinct where _hashed_password")
                let userPipelines = [
                    #"[{"$group":{"_id":"$_hashed_password","n":{"$sum":1}}}]"#,
                    #"[{"$group":{"_id":{"h":"$_hashed_password"}}}]"#,
                    #"[{"$group":{"_id":null,"h":{"$max":"$_hashed_password"}}}]"#,
                    #"[{"$group":{"_id":null,"n":{"$sum":"$_failed_login_count"}}}]"#,
                    #"[{"$group":{"_id":{"$year":"$_password_changed_at"}}}]"#,
                    #"[{"$match":{"_hashed_password":{"$regex":"^\\$2"}}},{"$count":"n"}]"#,
                    #"[{"$match":{"username":"alice"}},{"$project":{"_hashed_password":1}}]"#,
                    #"[{"$sort":{"_hashed_password":1}}]"#,
                    #"[{"$match":{"objectId":{"$select":{"query":{"className":"_Session","where":{}},"key":"sessionToken"}}}}]"#,
                    #"[{"$match":{"objectId":{"$inQuery":{"className":"_Session","where":{"sessionToken":{"$regex":"^r:"}}}}}}]"#,
                ]
                for stages in userPipelines { refused(try await Self.pipeline(p, "_User", stages, key: key), stages) }
                let sessionPipelines = [
                    #"[{"$group":{"_id":"$sessionToken","n":{"$sum":1}}}]"#,
                    #"[{"$group":{"_id":null,"t":{"$min":"$sessionToken"}}}]"#,
                    #"[{"$match":{"sessionToken":{"$regex":"^r:"}}},{"$count":"n"}]"#,
                    #"[{"$match":{"user":{"$inQuery":{"className":"_User","where":{"_hashed_password":{"$exists":true}}}}}}]"#,
                    #"[{"$project":{"sessionToken":1}}]"#,
                    #"[{"$sort":{"sessionToken":1}}]"#,
                ]
                for stages in sessionPipelines { refused(try await Self.pipeline(p, "_Session", stages, key: key), stages) }

                // Whole objects: what a master-key find shows, without internal fields or session tokens.
                for (className, stages) in [("_User", #"[{"$match":{}}]"#), ("_User", "[]"), ("_Session", #"[{"$limit":10}]"#), ("_Session", "{}")] {
                    let r = try await Self.pipeline(p, className, stages, key: key)
                    #expect(r.status == 200 && r.results.count == 2, "\(className) \(stages): \(r.json)")
                    #expect(!Self.leaks(r, secrets), "\(className) \(stages) leaks: \(r.json)")
                    #expect(r.results.allSatisfy { $0.objectValue?.keys.contains { $0.hasPrefix("_") || $0 == "sessionToken" } == false })
                }
                // authData as a find with the same key gives it: the master key's finds show it, the read-only key's do not
                // (an anonymous id is a log-in), and there it is 105 when named.
                let found = try await p.request(
                    .get, "/classes/_User?where=" + ParseClient.encode(#"{"objectId":"\#(anonId)"}"#), master: false,
                    extra: ["X-Parse-Master-Key": key])
                let projected = try await Self.pipeline(p, "_User", #"[{"$match":{"objectId":"\#(anonId)"}}]"#, key: key)
                #expect(projected.status == 200 && projected.results.first?["authData"] == found.results.first?["authData"])
                let named = try await Self.pipeline(p, "_User", #"[{"$match":{"objectId":"\#(anonId)"}},{"$project":{"authData":1}}]"#, key: key)
                if key == Self.readOnlyKey {
                    #expect(found.results.first?["authData"] == nil, "\(found.json)")
                    refused(named, "read-only $project authData")
                } else {
                    #expect(named.status == 200 && named.results.first?["authData"] == found.results.first?["authData"])
                    #expect(named.results.first?["authData"] != nil)
                }
            }
        }
    }

    @Test("ACL: distinct answers [], $group and accumulators on it are 102, $project keeps it", arguments: Backend.all)
    func acl(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await AggregateTests.seed(p)
            let distinct = try await AggregateTests.aggregate(p, ["distinct": "ACL"])
            #expect(distinct.status == 200 && distinct.results.isEmpty, "\(distinct.json)")
            for stages in [
                #"[{"$group":{"_id":"$ACL","n":{"$sum":1}}}]"#, #"[{"$group":{"_id":{"a":"$ACL"}}}]"#,
                #"[{"$group":{"_id":null,"m":{"$max":"$ACL"}}}]"#, #"[{"$group":{"_id":null,"m":{"$min":"$ACL"}}}]"#,
                #"[{"$group":{"_id":null,"s":{"$sum":"$ACL"}}}]"#, #"[{"$group":{"_id":"$team","a":{"$avg":"$ACL"}}}]"#,
                #"[{"$match":{"ACL":{"$exists":true}}}]"#, #"[{"$sort":{"ACL":1}}]"#,
            ] {
                let r = try await AggregateTests.aggregate(p, ["pipeline": stages])
                #expect(r.status == 400 && r.code == 102, "\(stages): \(r.status) \(r.json)")
            }
            let projected = try await AggregateTests.aggregate(p, ["pipeline": #"[{"$project":{"ACL":1,"player":1}}]"#])
            #expect(projected.status == 200 && projected.results.count == 5, "\(projected.json)")
        }
    }

    @Test("unknown fields, relations and constants in $group: one null (or constant) key, as Mongo answers, on both backends", arguments: Backend.all)
    func unknownFieldsAndConstants(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await AggregateTests.seed(p)
            let someone = try await p.createId("Score", ["player": "zed"])
            let pointer: JSONValue = ["__type": "Pointer", "className": "Score", "objectId": .string(someone)]
            let fan = try await p.update("Score", someone, ["fans": ["__op": "AddRelation", "objects": [pointer]]])
            #expect(fan.status == 200, "\(fan.json)")
            func results(_ stages: String) async throws -> [JSONValue] {
                let r = try await AggregateTests.aggregate(p, ["pipeline": stages])
                #expect(r.status == 200, "\(stages): \(r.status) \(r.json)")
                return r.results
            }
            #expect(try await results(#"[{"$group":{"_id":"$nope","n":{"$sum":1}}}]"#) == [["objectId": .null, "n": 6]])
            #expect(try await results(#"[{"$group":{"_id":"$fans","n":{"$sum":1}}}]"#) == [["objectId": .null, "n": 6]])
            #expect(try await results(#"[{"$group":{"_id":7,"n":{"$sum":1}}}]"#) == [["objectId": 7, "n": 6]])
            #expect(
                try await results(#"[{"$group":{"_id":{"k":1.5,"x":"$nope"},"n":{"$sum":2}}}]"#) == [["objectId": ["k": 1.5, "x": .null], "n": 12]])
            let byTeam = try await results(
                #"[{"$match":{"team":{"$exists":true}}},{"$group":{"_id":{"t":"$team","x":"$nope","c":3},"n":{"$sum":1}}},"#
                    + #"{"$sort":{"_id.t":1,"_id.x":1}}]"#)
            #expect(byTeam.map { $0["objectId"]?["t"] } == ["blue", "green", "red"])
            #expect(byTeam.allSatisfy { $0["objectId"]?["x"] == .null && $0["objectId"]?["c"] == 3 })
            #expect(byTeam.map { $0["n"] } == [2, 1, 2])
            let missing = try await results(
                #"[{"$match":{"team":"red"}},{"$group":{"_id":"$team","s":{"$sum":"$nope"},"a":{"$avg":"$nope"},"#
                    + #""lo":{"$min":"$nope"},"hi":{"$max":"$fans"}}}]"#)
            #expect(missing == [["objectId": "red", "s": 0, "a": .null, "lo": .null, "hi": .null]])
            #expect(try await results(#"[{"$match":{"team":"purple"}},{"$group":{"_id":"$nope","n":{"$sum":1}}}]"#).isEmpty)
            #expect(try await results(#"[{"$match":{"team":"purple"}},{"$group":{"_id":5,"n":{"$sum":1}}}]"#).isEmpty)
            #expect(try await results(#"[{"$group":{"_id":{},"n":{"$sum":1}}}]"#) == [["objectId": [:], "n": 6]])
            #expect(try await results(#"[{"$sort":{"nope":1,"player":1}},{"$limit":2}]"#).map { $0["player"] } == ["ann", "bob"])
            #expect(try await results(#"[{"$project":{"nope":1}}]"#).count == 6)
            #expect(try await AggregateTests.results(p, ["distinct": "nope.x"]).isEmpty)
            #expect(try await AggregateTests.results(p, ["distinct": "fans"]).isEmpty)
        }
    }

    @Test(
        "odd operands: $sort on \"_id.\", $min of an array, huge $sum constants and sums, bad stage shapes answer 200 or 102, never 5xx",
        arguments: Backend.all)
    func oddOperands(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await AggregateTests.seed(p)
            let cases: [(String, Int?)] = [
                (#"[{"$group":{"_id":"$team","n":{"$sum":1}}},{"$sort":{"_id.":1}}]"#, 102),
                (#"[{"$group":{"_id":{"t":"$team"},"n":{"$sum":1}}},{"$sort":{"objectId.":-1}}]"#, 102),
                (#"[{"$group":{"_id":"$team","lo":{"$min":"$tags"}}}]"#, 102),
                (#"[{"$group":{"_id":"$team","hi":{"$max":"$tags"}}}]"#, 102),
                (#"[{"$group":{"_id":"$team","s":{"$sum":"$player"}}}]"#, 102),
                (#"[{"$group":{"_id":"$team","a":{"$avg":"$when"}}}]"#, 102),
                (#"[{"$group":{"_id":{"a":{"b":"$team"}}}}]"#, 102),
                (#"[{"$group":{"_id":"$team.x"}}]"#, 102),
                (#"[{"$group":{"_id":true}}]"#, 102), (#"[{"$group":{"_id":"team"}}]"#, 102), (#"[{"$group":{"_id":[1]}}]"#, 102),
                (#"[{"$group":{"_id":"$team","s":{"$sum":"points"}}}]"#, 102), (#"[{"$group":{"_id":"$team","s":{"$min":3}}}]"#, 102),
                (#"[{"$group":{}}]"#, 102), (#"[{}]"#, 102), (#"[{"$sort":{}}]"#, 102), (#"[{"$limit":"x"}]"#, 102), (#"[{"$skip":-1}]"#, 102),
                (#"[{"$group":{"_id":"$team","lo":{"$min":"$player"},"hi":{"$max":"$when"}}}]"#, nil),
                (#"[{"$project":{}}]"#, nil), ("[]", nil),
            ]
            for (stages, code) in cases {
                let r = try await AggregateTests.aggregate(p, ["pipeline": stages])
                #expect(r.status == (code == nil ? 200 : 400) && r.code == code, "\(stages): \(r.status) \(r.json)")
            }
            let huge = try await AggregateTests.results(p, ["pipeline": #"[{"$group":{"_id":null,"s":{"$sum":9223372036854775807}}}]"#])
            #expect(huge.first?["s"]?.numberValue == 5 * 9223372036854775807.0, "\(huge)")
            let half = try await AggregateTests.results(p, ["pipeline": #"[{"$group":{"_id":null,"s":{"$sum":0.5}}}]"#])
            #expect(half.first?["s"] == 2.5)
            for _ in 0..<2 { _ = try await p.createId("Score", ["team": "big", "points": 9_223_372_036_854_775_807]) }
            let bigSum = #"[{"$match":{"team":"big"}},{"$group":{"_id":"$team","s":{"$sum":"$points"}}}]"#
            let sum = try await AggregateTests.aggregate(p, ["pipeline": bigSum])
            #expect(sum.status == 200 && sum.results.first?["s"]?.numberValue == 2 * 9223372036854775807.0, "\(sum.status) \(sum.json)")
        }
    }
}
