import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Find parameters (`order`, `limit`, `skip`, `keys`, `excludeKeys`, `include`, `count`), query errors and the
/// JS SDK transport.
extension QueriesTests {
    @Test("order by several keys, descending, as a comma list and as a JSON array", arguments: Backend.all)
    func order(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let a = try await p.createId("Score", ["score": 10, "name": "b"])
            let b = try await p.createId("Score", ["score": 30, "name": "a"])
            let c = try await p.createId("Score", ["score": 10, "name": "a"])
            let d = try await p.createId("Score", ["score": 20, "name": "c"])
            let asc = try await p.orderedIds("Score", ["order": "score,name"])
            #expect(asc == [c, a, d, b])
            let desc = try await p.orderedIds("Score", ["order": "-score,name"])
            #expect(desc == [b, d, c, a])
            let spaced = try await p.orderedIds("Score", ["order": "-score, -name"])
            #expect(spaced == [b, d, a, c])
            let array = try await p.orderedIds("Score", ["order": #"["-score","name"]"#])
            #expect(array == [b, d, c, a])
            let byName = try await p.orderedIds("Score", ["order": "name,-score"])
            #expect(byName == [b, c, a, d])
            let byCreated = try await p.orderedIds("Score", ["order": "-createdAt"])
            #expect(byCreated.count == 4)
            let byObjectId = try await p.orderedIds("Score", ["order": "objectId"])
            #expect(byObjectId == [a, b, c, d].sorted())
            // A key that is not in the schema is dropped from the sort.
            let unknown = try await p.orderedIds("Score", ["order": "nope,-score,name"])
            #expect(unknown == [b, d, c, a])
        }
    }

    @Test("limit defaults to 100; limit and skip page the results", arguments: Backend.all)
    func limitAndSkip(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let requests: [JSONValue] = (0..<120).map { i in
                ["method": "POST", "path": "/parse/classes/Many", "body": ["n": .int(Int64(i))]]
            }
            let batch = try await p.request(.post, "/batch", ["requests": .array(requests)])
            #expect(batch.status == 200)
            #expect(batch.json.arrayValue?.count == 120)
            let all = try await p.find("Many")
            #expect(all.results.count == 100)
            let big = try await p.find("Many", ["limit": "1000"])
            #expect(big.results.count == 120)
            let page = try await p.find("Many", ["order": "n", "limit": "5", "skip": "10"])
            #expect(page.results.map { $0["n"] } == [10, 11, 12, 13, 14])
            let tail = try await p.find("Many", ["order": "n", "skip": "115"])
            #expect(tail.results.map { $0["n"] } == [115, 116, 117, 118, 119])
            let beyond = try await p.find("Many", ["skip": "500"])
            #expect(beyond.status == 200)
            #expect(beyond.results.isEmpty)
        }
    }

    @Test("maxLimit clamps larger limits", arguments: Backend.all)
    func maxLimit(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.maxLimit = 3 }) { p in
            for i in 0..<5 { _ = try await p.createId("Thing", ["n": .int(Int64(i))]) }
            let clamped = try await p.find("Thing", ["limit": "10"])
            #expect(clamped.results.count == 3)
            let byDefault = try await p.find("Thing")
            #expect(byDefault.results.count == 3)
            let counted = try await p.find("Thing", ["count": "1", "limit": "10"])
            #expect(counted["count"] == 5)
        }
    }

    @Test("redirectClassNameForKey runs a relation query against the target class", arguments: Backend.all)
    func redirectClassNameForKey(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let u1 = try await p.createId("Player", ["name": "one"])
            let u2 = try await p.createId("Player", ["name": "two"])
            _ = try await p.createId("Player", ["name": "three"])
            let post = try await p.createId(
                "Post", ["likes": ["__op": "AddRelation", "objects": [F.pointer("Player", u1), F.pointer("Player", u2)]]])
            let r = try await p.find(
                "Post", where: ["$relatedTo": ["object": F.pointer("Post", post), "key": "likes"]],
                ["redirectClassNameForKey": "likes", "order": "name"])
            #expect(r.status == 200)
            #expect(r.results.compactMap { $0["objectId"]?.stringValue } == [u1, u2])
            #expect(r.results.allSatisfy { $0["className"] == "Player" })
            #expect(r.results.first?["name"] == "one")
        }
    }

    @Test("keys keeps the system fields; excludeKeys removes fields", arguments: Backend.all)
    func keysAndExcludeKeys(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("Row", ["a": 1, "b": "two", "c": true, "ACL": ["*": ["read": true]]])
            let keys = try await p.find("Row", ["keys": "a,c"])
            let object = try #require(keys.results.first?.objectValue)
            #expect(Set(object.keys) == ["objectId", "createdAt", "updatedAt", "ACL", "a", "c"])
            #expect(object["objectId"] == .string(id))
            let arrayKeys = try await p.find("Row", ["keys": #"["b"]"#])
            let arrayObject = try #require(arrayKeys.results.first?.objectValue)
            #expect(Set(arrayObject.keys) == ["objectId", "createdAt", "updatedAt", "ACL", "b"])
            let exclude = try await p.find("Row", ["excludeKeys": "a,b,objectId"])
            let excluded = try #require(exclude.results.first?.objectValue)
            #expect(Set(excluded.keys) == ["objectId", "createdAt", "updatedAt", "ACL", "c"])
            let both = try await p.find("Row", ["keys": "a,b", "excludeKeys": "b"])
            let bothObject = try #require(both.results.first?.objectValue)
            #expect(bothObject["a"] == 1)
            #expect(bothObject["b"] == nil)
            // Form encoding: `+` in the query string is a space (`keys=a,+c` names `a` and ` c`, trimmed to `c`;
            // `two+words` in a where is "two words").
            let plus = try await p.request(.get, "/classes/Row?keys=a,+c")
            #expect(Set(try #require(plus.results.first?.objectValue).keys) == ["objectId", "createdAt", "updatedAt", "ACL", "a", "c"])
            _ = try await p.createId("Row", ["b": "two words"])
            let spaced = try await p.request(.get, "/classes/Row?where=%7B%22b%22%3A%22two+words%22%7D")
            #expect(spaced.results.count == 1, "\(spaced.json)")
        }
    }

    @Test("include expands pointers, nested paths and arrays; dangling pointers disappear", arguments: Backend.all)
    func include(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let author = try await p.createId("Author", ["name": "Ann"])
            let post = try await p.createId("Post", ["title": "Hello", "author": F.pointer("Author", author)])
            let gone = try await p.createId("Post", ["title": "Gone"])
            let c1 = try await p.createId(
                "Comment",
                [
                    "text": "nice", "post": F.pointer("Post", post), "related": [F.pointer("Post", post), F.pointer("Post", gone), "plain"],
                ])
            let c2 = try await p.createId("Comment", ["text": "dangling", "post": F.pointer("Post", gone)])
            _ = try await p.delete("Post", gone)

            let one = try await p.find("Comment", where: ["objectId": .string(c1)], ["include": "post"])
            let expanded = try #require(one.results.first?["post"])
            #expect(expanded["__type"] == "Object")
            #expect(expanded["className"] == "Post")
            #expect(expanded["objectId"] == .string(post))
            #expect(expanded["title"] == "Hello")
            #expect(expanded["createdAt"]?.stringValue != nil)
            // Not included further: the author stays a pointer.
            #expect(expanded["author"] == F.pointer("Author", author))
            // Fields that were not included stay pointers.
            #expect(one.results.first?["related"]?.arrayValue?.first == F.pointer("Post", post))

            let nested = try await p.find("Comment", where: ["objectId": .string(c1)], ["include": "post.author"])
            let nestedAuthor = try #require(nested.results.first?["post"]?["author"])
            #expect(nestedAuthor["__type"] == "Object")
            #expect(nestedAuthor["className"] == "Author")
            #expect(nestedAuthor["name"] == "Ann")

            let dangling = try await p.find("Comment", where: ["objectId": .string(c2)], ["include": "post"])
            let danglingObject = try #require(dangling.results.first?.objectValue)
            #expect(danglingObject["post"] == nil)
            #expect(danglingObject["text"] == "dangling")

            let array = try await p.find("Comment", where: ["objectId": .string(c1)], ["include": "related"])
            let items = try #require(array.results.first?["related"]?.arrayValue)
            #expect(items.count == 2)
            #expect(items.first?["__type"] == "Object")
            #expect(items.first?["title"] == "Hello")
            #expect(items.last == "plain")

            let listForm = try await p.find("Comment", where: ["objectId": .string(c1)], ["include": #"["post","related"]"#])
            #expect(listForm.results.first?["post"]?["__type"] == "Object")
            #expect(listForm.results.first?["related"]?.arrayValue?.first?["__type"] == "Object")

            let star = try await p.find("Comment", where: ["objectId": .string(c1)], ["include": "*"])
            #expect(star.results.first?["post"]?["__type"] == "Object")

            // Dotted keys imply the include and keep the pointer field.
            let dottedKeys = try await p.find("Comment", where: ["objectId": .string(c1)], ["keys": "post.title"])
            let dotted = try #require(dottedKeys.results.first?.objectValue)
            #expect(dotted["text"] == nil)
            #expect(dotted["post"]?["__type"] == "Object")
            #expect(dotted["post"]?["title"] == "Hello")
            // ... and restrict the included object to the named keys.
            #expect(dotted["post"]?["author"] == nil)
            #expect(dotted["post"]?["objectId"] == .string(post))
            let deepKeys = try await p.find("Comment", where: ["objectId": .string(c1)], ["keys": "post.author.name"])
            let deep = try #require(deepKeys.results.first?["post"])
            #expect(deep["title"] == nil)
            #expect(deep["author"]?["__type"] == "Object")
            #expect(deep["author"]?["name"] == "Ann")
            let excluded = try await p.find("Comment", where: ["objectId": .string(c1)], ["include": "post", "excludeKeys": "post.title"])
            let excludedPost = try #require(excluded.results.first?["post"])
            #expect(excludedPost["__type"] == "Object")
            #expect(excludedPost["title"] == nil)
            #expect(excludedPost["author"] == F.pointer("Author", author))
            #expect(excluded.results.first?["text"] == "nice")
        }
    }

    @Test("count=1 with and without limit=0", arguments: Backend.all)
    func count(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            for i in 0..<7 { _ = try await p.createId("Thing", ["n": .int(Int64(i)), "even": .bool(i % 2 == 0)]) }
            let onlyCount = try await p.find("Thing", where: ["even": true], ["count": "1", "limit": "0"])
            #expect(onlyCount.status == 200)
            #expect(onlyCount.json == ["results": [], "count": 4])
            let withRows = try await p.find("Thing", where: ["even": true], ["count": "1", "limit": "2", "skip": "1"])
            #expect(withRows.results.count == 2)
            #expect(withRows["count"] == 4)
            let trueCount = try await p.find("Thing", ["count": "true", "limit": "0"])
            #expect(trueCount["count"] == 7)
            let noCount = try await p.find("Thing")
            #expect(noCount["count"] == nil)
            #expect(noCount.results.count == 7)
            let missingClass = try await p.find("NoSuchClass", ["count": "1", "limit": "0"])
            #expect(missingClass.json == ["results": [], "count": 0])
        }
    }

    @Test("query errors: parameters, JSON, operators, ACL and internal fields", arguments: Backend.all)
    func errors(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Thing", ["n": 1])
            let unknown = try await p.find("Thing", ["bogus": "1"])
            #expect(unknown.status == 400)
            #expect(unknown.json == ["code": 102, "error": "Invalid parameter for query: bogus"])
            let badJSON = try await p.request(.get, "/classes/Thing?where=" + ParseClient.encode("{\"n\":"))
            #expect(badJSON.status == 400)
            #expect(badJSON.code == 107)
            let badLimit = try await p.find("Thing", ["limit": "ten"])
            #expect(badLimit.status == 400)
            #expect(badLimit.code == 102)
            let objectLimit = try await p.find("Thing", ["limit": #"{"a":1}"#])
            #expect(objectLimit.code == 102)
            let badSkip = try await p.find("Thing", ["skip": "-1"])
            #expect(badSkip.code == 102)
            let badOperator = try await p.find("Thing", where: ["n": ["$foo": 1]])
            #expect(badOperator.status == 400)
            #expect(badOperator.json == ["code": 107, "error": "bad constraint: $foo"])
            let acl = try await p.find("Thing", where: ["ACL": ["*": ["read": true]]])
            #expect(acl.status == 400)
            #expect(acl.json == ["code": 102, "error": "Cannot query on ACL."])
            let rperm = try await p.find("Thing", where: ["_rperm": ["$in": ["*"]]], master: false)
            #expect(rperm.status == 400)
            #expect(rperm.code == 105)
            let rpermMaster = try await p.find("Thing", where: ["_rperm": ["$in": ["*"]]])
            #expect(rpermMaster.status == 200)
            let badKey = try await p.findCode("Thing", where: ["bad-key": 1])
            #expect(badKey == 105)
            let mixed = try await p.findCode("Thing", where: ["n": ["$gt": 1, "plain": 2]])
            #expect(mixed == 107)
            let whereArray = try await p.findCode("Thing", where: [1, 2])
            #expect(whereArray == 107)
        }
    }

    @Test("a class that does not exist answers an empty list to the master key", arguments: Backend.all)
    func missingClass(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let r = try await p.find("Nothing", where: ["a": 1])
            #expect(r.status == 200)
            #expect(r.json == ["results": []])
            let client = try await p.find("Nothing", master: false)
            #expect(client.status == 400)
            #expect(client.code == 119)
        }
    }

    @Test("JS SDK form: POST text/plain with _method GET and body credentials", arguments: Backend.all)
    func jsSDKTransport(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Score", ["score": 5, "name": "a"])
            let b = try await p.createId("Score", ["score": 15, "name": "b"])
            let c = try await p.createId("Score", ["score": 25, "name": "c"])
            let body: JSONValue = [
                "where": ["score": ["$gt": 10]], "order": "-score", "limit": 10, "count": 1, "_method": "GET",
                "_ApplicationId": "test-app", "_MasterKey": "test-master-key", "_ClientVersion": "js5.3.0",
                "_InstallationId": "5f3c5f2e-5cd0-4f6b-9c2a-1f0f4b3c2d1a",
            ]
            var headers = HTTPFields()
            headers[.contentType] = "text/plain"
            let post = try await p.raw(.post, "/parse/classes/Score", body: JSONWriter.string(body), headers: headers)
            #expect(post.status == 200)
            let get = try await p.find("Score", where: ["score": ["$gt": 10]], ["order": "-score", "limit": "10", "count": "1"])
            #expect(post.json == get.json)
            #expect(post.results.compactMap { $0["objectId"]?.stringValue } == [c, b])
            #expect(post["count"] == 2)
            // `where` as a JSON string in the body works too.
            let stringWhere: JSONValue = [
                "where": .string(#"{"name":"b"}"#), "_method": "GET", "_ApplicationId": "test-app", "_MasterKey": "test-master-key",
            ]
            let post2 = try await p.raw(.post, "/parse/classes/Score", body: JSONWriter.string(stringWhere), headers: headers)
            #expect(post2.results.compactMap { $0["objectId"]?.stringValue } == [b])
            // Unknown body keys are still rejected as query parameters.
            let bogus: JSONValue = ["bogus": 1, "_method": "GET", "_ApplicationId": "test-app", "_MasterKey": "test-master-key"]
            let post3 = try await p.raw(.post, "/parse/classes/Score", body: JSONWriter.string(bogus), headers: headers)
            #expect(post3.code == 102)
        }
    }
}
