import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Parse Server 9.9's aggregate options `rawValues` (Extended JSON dates in and out) and `rawFieldNames` (the
/// database's names: `_id`, `_created_at`, `_p_<pointer>`), per request and as `query.aggregation*` defaults.
@Suite("Aggregate: rawValues and rawFieldNames")
struct AggregateRawTests {
    @Test("rawValues: $date in the pipeline, dates answered as {$date}; without it Parse's Date objects", arguments: Backend.all)
    func rawValues(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await AggregateTests.seed(p)
            let pipeline =
                #"[{"$match":{"when":{"$gte":{"$date":"2024-01-10T00:00:00.000Z"}}}},{"$project":{"player":1,"when":1}},{"$sort":{"player":1}}]"#
            let raw = try await AggregateTests.results(p, ["pipeline": pipeline, "rawValues": "true"])
            #expect(raw.map { $0["player"] } == ["bob", "cy", "dee"], "\(raw)")
            #expect(raw.first?["when"] == ["$date": "2024-01-20T11:00:00.000Z"], "\(raw)")
            #expect(raw.allSatisfy { $0["createdAt"]?["$date"]?.stringValue != nil && $0["objectId"]?.stringValue != nil }, "\(raw)")
            let parse = try await AggregateTests.results(
                p, ["pipeline": #"[{"$match":{"player":"bob"}},{"$project":{"when":1}}]"#, "rawValues": "false"])
            #expect(parse.first?["when"] == ["__type": "Date", "iso": "2024-01-20T11:00:00.000Z"], "\(parse)")
            #expect(parse.first?["createdAt"]?.stringValue != nil)
            let distinct = try await AggregateTests.results(p, ["distinct": "when", "where": #"{"player":"cy"}"#, "rawValues": "true"])
            #expect(distinct == [["$date": "2024-02-01T12:00:00.000Z"]])
        }
    }

    @Test(
        "rawFieldNames: _id, _created_at and _p_ names in and out; internal fields still refused; query.* sets the defaults", arguments: Backend.all)
    func rawFieldNames(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await AggregateTests.seed(p)
            let groups = try await AggregateTests.results(
                p, ["pipeline": #"[{"$group":{"_id":"$team","n":{"$sum":1}}},{"$sort":{"_id":1}}]"#, "rawFieldNames": "true"])
            #expect(groups == [["_id": "blue", "n": 2], ["_id": "green", "n": 1], ["_id": "red", "n": 2]], "\(groups)")
            let rows = try await AggregateTests.results(
                p,
                [
                    "pipeline": #"[{"$match":{"_created_at":{"$exists":true},"player":"ann"}},{"$project":{"_id":1,"player":1,"_created_at":1}}]"#,
                    "rawFieldNames": "true",
                ])
            #expect(rows.count == 1)
            #expect(rows.first?["_id"]?.stringValue != nil && rows.first?["objectId"] == nil, "\(rows)")
            #expect(rows.first?["_created_at"]?.stringValue != nil && rows.first?["createdAt"] == nil, "\(rows)")
            let team = try await p.createId("Team", ["name": "red"])
            _ = try await p.createId("Member", ["team": ["__type": "Pointer", "className": "Team", "objectId": .string(team)]])
            let members = try await p.request(
                .get, "/aggregate/Member?rawFieldNames=true&pipeline=" + ParseClient.encode(#"[{"$project":{"_p_team":1}}]"#))
            #expect(members.results.first?["_p_team"] == .string("Team$" + team), "\(members.json)")
            for hidden in [#"[{"$match":{"_hashed_password":"x"}}]"#, #"[{"$group":{"_id":"$_rperm"}}]"#] {
                let r = try await AggregateTests.aggregate(p, ["pipeline": hidden, "rawFieldNames": "true"])
                #expect(r.status == 400 && r.code != nil, "\(hidden) -> \(r.json)")
            }
            // Without the option Parse's names.
            let parse = try await AggregateTests.results(p, ["pipeline": #"[{"$group":{"_id":"$team","n":{"$sum":1}}},{"$sort":{"_id":1}}]"#])
            #expect(parse.first == ["objectId": "blue", "n": 2])
        }
        let defaults = TestServer.options {
            $0.aggregationRawFieldNames = true
            $0.aggregationRawValues = true
        }
        try await TestServer.with(backend: backend, defaults) { p in
            try await AggregateTests.seed(p)
            let groups = try await AggregateTests.results(p, ["pipeline": #"[{"$group":{"_id":null,"n":{"$sum":1}}}]"#])
            #expect(groups == [["_id": .null, "n": 5]], "\(groups)")
            let parse = try await AggregateTests.results(
                p, ["pipeline": #"[{"$group":{"_id":null,"n":{"$sum":1}}}]"#, "rawFieldNames": "false", "rawValues": "false"])
            #expect(parse == [["objectId": .null, "n": 5]], "\(parse)")
        }
    }
}
