import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

@Suite("Schemas API")
struct SchemasTests {
    @Test("master key only: 403 without it", arguments: Backend.all)
    func masterOnly(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let r = try await p.request(.get, "/schemas", master: false)
            #expect(r.status == 403)
            #expect(r.json == ["error": "Permission denied"])
            let post = try await p.request(.post, "/schemas/City", ["fields": ["name": ["type": "String"]]], master: false)
            #expect(post.status == 403)
        }
    }

    @Test("create returns the schema with default fields, options and indexes; get and list; 103 for unknown and existing", arguments: Backend.all)
    func createGetList(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let body: JSONValue = [
                "className": "City",
                "fields": [
                    "name": ["type": "String", "required": true], "population": ["type": "Number", "defaultValue": 0],
                    "mayor": ["type": "Pointer", "targetClass": "_User"], "fans": ["type": "Relation", "targetClass": "_User"],
                    "location": ["type": "GeoPoint"],
                ],
                "indexes": ["name_1": ["name": 1]],
                "classLevelPermissions": ["find": ["*": true], "get": ["*": true], "create": ["requiresAuthentication": true]],
            ]
            let created = try await p.request(.post, "/schemas", body)
            #expect(created.status == 200)
            #expect(created["className"] == "City")
            let fields = try #require(created["fields"])
            #expect(fields["objectId"] == ["type": "String"])
            #expect(fields["createdAt"] == ["type": "Date"] && fields["updatedAt"] == ["type": "Date"] && fields["ACL"] == ["type": "ACL"])
            #expect(fields["name"] == ["type": "String", "required": true])
            #expect(fields["population"] == ["type": "Number", "defaultValue": 0])
            #expect(fields["mayor"] == ["type": "Pointer", "targetClass": "_User"])
            #expect(fields["fans"] == ["type": "Relation", "targetClass": "_User"])
            #expect(created["indexes"] == ["name_1": ["name": 1]])
            #expect(created["classLevelPermissions"]?["create"] == ["requiresAuthentication": true])
            #expect(created["classLevelPermissions"]?["update"] == [:])
            let got = try await p.request(.get, "/schemas/City")
            #expect(got.json == created.json)
            let list = try await p.request(.get, "/schemas")
            let names = list.results.compactMap { $0["className"]?.stringValue }
            #expect(names.contains("City") && names.contains("_User") && names.contains("_Role"))
            #expect(!names.contains("_GlobalConfig"))
            let unknown = try await p.request(.get, "/schemas/city")
            #expect(unknown.json == ["code": 103, "error": "Class city does not exist."])
            let again = try await p.request(.post, "/schemas/City", [:])
            #expect(again.json == ["code": 103, "error": "Class City already exists."])
            let user = try await p.request(.post, "/schemas/_User", [:])
            #expect(user.json == ["code": 103, "error": "Class _User already exists."])
        }
    }

    @Test(
        "create errors: 135 no name, 103 mismatch and bad names, 105, 136, 111, 135 target, 111 default values, two GeoPoints", arguments: Backend.all
    )
    func createErrors(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let cases: [(String, JSONValue, Int, String)] = [
                ("/schemas", ["fields": [:]], 135, "POST /schemas needs a class name."),
                ("/schemas/A", ["className": "B"], 103, "Class name mismatch between B and A."),
                ("/schemas/_Secret", [:], 103, ParseError.invalidClassName("_Secret").message),
                ("/schemas/1abc", [:], 103, ParseError.invalidClassName("1abc").message),
                ("/schemas/A", ["fields": ["bad-name": ["type": "String"]]], 105, "invalid field name: bad-name"),
                ("/schemas/A", ["fields": ["objectId": ["type": "String"]]], 136, "field objectId cannot be added"),
                ("/schemas/A", ["fields": ["ACL": ["type": "ACL"]]], 136, "field ACL cannot be added"),
                ("/schemas/A", ["fields": ["n": ["type": "Int"]]], 111, "invalid field type: Int"),
                ("/schemas/A", ["fields": ["n": ["type": "ACL"]]], 111, "invalid field type: ACL"),
                ("/schemas/A", ["fields": ["p": ["type": "Pointer"]]], 135, "type Pointer needs a class name"),
                ("/schemas/A", ["fields": ["r": ["type": "Relation"]]], 135, "type Relation needs a class name"),
                ("/schemas/A", ["fields": ["p": ["type": "Pointer", "targetClass": "no way"]]], 103, ParseError.invalidClassName("no way").message),
                (
                    "/schemas/A", ["fields": ["n": ["type": "Number", "defaultValue": "zero"]]], 111,
                    "schema mismatch for A.n default value; expected Number but got String"
                ),
                (
                    "/schemas/A",
                    [
                        "fields": [
                            "p": [
                                "type": "Pointer", "targetClass": "_User", "defaultValue": ["__type": "Pointer", "className": "B", "objectId": "x"],
                            ]
                        ]
                    ],
                    111, "schema mismatch for A.p default value; expected Pointer<_User> but got Pointer<B>"
                ),
                (
                    "/schemas/A",
                    ["fields": ["r": ["type": "Relation", "targetClass": "_User", "defaultValue": ["__type": "Relation", "className": "_User"]]]],
                    111, "The 'default value' option is not applicable for Relation<_User>"
                ),
                (
                    "/schemas/A", ["fields": ["r": ["type": "Relation", "targetClass": "_User", "required": true]]], 111,
                    "The 'required' option is not applicable for Relation<_User>"
                ),
                (
                    "/schemas/A", ["fields": ["a": ["type": "GeoPoint"], "b": ["type": "GeoPoint"]]], 111,
                    "currently, only one GeoPoint field may exist in an object. Adding b when a already exists."
                ),
                (
                    "/schemas/A", ["fields": ["n": ["type": "Number"]], "indexes": ["i": ["missing": 1]]], 102,
                    "Field missing does not exist, cannot add index."
                ),
                (
                    "/schemas/A", ["classLevelPermissions": ["find": ["*": false]]], 107,
                    "'false' is not a valid value for class level permissions acl find:*"
                ),
            ]
            for (path, body, code, message) in cases {
                let r = try await p.request(.post, path, body)
                #expect(r.status == 400, "\(path) \(body)")
                #expect(r.json == ["code": .int(Int64(code)), "error": .string(message)], "\(path) \(body)")
            }
            // SQLite column names ignore case, so fields differing only in case are refused up front.
            _ = try await p.request(.post, "/schemas/Cased", ["fields": ["friends": ["type": "Array"]]])
            let cased = try await p.request(.put, "/schemas/Cased", ["fields": ["Friends": ["type": "Array"]]])
            #expect(cased.code == 105)
            // The same on a write that would add the field.
            let written = try await p.create("Cased", ["FRIENDS": [1]])
            #expect(written.code == 105)
            // Nothing was half-created.
            let list = try await p.request(.get, "/schemas")
            #expect(!list.results.contains { $0["className"] == "A" })
        }
    }

    @Test("update: add and delete fields and indexes, change options, replace CLP; errors 103, 255, 136, 102", arguments: Backend.all)
    func update(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Game", ["score": 1, "player": "ann", "old": "x"])
            let r = try await p.request(
                .put, "/schemas/Game",
                [
                    "fields": [
                        "level": ["type": "Number", "defaultValue": 1], "old": ["__op": "Delete"], "score": ["type": "Number", "required": true],
                    ],
                    "indexes": ["score_idx": ["score": -1], "lp": ["level": 1, "player": 1]],
                ])
            #expect(r.status == 200)
            #expect(r["fields"]?["level"] == ["type": "Number", "defaultValue": 1])
            #expect(r["fields"]?["score"] == ["type": "Number", "required": true])
            #expect(r["fields"]?["old"] == nil)
            #expect(r["indexes"] == ["score_idx": ["score": -1], "lp": ["level": 1, "player": 1]])
            // The deleted field's data is gone.
            let objects = try await p.find("Game")
            #expect(objects.results.first?["old"] == nil)
            #expect(objects.results.first?["score"] == 1)
            let cases: [(String, JSONValue, Int, String)] = [
                ("/schemas/Nope", ["fields": ["a": ["type": "String"]]], 103, "Class Nope does not exist."),
                ("/schemas/Game", ["fields": ["score": ["type": "String"]]], 255, "Field score exists, cannot update."),
                ("/schemas/Game", ["fields": ["missing": ["__op": "Delete"]]], 255, "Field missing does not exist, cannot delete."),
                ("/schemas/Game", ["fields": ["createdAt": ["__op": "Delete"]]], 136, "field createdAt cannot be changed"),
                ("/schemas/Game", ["indexes": ["score_idx": ["score": 1]]], 102, "Index score_idx exists, cannot update."),
                ("/schemas/Game", ["indexes": ["nope": ["__op": "Delete"]]], 102, "Index nope does not exist, cannot delete."),
                ("/schemas/Game", ["indexes": ["x": ["ghost": 1]]], 102, "Field ghost does not exist, cannot add index."),
                (
                    "/schemas/Game", ["fields": ["level": ["type": "Number", "defaultValue": "one"]]], 111,
                    "schema mismatch for Game.level default value; expected Number but got String"
                ),
                ("/schemas/Game", ["fields": ["b": ["type": "Boolean"], "x": ["type": "Whatever"]]], 111, "invalid field type: Whatever"),
            ]
            for (path, body, code, message) in cases {
                let e = try await p.request(.put, path, body)
                #expect(e.json == ["code": .int(Int64(code)), "error": .string(message)], "\(path) \(body)")
            }
            // A failed update changed nothing (b was not added).
            let schema = try await p.request(.get, "/schemas/Game")
            #expect(schema["fields"]?["b"] == nil)
            // Deleting an index, then a field that has an index.
            let dropped = try await p.request(
                .put, "/schemas/Game", ["indexes": ["score_idx": ["__op": "Delete"]], "fields": ["level": ["__op": "Delete"]]])
            #expect(dropped["indexes"] == nil)
            #expect(dropped["fields"]?["level"] == nil)
            // Same type again: accepted, options updated.
            let same = try await p.request(.put, "/schemas/Game", ["fields": ["score": ["type": "Number"]]])
            #expect(same["fields"]?["score"] == ["type": "Number"])
            // Relation fields and their deletion.
            let rel = try await p.request(.put, "/schemas/Game", ["fields": ["fans": ["type": "Relation", "targetClass": "_User"]]])
            #expect(rel["fields"]?["fans"] == ["type": "Relation", "targetClass": "_User"])
            let unrel = try await p.request(.put, "/schemas/Game", ["fields": ["fans": ["__op": "Delete"]]])
            #expect(unrel["fields"]?["fans"] == nil)
        }
    }

    @Test("protected fields and pointer permissions set through PUT are enforced", arguments: Backend.all)
    func protectedAndPointers(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let ann = try await p.signUp("ann")
            let bob = try await p.signUp("bob")
            let created = try await p.request(
                .post, "/schemas/Note",
                [
                    "fields": ["owner": ["type": "Pointer", "targetClass": "_User"], "text": ["type": "String"], "secret": ["type": "String"]],
                    "classLevelPermissions": [
                        "find": [:], "get": [:], "count": [:], "create": ["requiresAuthentication": true],
                        "update": ["pointerFields": ["owner"]], "delete": ["pointerFields": ["owner"]], "addField": [:], "readUserFields": ["owner"],
                        "protectedFields": ["*": ["secret"], "userField:owner": []],
                    ],
                ])
            #expect(created.status == 200)
            let note = try await p.asUser(ann.token, .post, "/classes/Note", ["owner": p.userPointer(ann.id), "text": "hi", "secret": "s"])
            #expect(note.status == 201)
            let mine = try await p.asUser(ann.token, .get, "/classes/Note")
            #expect(mine.results.count == 1)
            #expect(mine.results.first?["secret"] == "s")
            let theirs = try await p.asUser(bob.token, .get, "/classes/Note")
            #expect(theirs.results.isEmpty)
            let newField = try await p.asUser(ann.token, .post, "/classes/Note", ["owner": p.userPointer(ann.id), "mood": 1])
            #expect(newField.code == 119)
            let id = try #require(note["objectId"]?.stringValue)
            let edit = try await p.asUser(bob.token, .put, "/classes/Note/\(id)", ["text": "hacked"])
            #expect(edit.code == 101)
            let own = try await p.asUser(ann.token, .put, "/classes/Note/\(id)", ["text": "edited"])
            #expect(own.status == 200)
        }
    }

    @Test("required and defaultValue: defaults stored and echoed on create; 142 for missing, null or empty required values", arguments: Backend.all)
    func requiredAndDefaults(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.request(
                .post, "/schemas/Task",
                [
                    "fields": [
                        "title": ["type": "String", "required": true], "done": ["type": "Boolean", "defaultValue": false],
                        "priority": ["type": "Number", "required": true, "defaultValue": 3], "tags": ["type": "Array", "defaultValue": ["a"]],
                        "due": ["type": "Date", "defaultValue": ["__type": "Date", "iso": "2030-01-01T00:00:00.000Z"]],
                    ]
                ])
            let created = try await p.create("Task", ["title": "write"])
            #expect(created.status == 201)
            #expect(created["done"] == false && created["priority"] == 3 && created["tags"] == ["a"])
            #expect(created["due"] == ["__type": "Date", "iso": "2030-01-01T00:00:00.000Z"])
            let id = try #require(created["objectId"]?.stringValue)
            let got = try await p.get("Task", id)
            #expect(got["done"] == false && got["priority"] == 3 && got["title"] == "write")
            #expect(got["due"] == ["__type": "Date", "iso": "2030-01-01T00:00:00.000Z"])
            let given = try await p.create("Task", ["title": "x", "done": true, "priority": ["__op": "Delete"]])
            #expect(given["done"] == nil && given["priority"] == 3)
            let bodies: [JSONValue] = [[:], ["title": nil], ["title": ""], ["title": ["__op": "Delete"]], ["title": "t", "priority": nil]]
            for body in bodies {
                let r = try await p.create("Task", body)
                #expect(r.status == 400, "\(body)")
                #expect(r.code == 142, "\(body)")
            }
            let missing = try await p.create("Task", [:])
            #expect(missing["error"] == "title is required")
            // Updates check only what they touch.
            let ok = try await p.update("Task", id, ["done": true])
            #expect(ok.status == 200)
            let cleared = try await p.update("Task", id, ["title": ["__op": "Delete"]])
            #expect(cleared.json == ["code": 142, "error": "title is required"])
            let emptied = try await p.update("Task", id, ["title": ""])
            #expect(emptied.code == 142)
            let count = try await p.total("Task")
            #expect(count == 2)
        }
    }

    @Test("delete: only an empty class (255 with the count), unknown is {}, bad names 103; purge empties", arguments: Backend.all)
    func delete(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Junk", ["n": 1])
            _ = try await p.createId("Junk", ["n": 2])
            let full = try await p.request(.delete, "/schemas/Junk")
            #expect(full.json == ["code": 255, "error": "Class Junk is not empty, contains 2 objects, cannot drop schema."])
            let purged = try await p.request(.delete, "/purge/Junk")
            #expect(purged.status == 200)
            let dropped = try await p.request(.delete, "/schemas/Junk")
            #expect(dropped.status == 200 && dropped.json == [:])
            let gone = try await p.request(.get, "/schemas/Junk")
            #expect(gone.code == 103)
            let unknown = try await p.request(.delete, "/schemas/Never")
            #expect(unknown.json == [:])
            let system = try await p.request(.delete, "/schemas/_Session")
            #expect(system.code == 255)
            let hidden = try await p.request(.delete, "/schemas/_GlobalConfig")
            #expect(hidden.code == 103)
            // The class can be created again from scratch.
            let again = try await p.request(.post, "/schemas/Junk", ["fields": ["n": ["type": "String"]]])
            #expect(again["fields"]?["n"] == ["type": "String"])
        }
    }

    @Test(
        "a field deleted and added back with another type: the same queries keep answering (plans cached per connection are renewed)",
        arguments: Backend.all)
    func fieldRetyped(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Retyped", ["level": "high", "n": 1])
            // Run the query shapes often enough for every pooled connection to have prepared them.
            for _ in 0..<30 {
                let found = try await p.find("Retyped", where: ["n": 1])
                #expect(found.results.first?["level"] == "high")
            }
            _ = try await p.request(.put, "/schemas/Retyped", ["fields": ["level": ["__op": "Delete"]]])
            _ = try await p.request(.put, "/schemas/Retyped", ["fields": ["level": ["type": "Number"]]])
            _ = try await p.createId("Retyped", ["level": 7, "n": 1])
            for _ in 0..<30 {
                let found = try await p.find("Retyped", where: ["n": 1])
                #expect(found.status == 200)
                let levels = found.results.map { $0["level"] }
                #expect(levels.count == 2 && levels.contains(nil) && levels.contains(7))
            }
        }
    }
}
