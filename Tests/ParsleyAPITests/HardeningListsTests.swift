import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Lists of any length the body limit allows are one bound parameter each: a statement's shape never grows with
/// them, so neither SQLite's variable limit nor PostgreSQL's 16-bit parameter count is reached (that count once
/// trapped the driver and took the whole process down). NUL characters are refused the same way on both backends.
@Suite("Hardening: long lists and NUL")
struct HardeningListsTests {
    /// `POST /classes/X` with `_method: GET`, as the JS SDK sends a query too long for a URL.
    func postedFind(_ p: ParseClient, _ className: String, _ query: [String: JSONValue], master: Bool = true) async throws -> Reply {
        var body = query
        body["_method"] = "GET"
        return try await p.request(.post, "/classes/\(className)", .object(body), master: master)
    }

    @Test("$in/$nin with 100,000 numbers and 250,000 strings answer on both backends (no key needed)", arguments: Backend.all)
    func longInLists(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.allowClientClassCreation = true }) { p in
            let a = try await p.createId("Item", ["n": 7, "s": "k-7", "tags": ["k-7", "x"]])
            let b = try await p.createId("Item", ["n": 100_001, "s": "outside", "tags": ["y"]])
            let numbers: [JSONValue] = (0..<100_000).map { .int(Int64($0)) }
            let strings: [JSONValue] = (0..<250_000).map { .string("k-\($0)") }

            var r = try await postedFind(p, "Item", ["where": ["n": ["$in": .array(numbers)]]], master: false)
            #expect(r.status == 200, "\(r.json)")
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [a])
            r = try await postedFind(p, "Item", ["where": ["s": ["$in": .array(strings)]]], master: false)
            #expect(r.status == 200, "\(r.json)")
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [a])
            r = try await postedFind(p, "Item", ["where": ["n": ["$nin": .array(numbers)]]], master: false)
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [b])
            // Array fields: some element listed, every element listed, every listed value present.
            r = try await postedFind(p, "Item", ["where": ["tags": ["$in": .array(strings)]]], master: false)
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [a])
            r = try await postedFind(p, "Item", ["where": ["tags": ["$containedBy": .array(strings + ["x"])]]], master: false)
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [a])
            r = try await postedFind(p, "Item", ["where": ["tags": ["$all": .array(strings)]]], master: false)
            #expect(r.status == 200, "\(r.json)")
            #expect(r.results.isEmpty)
            r = try await postedFind(p, "Item", ["where": ["tags": ["$all": ["x", "k-7", "x"]]]], master: false)
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [a])
            r = try await postedFind(p, "Item", ["where": ["tags": ["$nin": .array(strings)]]], master: false)
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [b])
            // A count, and the server is still there.
            r = try await postedFind(p, "Item", ["where": ["s": ["$in": .array(strings)]], "count": 1, "limit": 0])
            #expect(r["count"] == 1)
            #expect(try await p.request(.get, "/health").status == 200)
        }
    }

    @Test("pointer lists, relations and includes of thousands of objects", arguments: Backend.all)
    func longPointerLists(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let target = try await p.createId("Target", ["name": "t"])
            var pointers: [JSONValue] = (0..<40_000).map { ["__type": "Pointer", "className": "Target", "objectId": .string("missing\($0)")] }
            pointers.append(["__type": "Pointer", "className": "Target", "objectId": .string(target)])
            let owner = try await p.createId("Owner", ["one": pointers.last!, "many": .array(pointers)])
            // $in on a pointer column and on an array of pointers.
            var r = try await postedFind(p, "Owner", ["where": ["one": ["$in": .array(pointers)]]])
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [owner])
            r = try await postedFind(p, "Owner", ["where": ["many": ["$all": .array(pointers)]]])
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [owner])
            // Including an array of 40,001 pointers resolves the one that exists and drops the others.
            r = try await postedFind(p, "Owner", ["include": "many"])
            #expect(r.status == 200, "\(r.json)")
            let many = r.results.first?["many"]?.arrayValue ?? []
            #expect(many.count == 1)
            #expect(many.first?["name"] == "t")
            // A relation given 40,001 objects at once, then queried with all of them.
            r = try await p.update("Owner", owner, ["rel": ["__op": "AddRelation", "objects": .array(pointers)]])
            #expect(r.status == 200, "\(r.json)")
            r = try await postedFind(p, "Owner", ["where": ["rel": ["$in": .array(pointers)]]])
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [owner])
            r = try await postedFind(p, "Owner", ["where": ["rel": ["$all": .array(Array(pointers.suffix(2)))]]])
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [owner])
            r = try await postedFind(
                p, "Target",
                ["where": ["$relatedTo": ["object": ["__type": "Pointer", "className": "Owner", "objectId": .string(owner)], "key": "rel"]]])
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [target])
            r = try await p.update("Owner", owner, ["rel": ["__op": "RemoveRelation", "objects": .array(pointers)]])
            #expect(r.status == 200, "\(r.json)")
            r = try await postedFind(p, "Owner", ["where": ["rel": ["$in": .array(pointers)]]])
            #expect(r.results.isEmpty)
        }
    }

    @Test("AddUnique and Remove of 100,000 values on an array of 100,000 take linear time", arguments: Backend.all)
    func longArrayOperations(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let values: [JSONValue] = (0..<100_000).map { .string("v\($0)") }
            let id = try await p.createId("Bag", ["items": .array(values)])
            // Each value once more (no change), then the same count of new ones (doubles the array); before, each
            // was compared with every element: 10^10 comparisons holding the writer for minutes.
            let more: [JSONValue] = (50_000..<150_000).map { .string("v\($0)") }
            var r = try await p.update("Bag", id, ["items": ["__op": "AddUnique", "objects": .array(more)]])
            #expect(r.status == 200, "\(r.json)")
            #expect(r["items"]?.arrayValue?.count == 150_000)
            r = try await p.update("Bag", id, ["items": ["__op": "Remove", "objects": .array(values)]])
            #expect(r.status == 200, "\(r.json)")
            #expect(r["items"]?.arrayValue?.count == 50_000)
            // Numbers compare as Parse does: 1 and 1.0 are one value.
            r = try await p.update("Bag", id, ["n": ["__op": "AddUnique", "objects": [1, 1.0, 2, ["a": 1], ["a": 1.0]]]])
            #expect(r["n"] == [1, 2, ["a": 1]])
        }
    }

    @Test("what is still too big is a Parse error, never a crash", arguments: Backend.all)
    func tooComplex(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Doc", ["o": ["a": 1]])
            // 40,000 distinct objects compared with an Object field: one bind each, past the limit.
            let objects: [JSONValue] = (0..<40_000).map { ["a": .int(Int64($0) + 2)] }
            var r = try await postedFind(p, "Doc", ["where": ["o": ["$in": .array(objects)]]])
            #expect(r.status == 400)
            #expect(r.code == 102)
            // A flat $or of 1,500 branches nests logarithmically in SQL and answers.
            let branches: [JSONValue] = (0..<1_500).map { ["o.a": .int(Int64($0))] }
            r = try await postedFind(p, "Doc", ["where": ["$or": .array(branches)]])
            #expect(r.status == 200, "\(r.json)")
            #expect(r.results.count == 1)
            #expect(try await p.request(.get, "/health").status == 200)
        }
    }

    @Test("a NUL character anywhere in a request is refused with 400/107 on both backends", arguments: Backend.all)
    func nulCharacters(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("Doc", ["name": "a", "stats": ["n": 1]])
            let headers = p.headers(master: true)
            let bodies = [
                #"{"name":"a\u0000b"}"#,  // a string value
                #"{"na\u0000me":"x"}"#,  // a field name
                #"{"stats":{"__op":"Increment","amount":1},"stats.n\u0000":{"__op":"Increment","amount":1}}"#,  // a sub-key
                #"{"tags":{"__op":"Add","objects":["\u0000"]}}"#,
            ]
            for body in bodies {
                let create = try await p.raw(.post, "/parse/classes/Doc", body: body, headers: headers)
                #expect(create.status == 400, "\(body)")
                #expect(create.code == 107, "\(body): \(create.json)")
                let update = try await p.raw(.put, "/parse/classes/Doc/\(id)", body: body, headers: headers)
                #expect(update.status == 400, "\(body)")
                #expect(update.code == 107, "\(body): \(update.json)")
            }
            // In a where clause, in other parameters, in the path, in a batch and in /config.
            var r = try await p.find("Doc", where: ["name": "a\u{0}"])
            #expect(r.status == 400)
            #expect(r.code == 107)
            r = try await p.find("Doc", ["keys": "na\u{0}me"])
            #expect(r.code == 107)
            r = try await p.raw(.get, "/parse/classes/Doc/\(id)%00", headers: headers)
            #expect(r.status == 400)
            #expect(r.code == 107)
            r = try await p.raw(
                .post, "/parse/batch", body: #"{"requests":[{"method":"POST","path":"/parse/classes/Doc","body":{"name":"\u0000"}}]}"#,
                headers: headers)
            #expect(r.code == 107)
            r = try await p.raw(.put, "/parse/config", body: #"{"params":{"k":"\u0000"}}"#, headers: headers)
            #expect(r.code == 107)
            r = try await p.raw(.post, "/parse/login", body: #"{"username":"a\u0000","password":"b"}"#, headers: p.headers(master: false))
            #expect(r.code == 107)
            // Nothing was stored, and the object is unchanged.
            r = try await p.get("Doc", id)
            #expect(r["name"] == "a")
            #expect(r["stats"] == ["n": 1])
            #expect(try await p.find("Doc", ["count": "1", "limit": "0"])["count"] == 1)
        }
    }
}
