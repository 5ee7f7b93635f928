import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// One query semantics: every case runs as a find through the real server (SQL on SQLite and on PostgreSQL) and
/// through `QueryMatcher` on the same objects in memory, and both must pick the same objects. The matcher is what
/// LiveQuery will decide events with.
@Suite("Query matcher conformance")
struct QueryMatcherConformanceTests {
    static let schema = ClassSchema(
        className: "Conf",
        fields: [
            "s": .string, "n": .number, "b": .boolean, "d": .date, "p": .pointer("Other"), "a": .array, "o": .object, "g": .geoPoint,
            "area": .polygon,
        ])
    static func point(_ lat: Double, _ lng: Double) -> JSONValue { ["__type": "GeoPoint", "latitude": .double(lat), "longitude": .double(lng)] }
    static let square: JSONValue = ["__type": "Polygon", "coordinates": [[0, 0], [0, 10], [10, 10], [10, 0]]]

    static func date(_ seconds: Int64) -> JSONValue {
        ["__type": "Date", "iso": .string(ParseDate(milliseconds: 1_700_000_000_000 + seconds * 1000).iso)]
    }
    static func other(_ id: String) -> JSONValue { ["__type": "Pointer", "className": "Other", "objectId": .string(id)] }

    /// The objects: `k` names each; some fields missing on purpose.
    static let objects: [[String: JSONValue]] = [
        [
            "k": "o1", "s": "apple", "n": 1, "b": true, "d": date(0), "p": other("x1"), "a": [1, 2, 3],
            "o": ["x": 1, "y": "t", "z": ["w": true], "when": date(0), "who": other("x1")], "g": point(1, 1), "area": square,
        ],
        [
            "k": "o2", "s": "Banana", "n": 2.5, "b": false, "d": date(60), "p": other("x2"), "a": ["a", "b"],
            "o": ["x": "1", "y": "u", "z": ["w": false]], "g": point(40, -74),
        ],
        ["k": "o3", "s": "cherry", "n": -4, "d": date(-60), "a": [2, "b", true], "o": ["x": 7, "when": date(120)]],
        ["k": "o4", "n": 10, "b": true, "a": [], "g": point(5, 5)],
        ["k": "o5", "s": "apricot", "p": other("x1")],
        ["k": "o6"],
    ]

    static let cases: [JSONValue] = [
        [:],
        ["s": "apple"], ["s": ["$ne": "apple"]], ["s": .null], ["s": ["$ne": .null]], ["s": ["$exists": true]], ["s": ["$exists": false]],
        ["s": ["$in": ["apple", "cherry"]]], ["s": ["$nin": ["apple"]]], ["s": ["$nin": ["apple", .null]]], ["s": ["$in": ["apple", .null]]],
        ["s": ["$gt": "apple"]], ["s": ["$lte": "apricot"]], ["s": ["$gt": 5]], ["s": 5],
        ["s": ["$regex": "^ap"]], ["s": ["$regex": "^b", "$options": "i"]], ["s": ["$regex": "an"]], ["s": ["$regex": "\\Qpp\\E"]],
        ["n": 1], ["n": 2.5], ["n": ["$gt": 1]], ["n": ["$gte": 1, "$lt": 10]], ["n": ["$lt": 0]], ["n": ["$ne": 1]], ["n": "1"],
        ["n": ["$in": [1, 10]]], ["n": ["$nin": [1, 10]]], ["n": ["$exists": false]], ["n": ["$gt": "a"]],
        ["b": true], ["b": false], ["b": ["$ne": true]], ["b": ["$exists": true]], ["b": 1],
        ["d": ["$gt": date(0)]], ["d": ["$lte": date(0)]], ["d": date(60)], ["d": ["$exists": false]], ["d": ["$ne": date(0)]],
        ["p": other("x1")], ["p": ["$ne": other("x1")]], ["p": ["$in": [other("x2"), other("x9")]]], ["p": ["$exists": true]],
        ["p": ["__type": "Pointer", "className": "Elsewhere", "objectId": "x1"]], ["p": ["$nin": [other("x1")]]],
        ["a": 2], ["a": "b"], ["a": [1, 2, 3]], ["a": ["$ne": 2]], ["a": ["$in": [3, "a"]]], ["a": ["$nin": [2]]], ["a": ["$all": [1, 2]]],
        ["a": ["$all": [2]]], ["a": ["$exists": true]], ["a": ["$gt": 2]], ["a": ["$containedBy": [1, 2, 3]]], ["a": ["$regex": "^b"]],
        ["a": true], ["a": .null],
        ["missing": .null], ["missing": ["$exists": true]], ["missing": ["$ne": 1]], ["missing": ["$nin": [1]]], ["missing": 1],
        ["$or": [["s": "apple"], ["n": 10]]], ["$and": [["b": true], ["n": ["$gt": 1]]]], ["$nor": [["s": "apple"], ["b": false]]],
        ["s": ["$exists": true], "n": ["$gt": 0]], ["objectId": ["$exists": true]], ["createdAt": ["$exists": true]],
        ["o.x": 1], ["o.x": "1"], ["o.x": ["$gt": 1]], ["o.x": ["$ne": 1]], ["o.x": ["$in": [1, 7]]], ["o.x": ["$nin": [1]]], ["o.x": .null],
        ["o.x": ["$exists": false]], ["o.y": ["$gte": "t"]], ["o.y": ["$regex": "^u"]], ["o.z.w": true], ["o.z.w": ["$ne": true]],
        ["o.when": ["$gt": date(60)]], ["o.when": date(0)], ["o.who": other("x1")], ["o.nothing": ["$exists": true]], ["o.y": ["$in": ["t", .null]]],
        ["s.deeper": .null], ["s.deeper": 1],
        ["g": ["$nearSphere": point(0, 0), "$maxDistanceInRadians": 0.1]], ["g": ["$nearSphere": point(0, 0)]],
        ["g": ["$within": ["$box": [point(0, 0), point(6, 6)]]]], ["g": ["$geoWithin": ["$centerSphere": [[0, 0], 0.05]]]],
        ["g": ["$geoWithin": ["$polygon": [point(0, 0), point(0, 3), point(3, 3), point(3, 0)]]]], ["g": ["$exists": false]],
        ["area": ["$geoIntersects": ["$point": point(5, 5)]]], ["area": ["$geoIntersects": ["$point": point(20, 20)]]], ["area": ["$exists": true]],
    ]

    @Test("every case picks the same objects through SQL and through the in-memory matcher", arguments: Backend.all)
    func conformance(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            for object in Self.objects {
                var body = object
                body["ACL"] = ["*": ["read": true]]
                _ = try await p.createId("Conf", .object(body))
            }
            let stored = try await p.find("Conf", ["limit": "100"]).results.compactMap(\.objectValue)
            #expect(stored.count == Self.objects.count)
            let parser = QueryParser(now: .now)
            let matcher = QueryMatcher(schema: Self.schema)
            for whereValue in Self.cases {
                let viaSQL = try await p.find("Conf", where: whereValue, ["limit": "100"]).results.compactMap { $0["k"]?.stringValue }.sorted()
                let node = try parser.parse(whereValue, className: "Conf")
                var viaMatcher: [String] = []
                var undecided = false
                for object in stored {
                    switch matcher.matches(node, object) {
                    case true?: viaMatcher.append(object["k"]?.stringValue ?? "?")
                    case false?: break
                    case nil: undecided = true
                    }
                }
                #expect(!undecided, "the matcher decides \(JSONWriter.string(whereValue))")
                #expect(viaMatcher.sorted() == viaSQL, "\(JSONWriter.string(whereValue)) on \(backend)")
            }
        }
    }
}
