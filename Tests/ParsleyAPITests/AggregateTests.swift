import Foundation
import HTTPTypes
import ParsleyCore
import Testing

/// `GET /aggregate/:className` on both backends: `distinct` (arrays expanded) and pipelines of `$match`, `$group`
/// (field, object of fields, null, date parts; `$sum`, `$avg`, `$min`, `$max`), `$project`, `$sort`, `$skip`,
/// `$limit`, `$count`, with Parse Server's shapes (`_id` as `objectId`) and 102 for what cannot run.
@Suite("Aggregate")
struct AggregateTests {
    static func seed(_ p: ParseClient) async throws {
        let rows: [JSONValue] = [
            ["player": "ann", "team": "red", "points": 10, "tags": ["a", "b"], "when": ["__type": "Date", "iso": "2024-01-05T10:00:00.000Z"]],
            ["player": "bob", "team": "red", "points": 30, "tags": ["b"], "when": ["__type": "Date", "iso": "2024-01-20T11:00:00.000Z"]],
            ["player": "cy", "team": "blue", "points": 5, "tags": ["c", "a"], "when": ["__type": "Date", "iso": "2024-02-01T12:00:00.000Z"]],
            ["player": "dee", "team": "blue", "points": 7.5, "tags": [], "when": ["__type": "Date", "iso": "2025-02-03T13:00:00.000Z"]],
            ["player": "eve", "team": "green", "points": 1],
        ]
        for row in rows { _ = try await p.createId("Score", row) }
    }

    static func aggregate(_ p: ParseClient, _ params: [String: String], master: Bool = true) async throws -> Reply {
        let query = params.sorted { $0.key < $1.key }.map { "\($0.key)=\(ParseClient.encode($0.value))" }.joined(separator: "&")
        return try await p.request(.get, "/aggregate/Score?" + query, master: master)
    }

    static func results(_ p: ParseClient, _ params: [String: String]) async throws -> [JSONValue] {
        let r = try await aggregate(p, params)
        guard r.status == 200 else { throw Failure("aggregate \(params): \(r.status) \(r.json)") }
        return r.results
    }

    @Test("distinct: values of a field (arrays expanded, where applied); [] for an unknown field or class", arguments: Backend.all)
    func distinct(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await Self.seed(p)
            let teams = try await Self.results(p, ["distinct": "team"]).compactMap(\.stringValue).sorted()
            #expect(teams == ["blue", "green", "red"])
            let redPoints = try await Self.results(p, ["distinct": "points", "where": #"{"team":"red"}"#]).compactMap(\.numberValue).sorted()
            #expect(redPoints == [10, 30])
            let tags = try await Self.results(p, ["distinct": "tags"]).compactMap(\.stringValue).sorted()
            #expect(tags == ["a", "b", "c"])
            let dates = try await Self.results(p, ["distinct": "when", "where": #"{"team":"blue"}"#])
            #expect(Set(dates.compactMap { $0["iso"]?.stringValue }) == ["2024-02-01T12:00:00.000Z", "2025-02-03T13:00:00.000Z"])
            #expect(try await Self.results(p, ["distinct": "nothing"]).isEmpty)
            let unknown = try await p.request(.get, "/aggregate/Nope?distinct=team")
            #expect(unknown.status == 200 && unknown.results.isEmpty)
            #expect(try await Self.aggregate(p, ["distinct": "team"], master: false).status == 403)
        }
    }

    @Test("$group by a field with $sum, $avg, $min, $max; sorted; by null; by date parts; after $match; $count", arguments: Backend.all)
    func group(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await Self.seed(p)
            let byTeam = try await Self.results(
                p,
                [
                    "pipeline":
                        #"[{"$group":{"_id":"$team","total":{"$sum":"$points"},"n":{"$sum":1},"avg":{"$avg":"$points"},"low":{"$min":"$points"},"#
                        + #""high":{"$max":"$points"}}},{"$sort":{"total":-1}}]"#
                ])
            try #require(byTeam.map { $0["objectId"] } == ["red", "blue", "green"])
            #expect(byTeam.map { $0["total"] } == [40, 12.5, 1])
            #expect(byTeam.map { $0["n"] } == [2, 2, 1])
            #expect(byTeam[0]["avg"]?.numberValue == 20)
            #expect(byTeam[1]["low"] == 5)
            #expect(byTeam[1]["high"] == 7.5)
            let all = try await Self.results(p, ["pipeline": #"[{"$group":{"_id":null,"total":{"$sum":"$points"}}}]"#])
            #expect(all == [["objectId": .null, "total": 53.5]])
            let none = try await Self.results(p, ["pipeline": #"[{"$match":{"team":"purple"}},{"$group":{"_id":null,"total":{"$sum":1}}}]"#])
            #expect(none.isEmpty)
            let months = try await Self.results(
                p,
                [
                    "pipeline":
                        #"[{"$match":{"when":{"$exists":true}}},{"$group":{"_id":{"y":{"$year":"$when"},"m":{"$month":"$when"}},"n":{"$sum":1}}},"#
                        + #"{"$sort":{"_id":1}}]"#
                ])
            #expect(months.map { $0["objectId"] } == [["y": 2024, "m": 1], ["y": 2024, "m": 2], ["y": 2025, "m": 2]])
            #expect(months.map { $0["n"] } == [2, 1, 1])
            let red = try await Self.results(
                p, ["pipeline": #"{"match":{"points":{"$gte":7}},"group":{"_id":"$team","n":{"$sum":1}},"sort":{"_id":1}}"#])
            #expect(red.map { $0["objectId"] } == ["blue", "red"])
            let paged = try await Self.results(
                p, ["pipeline": #"[{"$group":{"_id":"$team","n":{"$sum":1}}},{"$sort":{"_id":1}},{"$skip":1},{"$limit":1}]"#])
            #expect(paged.map { $0["objectId"] } == ["green"])
            let counted = try await Self.results(p, ["pipeline": #"[{"$match":{"team":"red"}},{"$count":"reds"}]"#])
            #expect(counted == [["reds": 2]])
        }
    }

    @Test("$match, $project, $sort, $skip and $limit alone answer objects; bad stages are 102", arguments: Backend.all)
    func objectsAndErrors(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await Self.seed(p)
            let top = try await Self.results(
                p, ["pipeline": #"[{"$match":{"points":{"$gt":5}}},{"$project":{"player":1}},{"$sort":{"points":-1}},{"$skip":1},{"$limit":2}]"#])
            #expect(top.map { $0["player"] } == ["ann", "dee"])
            #expect(top.allSatisfy { $0["objectId"]?.stringValue != nil && $0["team"] == nil })
            for bad in [
                #"[{"$lookup":{"from":"X"}}]"#, #"[{"$group":{"total":{"$sum":1}}}]"#, #"[{"$group":{"_id":"$team","x":{"$push":"$points"}}}]"#,
                #"[{"$group":{"_id":"$team","a":{"$avg":"$player"}}}]"#, #"[{"$limit":2},{"$match":{"team":"red"}}]"#,
                #"[{"$group":{"_id":{"$year":"$player"}}}]"#, #"[{"$group":{"_id":"$team","n":{"$sum":1}}},{"$sort":{"player":1}}]"#, #""x""#,
            ] {
                let r = try await Self.aggregate(p, ["pipeline": bad])
                #expect(r.code == 102, "\(bad) -> \(r.json)")
            }
        }
    }
}
