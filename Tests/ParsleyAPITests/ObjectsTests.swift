import HTTPTypes
import HummingbirdTesting
import ParsleyCore
import ParsleyDomain
import Testing

@Suite("Objects API")
struct ObjectsTests {
    @Test("create answers 201 with Location, a 10-character objectId and createdAt", arguments: Backend.all)
    func create(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let r = try await p.create("GameScore", ["score": 1337, "playerName": "Sean Plott", "cheatMode": false])
            #expect(r.status == 201)
            let id = try #require(r["objectId"]?.stringValue)
            #expect(id.count == 10)
            #expect(id.allSatisfy { $0.isLetter || $0.isNumber })
            let created = try #require(r["createdAt"]?.stringValue)
            #expect(created.count == 24 && created.hasSuffix("Z"))
            #expect(r.headers[.location]?.hasSuffix("/parse/classes/GameScore/\(id)") == true)
            let got = try await p.get("GameScore", id)
            #expect(got.status == 200)
            #expect(got["score"] == .int(1337))
            #expect(got["playerName"] == "Sean Plott")
            #expect(got["cheatMode"] == false)
            #expect(got["createdAt"]?.stringValue == created)
            #expect(got["updatedAt"]?.stringValue == created)
        }
    }

    @Test("every Parse type round-trips exactly", arguments: Backend.all)
    func typesRoundTrip(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let target = try await p.createId("Player", ["name": "x"])
            let body: JSONValue = [
                "string": "héllo \"quoted\" \n line",
                "int": 42,
                "bigInt": 9_007_199_254_740_993,
                "double": 3.25,
                "negative": -7,
                "bool": true,
                "date": ["__type": "Date", "iso": "2022-01-01T12:23:45.678Z"],
                "bytes": ["__type": "Bytes", "base64": "AAEC"],
                "pointer": ["__type": "Pointer", "className": "Player", "objectId": .string(target)],
                "file": ["__type": "File", "name": "abc_pic.jpg"],
                "geo": ["__type": "GeoPoint", "latitude": 40.5, "longitude": -30.25],
                "polygon": ["__type": "Polygon", "coordinates": [[0, 0], [0, 1], [1, 1]]],
                "array": [1, "a", ["__type": "Pointer", "className": "Player", "objectId": .string(target)], ["nested": true]],
                "object": ["a": 1, "b": ["c": [1, 2]], "d": nil],
                "acl": nil,
            ]
            let id = try await p.createId("Everything", body)
            let got = try await p.get("Everything", id)
            #expect(got["string"] == body["string"])
            #expect(got["int"] == .int(42))
            if backend == .postgres {
                // Number columns are DOUBLE PRECISION on PostgreSQL (as in Parse Server's PostgreSQL adapter, and as
                // JavaScript numbers): integers beyond 2^53 round to the nearest double.
                #expect(got["bigInt"] == .double(9_007_199_254_740_992))
            } else {
                #expect(got["bigInt"] == .int(9_007_199_254_740_993))
            }
            #expect(got["double"] == .double(3.25))
            #expect(got["negative"] == .int(-7))
            #expect(got["bool"] == true)
            #expect(got["date"] == body["date"])
            #expect(got["bytes"] == body["bytes"])
            #expect(got["pointer"] == body["pointer"])
            #expect(got["file"]?["name"] == "abc_pic.jpg")
            #expect(got["file"]?["__type"] == "File")
            #expect(got["geo"] == ["__type": "GeoPoint", "latitude": 40.5, "longitude": -30.25])
            // Polygons come back closed.
            #expect(got["polygon"]?["coordinates"]?.arrayValue?.count == 4)
            #expect(got["array"] == body["array"])
            #expect(got["object"] == body["object"])
            // A field set to null is not added to the schema and not returned.
            #expect(got["acl"] == nil)
            let schema = try await p.request(.get, "/schemas/Everything")
            #expect(schema["fields"]?["int"]?["type"] == "Number")
            #expect(schema["fields"]?["pointer"] == ["type": "Pointer", "targetClass": "Player"])
            #expect(schema["fields"]?["acl"] == nil)
        }
    }

    @Test("ACL is stored and returned", arguments: Backend.all)
    func aclRoundTrip(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let acl: JSONValue = ["*": ["read": true], "role:Admin": ["read": true, "write": true]]
            let id = try await p.createId("Doc", ["ACL": acl, "t": 1])
            let got = try await p.get("Doc", id)
            #expect(got["ACL"] == acl)
            let bad = try await p.create("Doc", ["ACL": ["*": ["read": "yes"]]])
            #expect(bad.status == 400)
            #expect(bad.code == 123)
        }
    }

    @Test("update returns updatedAt and only operation results; get reflects every change", arguments: Backend.all)
    func updateEchoesOperations(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("GameScore", ["c": 1, "d": ["1"], "e": ["1"], "f": ["1", "2"], "g": 5, "stats": ["wins": 5]])
            let r = try await p.update(
                "GameScore", id,
                [
                    "a": "b",
                    "c": ["__op": "Increment", "amount": 2],
                    "d": ["__op": "Add", "objects": ["2"]],
                    "e": ["__op": "AddUnique", "objects": ["1", "2"]],
                    "f": ["__op": "Remove", "objects": ["2"]],
                    "g": ["__op": "Delete"],
                    "stats.wins": ["__op": "Increment", "amount": 1],
                ])
            #expect(r.status == 200)
            let keys = Set(r.json.objectValue?.keys.map { $0 } ?? [])
            #expect(keys == ["updatedAt", "c", "d", "e", "f", "stats"])
            #expect(r["c"] == .int(3))
            #expect(r["d"] == ["1", "2"])
            #expect(r["e"] == ["1", "2"])
            #expect(r["f"] == ["1"])
            #expect(r["stats"] == ["wins": 6])
            let got = try await p.get("GameScore", id)
            #expect(got["a"] == "b")
            #expect(got["g"] == nil)
            #expect(got["stats"] == ["wins": 6])
            #expect(got["updatedAt"] == r["updatedAt"])
        }
    }

    @Test(
        "a plain update (one statement, no read first): sets, Increment, Delete and ACL in one write; a caller the ACL or the class's pointer permission keeps out changes nothing (101)",
        arguments: Backend.all)
    func plainUpdate(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let owner = try await p.signUp("owner")
            let other = try await p.signUp("other")
            let ownerOnly: JSONValue = .object([owner.id: ["read": true, "write": true]])
            let id = try await p.createId(
                "Diary", ["mood": 3, "count": 1, "note": "x", "tags": ["x"], "owner": p.userPointer(owner.id), "ACL": ownerOnly])
            let r = try await p.asUser(
                owner.token, .put, "/classes/Diary/\(id)",
                ["mood": 7, "count": ["__op": "Increment", "amount": 2], "note": ["__op": "Delete"], "missing": ["__op": "Delete"]])
            #expect(r.status == 200)
            #expect(Set(r.json.objectValue?.keys.map { $0 } ?? []) == ["updatedAt", "count"])
            #expect(r["count"] == .int(3))
            // The ACL keeps `other` out: not found, nothing changed.
            let denied = try await p.asUser(other.token, .put, "/classes/Diary/\(id)", ["mood": 1])
            #expect(denied.status == 404)
            #expect(denied.code == 101)
            #expect(try await p.asUser(other.token, .put, "/classes/Missing0001/abc", ["mood": 1]).code == 101)
            // Opened to everyone by an update, then closed by the class's pointer permission (only `owner` writes).
            #expect(try await p.asUser(owner.token, .put, "/classes/Diary/\(id)", ["ACL": ["*": ["read": true, "write": true]]]).status == 200)
            #expect(
                try await p.request(
                    .put, "/schemas/Diary",
                    [
                        "classLevelPermissions": [
                            "update": ["pointerFields": ["owner"]], "get": ["*": true], "find": ["*": true], "create": ["*": true],
                            "delete": ["*": true], "addField": ["*": true],
                        ]
                    ]
                ).status == 200)
            // The pointer permission is the UPDATE's own condition (no beforeSave, no LiveQuery): a plain update, an
            // Increment, an array operation (read first) and a body adding a field (checked before the schema changes)
            // by `other` are all not found and change nothing.
            for body: JSONValue in [
                ["mood": 2], ["count": ["__op": "Increment", "amount": 5]], ["tags": ["__op": "Add", "objects": ["a"]]], ["brandNew": 1],
            ] {
                let r = try await p.asUser(other.token, .put, "/classes/Diary/\(id)", body)
                #expect(r.status == 404, "\(body)")
                #expect(r.code == 101, "\(body)")
            }
            #expect(try await p.request(.get, "/schemas/Diary")["fields"]?["brandNew"] == nil)
            #expect(try await p.asUser(owner.token, .put, "/classes/Diary/\(id)", ["mood": 8]).status == 200)
            let got = try await p.get("Diary", id)
            #expect(got["mood"] == .int(8))
            #expect(got["count"] == .int(3))
            #expect(got["note"] == nil)
            #expect(got["tags"] == ["x"])
            #expect(got["ACL"] == ["*": ["read": true, "write": true]])
        }
    }

    @Test("create echoes operation results", arguments: Backend.all)
    func createWithOperations(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let r = try await p.create(
                "GameScore", ["score": ["__op": "Increment", "amount": 5], "tags": ["__op": "AddUnique", "objects": ["a", "a"]]])
            #expect(r.status == 201)
            #expect(r["score"] == .int(5))
            #expect(r["tags"] == ["a"])
        }
    }

    @Test("100 concurrent Increments on one object end at +100", arguments: Backend.all)
    func concurrentIncrements(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("Counter", ["n": 0])
            guard let port = p.port else { throw Failure("no port") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                            let c = ParseClient(connection: client, options: p.options)
                            for _ in 0..<10 {
                                let r = try await c.update("Counter", id, ["n": ["__op": "Increment", "amount": 1]])
                                #expect(r.status == 200)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let got = try await p.get("Counter", id)
            #expect(got["n"] == .int(100))
        }
    }

    @Test("delete answers {} and the object is gone; deleting again is 101", arguments: Backend.all)
    func delete(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("GameScore", ["score": 1])
            let r = try await p.delete("GameScore", id)
            #expect(r.status == 200)
            #expect(r.json == [:])
            let again = try await p.delete("GameScore", id)
            #expect(again.status == 404)
            #expect(again.code == 101)
            let get = try await p.get("GameScore", id)
            #expect(get.status == 404)
            #expect(get.json == ["code": 101, "error": "Object not found."])
        }
    }

    @Test("a later write of another type fails with 111 and stores nothing", arguments: Backend.all)
    func typeMismatch(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("GameScore", ["score": 1])
            let r = try await p.create("GameScore", ["score": "high", "other": 1])
            #expect(r.status == 400)
            #expect(r.code == 111)
            let u = try await p.update("GameScore", id, ["score": true])
            #expect(u.code == 111)
            let stillOne = try await p.get("GameScore", id)
            #expect(stillOne["score"] == .int(1))
            let all = try await p.find("GameScore")
            #expect(all.results.count == 1)
            let schema = try await p.request(.get, "/schemas/GameScore")
            #expect(schema["fields"]?["other"] == nil)
        }
    }

    @Test("invalid class and field names are rejected with Parse codes", arguments: Backend.all)
    func invalidNames(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let c1 = try await p.createCode("Bad-Class", ["a": 1])
            #expect(c1 == 103)
            let c2 = try await p.createCode("x'%3B%20DROP%20TABLE%20t%3B--", ["a": 1])
            #expect(c2 == 103)
            let c3 = try await p.createCode("_Secret", ["a": 1])
            #expect(c3 == 103)
            let c4 = try await p.createCode("Ok", ["$bad": 1])
            #expect(c4 == 105)
            let c5 = try await p.createCode("Ok", ["_hidden": 1])
            #expect(c5 == 105)
            let c6 = try await p.createCode("Ok", ["objectId": "abc"])
            #expect(c6 == 105)
            let c7 = try await p.createCode("Ok", ["nested": ["a.b": 1]])
            #expect(c7 == 121)
            let c8 = try await p.createCode("Ok", ["nested": ["$a": 1]])
            #expect(c8 == 121)
            let c9 = try await p.createCode("Ok", ["p": ["__type": "Pointer", "className": "X"]])
            #expect(c9 == 111)
            let c10 = try await p.createCode("Ok", ["x": ["__op": "Increment", "amount": "1"]])
            #expect(c10 == 107)
            let c11 = try await p.createCode("Ok", ["x": ["__op": "Explode"]])
            #expect(c11 == 108)
            // Nothing above created the class.
            let schema = try await p.request(.get, "/schemas/Ok")
            #expect(schema.status == 400)
        }
    }

    @Test("clients cannot create classes unless allowed; the master key can", arguments: Backend.all)
    func clientClassCreation(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let r = try await p.create("Fresh", ["a": 1], master: false)
            #expect(r.status == 400)
            #expect(r.code == 119)
            _ = try await p.createId("Fresh", ["a": 1])
            let ok = try await p.create("Fresh", ["a": 2, "newField": true], master: false)
            #expect(ok.status == 201)
        }
        try await TestServer.with(backend: backend, TestServer.options { $0.allowClientClassCreation = true }) { p in
            let r = try await p.create("Fresh", ["a": 1], master: false)
            #expect(r.status == 201)
        }
    }
}
