import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Values and calls shared by the query tests.
enum QueryFixture {
    static func date(_ iso: String) -> JSONValue { ["__type": "Date", "iso": .string(iso)] }
    static func pointer(_ className: String, _ id: String) -> JSONValue {
        ["__type": "Pointer", "className": .string(className), "objectId": .string(id)]
    }
    static func geo(_ latitude: Double, _ longitude: Double) -> JSONValue {
        ["__type": "GeoPoint", "latitude": .double(latitude), "longitude": .double(longitude)]
    }
    /// An ISO date `days` days from now.
    static func daysFromNow(_ days: Double) -> String {
        ParseDate(milliseconds: ParseDate.now.milliseconds + Int64(days * 86_400_000)).iso
    }
}

extension ParseClient {
    /// objectIds of a find in the order the server returned them.
    func orderedIds(_ className: String, where w: JSONValue? = nil, _ params: [String: String] = [:]) async throws -> [String] {
        let r = try await find(className, where: w, params)
        guard r.status == 200 else { throw Failure("find failed: \(r.status) \(r.json)") }
        return r.results.compactMap { $0["objectId"]?.stringValue }
    }

    /// The Parse error code of a find (nil on success).
    func findCode(_ className: String, where w: JSONValue? = nil, _ params: [String: String] = [:], master: Bool = true) async throws -> Int? {
        let r = try await find(className, where: w, params, master: master)
        if r.status == 200 { return nil }
        return r.code ?? -r.status
    }
}

@Suite("Queries")
struct QueriesTests {
    typealias F = QueryFixture

    @Test("equality on String, Number, Boolean, Date, Pointer and $eq", arguments: Backend.all)
    func equality(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let p1 = try await p.createId("Player", ["name": "one"])
            let p2 = try await p.createId("Player", ["name": "two"])
            let a = try await p.createId(
                "Item",
                [
                    "name": "alpha", "score": 10, "active": true, "when": F.date("2022-01-01T00:00:00.000Z"), "owner": F.pointer("Player", p1),
                ])
            let b = try await p.createId(
                "Item",
                [
                    "name": "beta", "score": 20.5, "active": false, "when": F.date("2023-06-01T12:00:00.500Z"), "owner": F.pointer("Player", p2),
                ])
            let c = try await p.createId("Item", ["name": "gamma", "score": 10.0])
            let byString = try await p.ids("Item", where: ["name": "alpha"])
            #expect(byString == [a])
            let byInt = try await p.ids("Item", where: ["score": 10])
            #expect(byInt == [a, c].sorted())
            let byDouble = try await p.ids("Item", where: ["score": 20.5])
            #expect(byDouble == [b])
            let byTrue = try await p.ids("Item", where: ["active": true])
            #expect(byTrue == [a])
            let byFalse = try await p.ids("Item", where: ["active": false])
            #expect(byFalse == [b])
            let byDate = try await p.ids("Item", where: ["when": F.date("2023-06-01T12:00:00.500Z")])
            #expect(byDate == [b])
            let byLenientDate = try await p.ids("Item", where: ["when": F.date("2022-01-01T00:00:00Z")])
            #expect(byLenientDate == [a])
            let byPointer = try await p.ids("Item", where: ["owner": F.pointer("Player", p1)])
            #expect(byPointer == [a])
            let wrongClass = try await p.ids("Item", where: ["owner": F.pointer("Team", p1)])
            #expect(wrongClass == [])
            let eqString = try await p.ids("Item", where: ["name": ["$eq": "beta"]])
            #expect(eqString == [b])
            let eqNumber = try await p.ids("Item", where: ["score": ["$eq": 10]])
            #expect(eqNumber == [a, c].sorted())
            let eqPointer = try await p.ids("Item", where: ["owner": ["$eq": F.pointer("Player", p2)]])
            #expect(eqPointer == [b])
            let byId = try await p.ids("Item", where: ["objectId": .string(c)])
            #expect(byId == [c])
            let none = try await p.ids("Item", where: ["name": "delta"])
            #expect(none == [])
            // A field the class does not have matches nothing by equality.
            let unknown = try await p.ids("Item", where: ["nope": 1])
            #expect(unknown == [])
            let unknownMissing = try await p.ids("Item", where: ["nope": ["$exists": false]])
            #expect(unknownMissing == [a, b, c].sorted())
        }
    }

    @Test("$ne matches different values and objects missing the field", arguments: Backend.all)
    func notEqual(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let p1 = try await p.createId("Player", ["name": "one"])
            let a = try await p.createId("Item", ["name": "alpha", "score": 1, "active": true, "owner": F.pointer("Player", p1)])
            let b = try await p.createId("Item", ["name": "beta", "score": 2, "active": false])
            let c = try await p.createId("Item", ["other": 1])
            let s = try await p.ids("Item", where: ["name": ["$ne": "alpha"]])
            #expect(s == [b, c].sorted())
            let n = try await p.ids("Item", where: ["score": ["$ne": 2]])
            #expect(n == [a, c].sorted())
            let bool = try await p.ids("Item", where: ["active": ["$ne": true]])
            #expect(bool == [b, c].sorted())
            let ptr = try await p.ids("Item", where: ["owner": ["$ne": F.pointer("Player", p1)]])
            #expect(ptr == [b, c].sorted())
            let notNull = try await p.ids("Item", where: ["name": ["$ne": nil]])
            #expect(notNull == [a, b].sorted())
        }
    }

    @Test("$lt/$lte/$gt/$gte on numbers, strings, dates, objectId and createdAt", arguments: Backend.all)
    func ranges(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            var ids: [String] = []
            var created: [String] = []
            let rows: [(JSONValue, JSONValue, String)] = [
                (1, "apple", "2021-01-01T00:00:00.000Z"), (2.5, "banana", "2022-01-01T00:00:00.000Z"),
                (3, "cherry", "2023-01-01T00:00:00.000Z"), (-4, "date", "2024-01-01T00:00:00.000Z"),
            ]
            for (score, name, when) in rows {
                let r = try await p.create("Fruit", ["score": score, "name": name, "when": F.date(when)])
                ids.append(try #require(r["objectId"]?.stringValue))
                created.append(try #require(r["createdAt"]?.stringValue))
                try await Task.sleep(for: .milliseconds(5))
            }
            let none = try await p.createId("Fruit", ["other": true])
            let gt = try await p.ids("Fruit", where: ["score": ["$gt": 2]])
            #expect(gt == [ids[1], ids[2]].sorted())
            let between = try await p.ids("Fruit", where: ["score": ["$gte": 1, "$lt": 3]])
            #expect(between == [ids[0], ids[1]].sorted())
            let lte = try await p.ids("Fruit", where: ["score": ["$lte": 1]])
            #expect(lte == [ids[0], ids[3]].sorted())
            let strGt = try await p.ids("Fruit", where: ["name": ["$gt": "b"]])
            #expect(strGt == [ids[1], ids[2], ids[3]].sorted())
            let strLt = try await p.ids("Fruit", where: ["name": ["$lt": "banana"]])
            #expect(strLt == [ids[0]])
            let strLte = try await p.ids("Fruit", where: ["name": ["$lte": "banana"]])
            #expect(strLte == [ids[0], ids[1]].sorted())
            let dateGt = try await p.ids("Fruit", where: ["when": ["$gt": F.date("2022-01-01T00:00:00.000Z")]])
            #expect(dateGt == [ids[2], ids[3]].sorted())
            let dateRange = try await p.ids(
                "Fruit", where: ["when": ["$gte": F.date("2022-01-01T00:00:00.000Z"), "$lte": F.date("2023-06-01T00:00:00.000Z")]])
            #expect(dateRange == [ids[1], ids[2]].sorted())
            // objectId ranges are lexicographic (Parse.Query.each pages this way).
            let all = (ids + [none]).sorted()
            let idGt = try await p.ids("Fruit", where: ["objectId": ["$gt": .string(all[1])]])
            #expect(idGt == Array(all[2...]))
            let idLte = try await p.ids("Fruit", where: ["objectId": ["$lte": .string(all[2])]])
            #expect(idLte == Array(all[...2]))
            let paged = try await p.orderedIds("Fruit", where: ["objectId": ["$gt": .string(all[0])]], ["order": "objectId", "limit": "2"])
            #expect(paged == [all[1], all[2]])
            let createdGt = try await p.ids("Fruit", where: ["createdAt": ["$gt": F.date(created[1])]])
            #expect(createdGt == [ids[2], ids[3], none].sorted())
            let createdLte = try await p.ids("Fruit", where: ["createdAt": ["$lte": F.date(created[1])]])
            #expect(createdLte == [ids[0], ids[1]].sorted())
            let createdEq = try await p.ids("Fruit", where: ["createdAt": F.date(created[2])])
            #expect(createdEq == [ids[2]])
            // Comparisons only match values of the operand's type (Mongo type bracketing).
            let numberVsString = try await p.ids("Fruit", where: ["score": ["$lt": "z"]])
            #expect(numberVsString == [])
            let stringVsNumber = try await p.ids("Fruit", where: ["name": ["$gt": 0]])
            #expect(stringVsNumber == [])
            let dateVsNumber = try await p.ids("Fruit", where: ["when": ["$gt": 0]])
            #expect(dateVsNumber == [])
        }
    }

    @Test("$in, $nin, $in:[] and $exists", arguments: Backend.all)
    func membership(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let p1 = try await p.createId("Player", ["name": "one"])
            let p2 = try await p.createId("Player", ["name": "two"])
            let a = try await p.createId("Item", ["score": 1, "name": "a", "owner": F.pointer("Player", p1), "tags": ["x", "y"]])
            let b = try await p.createId("Item", ["score": 3, "name": "b", "owner": F.pointer("Player", p2), "tags": ["z"]])
            let c = try await p.createId("Item", ["score": 5, "name": "c"])
            let d = try await p.createId("Item", ["other": 1])
            let inNumbers = try await p.ids("Item", where: ["score": ["$in": [1, 5, 7]]])
            #expect(inNumbers == [a, c].sorted())
            let inStrings = try await p.ids("Item", where: ["name": ["$in": ["b", "c", "q"]]])
            #expect(inStrings == [b, c].sorted())
            let inPointers = try await p.ids("Item", where: ["owner": ["$in": [F.pointer("Player", p2), F.pointer("Team", p1)]]])
            #expect(inPointers == [b])
            let nested = try await p.ids("Item", where: ["score": ["$in": [[1], [3]]]])
            #expect(nested == [a, b].sorted())
            let ninNumbers = try await p.ids("Item", where: ["score": ["$nin": [1, 5]]])
            #expect(ninNumbers == [b, d].sorted())
            let ninPointers = try await p.ids("Item", where: ["owner": ["$nin": [F.pointer("Player", p1)]]])
            #expect(ninPointers == [b, c, d].sorted())
            let inEmpty = try await p.ids("Item", where: ["score": ["$in": []]])
            #expect(inEmpty == [])
            let ninEmpty = try await p.ids("Item", where: ["score": ["$nin": []]])
            #expect(ninEmpty == [a, b, c, d].sorted())
            let inArray = try await p.ids("Item", where: ["tags": ["$in": ["y", "z"]]])
            #expect(inArray == [a, b].sorted())
            let inArrayEmpty = try await p.ids("Item", where: ["tags": ["$in": []]])
            #expect(inArrayEmpty == [])
            let ninArray = try await p.ids("Item", where: ["tags": ["$nin": ["x"]]])
            #expect(ninArray == [b, c, d].sorted())
            let exists = try await p.ids("Item", where: ["score": ["$exists": true]])
            #expect(exists == [a, b, c].sorted())
            let missing = try await p.ids("Item", where: ["score": ["$exists": false]])
            #expect(missing == [d])
            let pointerExists = try await p.ids("Item", where: ["owner": ["$exists": true]])
            #expect(pointerExists == [a, b].sorted())
            let badIn = try await p.findCode("Item", where: ["score": ["$in": 1]])
            #expect(badIn == 107)
            let badExists = try await p.findCode("Item", where: ["score": ["$exists": "yes"]])
            #expect(badExists == 107)
        }
    }

    @Test("$all, $all with $regex elements and $containedBy on arrays", arguments: Backend.all)
    func arrayOperators(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let a = try await p.createId("Bag", ["tags": ["a", "b", "c"]])
            let b = try await p.createId("Bag", ["tags": ["a", "b"]])
            let c = try await p.createId("Bag", ["tags": ["a"]])
            let d = try await p.createId("Bag", ["tags": []])
            let e = try await p.createId("Bag", ["other": 1])
            let f = try await p.createId("Bag", ["tags": ["pre1", "pre2", "xylophone"]])
            let g = try await p.createId("Bag", ["tags": ["prefix", "y"]])
            let all = try await p.ids("Bag", where: ["tags": ["$all": ["a", "b"]]])
            #expect(all == [a, b].sorted())
            let allOne = try await p.ids("Bag", where: ["tags": ["$all": ["c"]]])
            #expect(allOne == [a])
            let allRegex = try await p.ids("Bag", where: ["tags": ["$all": [["$regex": "^pre"]]]])
            #expect(allRegex == [f, g].sorted())
            let allTwoRegex = try await p.ids("Bag", where: ["tags": ["$all": [["$regex": "^pre"], ["$regex": "^xy"]]]])
            #expect(allTwoRegex == [f])
            // Parse SDKs send containsAllStartingWith as quoted literals.
            let allQuoted = try await p.ids("Bag", where: ["tags": ["$all": [["$regex": "^\\Qprefix\\E"]]]])
            #expect(allQuoted == [g])
            let mixed = try await p.findCode("Bag", where: ["tags": ["$all": [["$regex": "^pre"], "a"]]])
            #expect(mixed == 107)
            let containedBy = try await p.ids("Bag", where: ["tags": ["$containedBy": ["a", "b"]]])
            #expect(containedBy == [b, c, d, e].sorted())
            let badContainedBy = try await p.findCode("Bag", where: ["tags": ["$containedBy": "a"]])
            #expect(badContainedBy == 107)
            let badAll = try await p.findCode("Bag", where: ["tags": ["$all": "a"]])
            #expect(badAll == 107)
        }
    }

    @Test("array fields: element equality, exact array equality, pointers inside arrays", arguments: Backend.all)
    func arrayEquality(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let u1 = try await p.createId("Player", ["name": "one"])
            let u2 = try await p.createId("Player", ["name": "two"])
            let a = try await p.createId("Bag", ["tags": ["a", "b"], "members": [F.pointer("Player", u1), F.pointer("Player", u2)]])
            let b = try await p.createId("Bag", ["tags": ["b", "a"], "members": [F.pointer("Player", u2)]])
            let c = try await p.createId("Bag", ["tags": ["a", "b", "c"], "members": []])
            let d = try await p.createId("Bag", ["tags": [1, 2]])
            let element = try await p.ids("Bag", where: ["tags": "a"])
            #expect(element == [a, b, c].sorted())
            let number = try await p.ids("Bag", where: ["tags": 2])
            #expect(number == [d])
            let exact = try await p.ids("Bag", where: ["tags": ["a", "b"]])
            #expect(exact == [a])
            let exactOther = try await p.ids("Bag", where: ["tags": ["b", "a"]])
            #expect(exactOther == [b])
            let pointer = try await p.ids("Bag", where: ["members": F.pointer("Player", u1)])
            #expect(pointer == [a])
            let pointer2 = try await p.ids("Bag", where: ["members": F.pointer("Player", u2)])
            #expect(pointer2 == [a, b].sorted())
            let pointerWrongClass = try await p.ids("Bag", where: ["members": F.pointer("Team", u2)])
            #expect(pointerWrongClass == [])
            let allPointers = try await p.ids("Bag", where: ["members": ["$all": [F.pointer("Player", u1), F.pointer("Player", u2)]]])
            #expect(allPointers == [a])
            let neElement = try await p.ids("Bag", where: ["tags": ["$ne": "c"]])
            #expect(neElement == [a, b, d].sorted())
        }
    }

    @Test("$regex with $options, \\Q…\\E literals, bad options and a catastrophic pattern", arguments: Backend.all)
    func regex(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let a = try await p.createId("Person", ["name": "Big Daddy"])
            let b = try await p.createId("Person", ["name": "big daddy's cousin"])
            let c = try await p.createId("Person", ["name": "Little\nBig Daddy"])
            let d = try await p.createId("Person", ["name": "a.b*c (x)"])
            let e = try await p.createId("Person", ["name": "axbbc (x)"])
            _ = try await p.createId("Person", ["other": 1])
            let plain = try await p.ids("Person", where: ["name": ["$regex": "^Big"]])
            #expect(plain == [a])
            let caseless = try await p.ids("Person", where: ["name": ["$regex": "^big daddy", "$options": "i"]])
            #expect(caseless == [a, b].sorted())
            let multiline = try await p.ids("Person", where: ["name": ["$regex": "^Big", "$options": "m"]])
            #expect(multiline == [a, c].sorted())
            let contains = try await p.ids("Person", where: ["name": ["$regex": "Daddy"]])
            #expect(contains == [a, c].sorted())
            let literal = try await p.ids("Person", where: ["name": ["$regex": "^\\Qa.b*c (\\E"]])
            #expect(literal == [d])
            // Unquoted, "." and "*" are operators: "axbbc" matches, "a.b*c" does not.
            let unquoted = try await p.ids("Person", where: ["name": ["$regex": "^a.b*c"]])
            #expect(unquoted == [e])
            let endsWith = try await p.ids("Person", where: ["name": ["$regex": "\\Q(x)\\E$"]])
            #expect(endsWith == [d, e].sorted())
            let badOptions = try await p.find("Person", where: ["name": ["$regex": "a", "$options": "q"]])
            #expect(badOptions.status == 400)
            #expect(badOptions.code == 102)
            let badPattern = try await p.find("Person", where: ["name": ["$regex": "(unclosed"]])
            #expect(badPattern.status == 400)
            #expect(badPattern.code == 102)

            _ = try await p.createId("Person", ["name": .string(String(repeating: "a", count: 40) + "b")])
            let clock = ContinuousClock()
            let start = clock.now
            let slow = try await p.find("Person", where: ["name": ["$regex": "(a+)+$"]])
            let elapsed = clock.now - start
            #expect(elapsed < .seconds(5))
            if backend == .postgres {
                // PostgreSQL's regular-expression engine does not backtrack exponentially: the pattern just runs.
                #expect(slow.status == 200)
            } else {
                #expect(slow.status == 400)
                #expect(slow.code == 102)
            }
            // The server still answers normally afterwards.
            let after = try await p.ids("Person", where: ["name": ["$regex": "^Big"]])
            #expect(after == [a])
        }
    }

    @Test("$text with $search.$term, order=$score, and bad $text", arguments: Backend.all)
    func textSearch(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let a = try await p.createId("Doc", ["body": "The quick brown fox"])
            let b = try await p.createId("Doc", ["body": "fox and fox: a Fox story"])
            _ = try await p.createId("Doc", ["body": "lazy dog"])
            _ = try await p.createId("Doc", ["other": 1])
            let text: JSONValue = ["body": ["$text": ["$search": ["$term": "fox"]]]]
            let found = try await p.ids("Doc", where: text)
            #expect(found == [a, b].sorted())
            // `$score` sorts by relevance, best first, with or without "-".
            let ranked = try await p.orderedIds("Doc", where: text, ["order": "$score"])
            #expect(ranked == [b, a])
            let rankedDesc = try await p.orderedIds("Doc", where: text, ["order": "-$score"])
            #expect(rankedDesc == [b, a])
            // `keys=$score` returns the relevance as a number.
            let scored = try await p.find("Doc", where: text, ["order": "$score", "keys": "body,$score"])
            let scores = scored.results.compactMap { $0["score"]?.numberValue }
            #expect(scores.count == 2)
            #expect(scores == scores.sorted(by: >))
            #expect((scores.first ?? 0) > (scores.last ?? 0))
            let twoWords = try await p.ids(
                "Doc", where: ["body": ["$text": ["$search": ["$term": "quick fox", "$language": "english", "$caseSensitive": false]]]])
            #expect(twoWords == [a])
            let noTerm = try await p.findCode("Doc", where: ["body": ["$text": ["$search": ["$language": "english"]]]])
            #expect(noTerm == 107)
            let badTerm = try await p.findCode("Doc", where: ["body": ["$text": ["$search": ["$term": 5]]]])
            #expect(badTerm == 107)
            let badSearch = try await p.findCode("Doc", where: ["body": ["$text": ["$search": "fox"]]])
            #expect(badSearch == 107)
            let badFlag = try await p.findCode("Doc", where: ["body": ["$text": ["$search": ["$term": "fox", "$caseSensitive": "no"]]]])
            #expect(badFlag == 107)
        }
    }

    @Test("$select and $dontSelect", arguments: Backend.all)
    func selectQueries(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Team", ["city": "Oslo", "winPct": 0.7])
            _ = try await p.createId("Team", ["city": "Rome", "winPct": 0.3, "info": ["city": "Rome", "big": true]])
            _ = try await p.createId("Team", ["city": "Lima", "winPct": 0.9])
            let a = try await p.createId("Fan", ["hometown": "Oslo"])
            let b = try await p.createId("Fan", ["hometown": "Rome"])
            let c = try await p.createId("Fan", ["hometown": "Lima"])
            let d = try await p.createId("Fan", ["hometown": "Paris"])
            let e = try await p.createId("Fan", ["other": 1])
            let query: JSONValue = ["query": ["className": "Team", "where": ["winPct": ["$gt": 0.5]]], "key": "city"]
            let selected = try await p.ids("Fan", where: ["hometown": ["$select": query]])
            #expect(selected == [a, c].sorted())
            let notSelected = try await p.ids("Fan", where: ["hometown": ["$dontSelect": query]])
            #expect(notSelected == [b, d, e].sorted())
            let nestedKey = try await p.ids(
                "Fan", where: ["hometown": ["$select": ["query": ["className": "Team", "where": ["info.big": true]], "key": "info.city"]]])
            #expect(nestedKey == [b])
            // On an Array field, some element is one of the selected values.
            let f = try await p.createId("Fan", ["visited": ["Paris", "Lima"]])
            let g = try await p.createId("Fan", ["visited": ["Rome"]])
            let arraySelected = try await p.ids("Fan", where: ["visited": ["$select": query]])
            #expect(arraySelected == [f])
            let arrayNotSelected = try await p.ids("Fan", where: ["visited": ["$dontSelect": query]])
            #expect(arrayNotSelected == [a, b, c, d, e, g].sorted())
            let noWhere = try await p.ids("Fan", where: ["hometown": ["$select": ["query": ["className": "Team"], "key": "city"]]])
            #expect(noWhere == [a, b, c].sorted())
            let improper = try await p.find("Fan", where: ["hometown": ["$select": ["query": ["className": "Team"]]]])
            #expect(improper.code == 102)
            let extraKey = try await p.findCode("Fan", where: ["hometown": ["$dontSelect": ["query": ["className": "Team"], "key": "city", "x": 1]]])
            #expect(extraKey == 102)
        }
    }

    @Test("$inQuery and $notInQuery on a pointer field", arguments: Backend.all)
    func inQuery(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let withImage = try await p.createId("Post", ["image": "x.png", "title": "a"])
            let withoutImage = try await p.createId("Post", ["title": "b"])
            let c1 = try await p.createId("Comment", ["post": F.pointer("Post", withImage)])
            let c2 = try await p.createId("Comment", ["post": F.pointer("Post", withoutImage)])
            let c3 = try await p.createId("Comment", ["text": "orphan"])
            let sub: JSONValue = ["where": ["image": ["$exists": true]], "className": "Post"]
            let inQ = try await p.ids("Comment", where: ["post": ["$inQuery": sub]])
            #expect(inQ == [c1])
            let notInQ = try await p.ids("Comment", where: ["post": ["$notInQuery": sub]])
            #expect(notInQ == [c2, c3].sorted())
            let byTitle = try await p.ids("Comment", where: ["post": ["$inQuery": ["where": ["title": "b"], "className": "Post"]]])
            #expect(byTitle == [c2])
            let improper = try await p.findCode("Comment", where: ["post": ["$inQuery": ["where": ["title": "b"]]]])
            #expect(improper == 102)
            let noWhere = try await p.findCode("Comment", where: ["post": ["$inQuery": ["className": "Post"]]])
            #expect(noWhere == 102)
            // Errors inside the sub-query's where are reported as themselves.
            let innerError = try await p.findCode(
                "Comment", where: ["post": ["$notInQuery": ["where": ["title": ["$foo": 1]], "className": "Post"]]])
            #expect(innerError == 107)
            let onArray = try await p.createId("Comment", ["posts": [F.pointer("Post", withoutImage), F.pointer("Post", withImage)]])
            let arrayIn = try await p.ids("Comment", where: ["posts": ["$inQuery": sub]])
            #expect(arrayIn == [onArray])
        }
    }

    @Test("$relatedTo and querying a relation field by pointer", arguments: Backend.all)
    func relations(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let u1 = try await p.createId("Player", ["name": "one"])
            let u2 = try await p.createId("Player", ["name": "two"])
            let u3 = try await p.createId("Player", ["name": "three"])
            let post1 = try await p.createId(
                "Post", ["likes": ["__op": "AddRelation", "objects": [F.pointer("Player", u1), F.pointer("Player", u2)]]])
            let post2 = try await p.createId("Post", ["title": "x"])
            let added = try await p.update("Post", post2, ["likes": ["__op": "AddRelation", "objects": [F.pointer("Player", u2)]]])
            #expect(added.status == 200)
            let post3 = try await p.createId("Post", ["title": "y"])
            let related1 = try await p.ids("Player", where: ["$relatedTo": ["object": F.pointer("Post", post1), "key": "likes"]])
            #expect(related1 == [u1, u2].sorted())
            let related2 = try await p.ids("Player", where: ["$relatedTo": ["object": F.pointer("Post", post2), "key": "likes"], "name": "two"])
            #expect(related2 == [u2])
            let related3 = try await p.ids("Player", where: ["$relatedTo": ["object": F.pointer("Post", post3), "key": "likes"]])
            #expect(related3 == [])
            let likedBy1 = try await p.ids("Post", where: ["likes": F.pointer("Player", u1)])
            #expect(likedBy1 == [post1])
            let likedBy2 = try await p.ids("Post", where: ["likes": F.pointer("Player", u2)])
            #expect(likedBy2 == [post1, post2].sorted())
            let likedBy3 = try await p.ids("Post", where: ["likes": F.pointer("Player", u3)])
            #expect(likedBy3 == [])
            let likedByAny = try await p.ids("Post", where: ["likes": ["$in": [F.pointer("Player", u1), F.pointer("Player", u3)]]])
            #expect(likedByAny == [post1])
            let notLikedBy1 = try await p.ids("Post", where: ["likes": ["$nin": [F.pointer("Player", u1)]]])
            #expect(notLikedBy1 == [post2, post3].sorted())
            let removed = try await p.update("Post", post1, ["likes": ["__op": "RemoveRelation", "objects": [F.pointer("Player", u1)]]])
            #expect(removed.status == 200)
            let afterRemove = try await p.ids("Player", where: ["$relatedTo": ["object": F.pointer("Post", post1), "key": "likes"]])
            #expect(afterRemove == [u2])
            let bad = try await p.findCode("Player", where: ["$relatedTo": ["key": "likes"]])
            #expect(bad == 102)
        }
    }

    @Test("$or, $and, $nor and nested combinations", arguments: Backend.all)
    func compound(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let a = try await p.createId("Game", ["wins": 200, "name": "a"])
            let b = try await p.createId("Game", ["wins": 2, "name": "b"])
            let c = try await p.createId("Game", ["wins": 50, "name": "c"])
            let d = try await p.createId("Game", ["wins": 100, "name": "d"])
            let or = try await p.ids("Game", where: ["$or": [["wins": ["$gt": 150]], ["wins": ["$lt": 5]]]])
            #expect(or == [a, b].sorted())
            let and = try await p.ids("Game", where: ["$and": [["wins": ["$gt": 10]], ["wins": ["$lt": 150]]]])
            #expect(and == [c, d].sorted())
            let nor = try await p.ids("Game", where: ["$nor": [["wins": ["$gt": 150]], ["name": "b"]]])
            #expect(nor == [c, d].sorted())
            let orWithField = try await p.ids("Game", where: ["$or": [["name": "a"], ["name": "c"]], "wins": ["$lt": 100]])
            #expect(orWithField == [c])
            let nested = try await p.ids(
                "Game",
                where: [
                    "$or": [
                        ["$and": [["wins": ["$gte": 50]], ["name": ["$ne": "a"]]]],
                        ["$nor": [["wins": ["$gte": 5]]]],
                    ]
                ])
            #expect(nested == [b, c, d].sorted())
            let orOfOne = try await p.ids("Game", where: ["$or": [["name": "d"]]])
            #expect(orOfOne == [d])
            let badOr = try await p.find("Game", where: ["$or": ["name": "a"]])
            #expect(badOr.status == 400)
            #expect(badOr.code == 102)
            let badAnd = try await p.findCode("Game", where: ["$and": "x"])
            #expect(badAnd == 102)
            let emptyNor = try await p.findCode("Game", where: ["$nor": []])
            #expect(emptyNor == 102)
        }
    }

    @Test("dot notation into Object fields", arguments: Backend.all)
    func dotNotation(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let a = try await p.createId("Team", ["stats": ["wins": 5, "group": "A", "nested": ["level": 2]]])
            let b = try await p.createId("Team", ["stats": ["wins": 2, "group": "B"]])
            let c = try await p.createId("Team", ["stats": ["wins": 4, "group": "A"]])
            let d = try await p.createId("Team", ["name": "no stats"])
            let gt = try await p.ids("Team", where: ["stats.wins": ["$gt": 3]])
            #expect(gt == [a, c].sorted())
            let eq = try await p.ids("Team", where: ["stats.group": "A"])
            #expect(eq == [a, c].sorted())
            let eqNumber = try await p.ids("Team", where: ["stats.wins": 2])
            #expect(eqNumber == [b])
            let deep = try await p.ids("Team", where: ["stats.nested.level": 2])
            #expect(deep == [a])
            let ne = try await p.ids("Team", where: ["stats.group": ["$ne": "A"]])
            #expect(ne == [b, d].sorted())
            let inList = try await p.ids("Team", where: ["stats.wins": ["$in": [2, 4]]])
            #expect(inList == [b, c].sorted())
            let exists = try await p.ids("Team", where: ["stats.nested": ["$exists": true]])
            #expect(exists == [a])
            let regex = try await p.ids("Team", where: ["stats.group": ["$regex": "^b", "$options": "i"]])
            #expect(regex == [b])
            let ordered = try await p.orderedIds("Team", where: ["stats.wins": ["$exists": true]], ["order": "-stats.wins"])
            #expect(ordered == [a, c, b])
            // A whole Object value matches by equality (key order does not matter).
            let whole = try await p.ids("Team", where: ["stats": ["group": "B", "wins": 2]])
            #expect(whole == [b])
        }
    }

    @Test("$relativeTime inside $lt/$gt on a Date field", arguments: Backend.all)
    func relativeTime(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let past = try await p.createId("Event", ["at": F.date(F.daysFromNow(-3))])
            let soon = try await p.createId("Event", ["at": F.date(F.daysFromNow(3))])
            let later = try await p.createId("Event", ["at": F.date(F.daysFromNow(10))])
            let beforeTomorrow = try await p.ids("Event", where: ["at": ["$lt": ["$relativeTime": "in 1 day"]]])
            #expect(beforeTomorrow == [past])
            let window = try await p.ids("Event", where: ["at": ["$gt": ["$relativeTime": "2 days ago"], "$lte": ["$relativeTime": "in 1 week"]]])
            #expect(window == [soon])
            let afterNow = try await p.ids("Event", where: ["at": ["$gte": ["$relativeTime": "now"]]])
            #expect(afterNow == [soon, later].sorted())
            let combined = try await p.ids("Event", where: ["at": ["$gt": ["$relativeTime": "in 1 week 1 day"]]])
            #expect(combined == [later])
            let created = try await p.ids("Event", where: ["createdAt": ["$gt": ["$relativeTime": "1 hr ago"]]])
            #expect(created == [past, soon, later].sorted())
            let bad = try await p.findCode("Event", where: ["at": ["$lt": ["$relativeTime": "tomorrow"]]])
            #expect(bad == 107)
            let notInEquality = try await p.findCode("Event", where: ["at": ["$eq": ["$relativeTime": "now"]]])
            #expect(notInEquality == 107)
            _ = try await p.createId("Event", ["label": "x"])
            let notADate = try await p.findCode("Event", where: ["label": ["$lt": ["$relativeTime": "in 1 day"]]])
            #expect(notADate == 107)
        }
    }
}
