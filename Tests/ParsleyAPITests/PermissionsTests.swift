import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

extension ParseClient {
    /// Replaces a class's CLP with the master key (expects success).
    func setCLP(_ className: String, _ clp: JSONValue) async throws {
        let r = try await request(.put, "/schemas/\(className)", ["classLevelPermissions": clp])
        guard r.status == 200 else { throw Failure("set CLP failed: \(r.status) \(r.json)") }
    }

    /// Number of objects of a class, counted with the master key.
    func total(_ className: String) async throws -> Int {
        try await find(className, ["count": "1", "limit": "0"])["count"]?.integerValue ?? -1
    }
}

@Suite("Class-level permissions")
struct PermissionsTests {
    @Test("bad CLP JSON through /schemas is 107 and changes nothing; omitted operations become closed", arguments: Backend.all)
    func schemaValidation(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Item", ["title": "a", "owner": p.userPointer("u1")])
            let cases: [JSONValue] = [
                ["fnd": ["*": true]], ["find": ["*": false]], ["find": ["bad key!": true]], ["readUserFields": ["title"]],
                ["protectedFields": ["*": ["missing"]]], ["protectedFields": ["*": ["objectId"]]], ["update": ["pointerFields": ["title"]]],
            ]
            for clp in cases {
                let r = try await p.request(.put, "/schemas/Item", ["classLevelPermissions": clp])
                #expect(r.code == 107, "\(clp) -> \(r.json)")
            }
            let created = try await p.request(.post, "/schemas/Other", ["classLevelPermissions": ["get": ["*": 1]]])
            #expect(created.code == 107)
            let other = try await p.request(.get, "/schemas/Other")
            #expect(other.code == 103)
            let unchanged = try await p.request(.get, "/schemas/Item")
            #expect(unchanged["classLevelPermissions"]?["find"] == ["*": true])
            try await p.setCLP("Item", ["find": ["*": true], "readUserFields": ["owner"]])
            let schema = try await p.request(.get, "/schemas/Item")
            #expect(schema["classLevelPermissions"]?["find"] == ["*": true])
            #expect(schema["classLevelPermissions"]?["create"] == [:])
            #expect(schema["classLevelPermissions"]?["readUserFields"] == ["owner"])
        }
    }

    @Test("closed operations answer 119 with Parse's message and change nothing; the master key bypasses", arguments: Backend.all)
    func closedOperations(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("Locked", ["n": 1])
            try await p.setCLP("Locked", [:])
            let checks: [(HTTPRequest.Method, String, JSONValue?, String)] = [
                (.get, "/classes/Locked", nil, "find"),
                (.get, "/classes/Locked/\(id)", nil, "get"),
                (.get, "/classes/Locked?count=1&limit=0", nil, "count"),
                (.post, "/classes/Locked", ["n": 2], "create"),
                (.put, "/classes/Locked/\(id)", ["n": 3], "update"),
                (.delete, "/classes/Locked/\(id)", nil, "delete"),
            ]
            for (method, path, body, op) in checks {
                let r = try await p.call(nil, method, path, body)
                #expect(r.status == 400, "\(op) \(path)")
                #expect(r.code == 119, "\(op)")
                #expect(r["error"]?.stringValue == "Permission denied")
            }
            // A where of exactly {objectId} is a get.
            let byId = try await p.findAs(nil, "Locked", where: ["objectId": .string(id)])
            #expect(byId["error"] == "Permission denied")
            let count = try await p.total("Locked")
            #expect(count == 1)
            let stored = try await p.get("Locked", id)
            #expect(stored["n"] == 1)
            let masterUpdate = try await p.update("Locked", id, ["n": 5])
            #expect(masterUpdate.status == 200)
            // Batch sub-requests are checked the same way.
            let batch = try await p.call(
                nil, .post, "/batch",
                [
                    "requests": [
                        ["method": "PUT", "path": .string("/parse/classes/Locked/\(id)"), "body": ["n": 9]],
                        ["method": "DELETE", "path": .string("/parse/classes/Locked/\(id)")],
                    ]
                ])
            #expect(batch.json.arrayValue?.compactMap { $0["error"]?["code"]?.integerValue } == [119, 119])
            let after = try await p.get("Locked", id)
            #expect(after["n"] == 5)
        }
    }

    @Test("requiresAuthentication: anonymous 101, logged-in users pass; roles and user ids grant", arguments: Backend.all)
    func authentication(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let user = try await p.newUser("u")
            let staff = try await p.newUser("staff")
            _ = try await p.createRole("Staff", users: [staff.id])
            _ = try await p.createId("Members", ["n": 1])
            try await p.setCLP(
                "Members",
                [
                    "find": ["requiresAuthentication": true], "get": ["requiresAuthentication": true],
                    "create": ["role:Staff": true], "count": .object([user.id: true]),
                ])
            let anonymous = try await p.findAs(nil, "Members")
            #expect(anonymous.status == 404)
            #expect(anonymous.code == 101)
            #expect(anonymous["error"] == "Permission denied")
            let loggedIn = try await p.findAs(user.token, "Members")
            #expect(loggedIn.results.count == 1)
            let userCreates = try await p.call(user.token, .post, "/classes/Members", ["n": 2])
            #expect(userCreates.code == 119)
            let staffCreates = try await p.call(staff.token, .post, "/classes/Members", ["n": 3])
            #expect(staffCreates.status == 201)
            let staffCounts = try await p.findAs(staff.token, "Members", ["count": "1", "limit": "0"])
            #expect(staffCounts["error"] == "Permission denied")
            let userCounts = try await p.findAs(user.token, "Members", ["count": "1", "limit": "0"])
            #expect(userCounts["count"] == 2)
            let total = try await p.total("Members")
            #expect(total == 2)
        }
    }

    @Test("addField: a client write adding a field is 119 when addField is closed; existing fields still work", arguments: Backend.all)
    func addField(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("Form", ["title": "a"])
            try await p.setCLP(
                "Form",
                [
                    "find": ["*": true], "get": ["*": true], "create": ["*": true], "update": ["*": true], "addField": [:],
                ])
            let create = try await p.create("Form", ["title": "b", "extra": 1], master: false)
            #expect(create.code == 119)
            #expect(create["error"] == "Permission denied")
            let update = try await p.update("Form", id, ["other": true], master: false)
            #expect(update.code == 119)
            let schema = try await p.request(.get, "/schemas/Form")
            #expect(schema["fields"]?["extra"] == nil && schema["fields"]?["other"] == nil)
            let formCount = try await p.total("Form")
            #expect(formCount == 1)
            let fine = try await p.create("Form", ["title": "c", "ignored": .null], master: false)
            #expect(fine.status == 201)
            let masterAdds = try await p.update("Form", id, ["other": true])
            #expect(masterAdds.status == 200)
        }
    }

    @Test("pointer permissions: users see and write only objects whose pointer field names them", arguments: Backend.all)
    func pointerPermissions(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.newUser("alice")
            let bob = try await p.newUser("bob")
            let a1 = try await p.createId("Task", ["title": "a1", "owner": p.userPointer(alice.id), "watchers": [p.userPointer(bob.id)]])
            let b1 = try await p.createId("Task", ["title": "b1", "owner": p.userPointer(bob.id), "watchers": []])
            try await p.setCLP(
                "Task",
                [
                    "find": [:], "get": [:], "count": [:], "create": ["*": true], "readUserFields": ["owner", "watchers"],
                    "update": ["pointerFields": ["owner"]], "delete": ["pointerFields": ["owner"]],
                ])
            let aliceFinds = try await p.findAs(alice.token, "Task")
            #expect(aliceFinds.results.compactMap { $0["title"]?.stringValue } == ["a1"])
            // bob owns b1 and watches a1.
            let bobFinds = try await p.findAs(bob.token, "Task", ["order": "title", "count": "1"])
            #expect(bobFinds.results.compactMap { $0["title"]?.stringValue } == ["a1", "b1"])
            #expect(bobFinds["count"] == 2)
            let aliceGetsB = try await p.call(alice.token, .get, "/classes/Task/\(b1)")
            #expect(aliceGetsB.code == 101)
            let aliceCounts = try await p.findAs(alice.token, "Task", ["count": "1", "limit": "0"])
            #expect(aliceCounts["count"] == 1)
            let anonymous = try await p.findAs(nil, "Task")
            #expect(anonymous.status == 200 && anonymous.results.isEmpty)
            // Writes: only the owner.
            let bobUpdatesA = try await p.call(bob.token, .put, "/classes/Task/\(a1)", ["title": "hacked"])
            #expect(bobUpdatesA.code == 101)
            let bobDeletesA = try await p.call(bob.token, .delete, "/classes/Task/\(a1)")
            #expect(bobDeletesA.code == 101)
            let still = try await p.get("Task", a1)
            #expect(still["title"] == "a1")
            let aliceUpdates = try await p.call(alice.token, .put, "/classes/Task/\(a1)", ["title": "a1+"])
            #expect(aliceUpdates.status == 200)
            let aliceDeletesB = try await p.call(alice.token, .delete, "/classes/Task/\(b1)")
            #expect(aliceDeletesB.code == 101)
            let bobDeletes = try await p.call(bob.token, .delete, "/classes/Task/\(b1)")
            #expect(bobDeletes.status == 200)
            let taskCount = try await p.total("Task")
            #expect(taskCount == 1)
            // Sub-queries read with the same restriction: bob cannot match alice's task through $inQuery.
            _ = try await p.createId("Comment", ["task": ["__type": "Pointer", "className": "Task", "objectId": .string(a1)]])
            let viaInQuery = try await p.findAs(alice.token, "Comment", where: ["task": ["$inQuery": ["className": "Task", "where": [:]]]])
            #expect(viaInQuery.results.count == 1)
            let watcherLoses = try await p.request(.put, "/classes/Task/\(a1)", ["watchers": []])
            #expect(watcherLoses.status == 200)
            let bobInQuery = try await p.findAs(bob.token, "Comment", where: ["task": ["$inQuery": ["className": "Task", "where": [:]]]])
            #expect(bobInQuery.results.isEmpty)
        }
    }

    @Test("CLPs apply to includes (as get) and sub-queries (as find)", arguments: Backend.all)
    func includeAndSubqueries(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let secret = try await p.createId("Secret", ["code": "1234"])
            _ = try await p.createId("Post", ["title": "t", "secret": ["__type": "Pointer", "className": "Secret", "objectId": .string(secret)]])
            try await p.setCLP("Secret", ["find": ["*": true]])
            let include = try await p.findAs(nil, "Post", ["include": "secret"])
            #expect(include.code == 119)
            #expect(include["error"] == "Permission denied")
            let plain = try await p.findAs(nil, "Post")
            #expect(plain.results.first?["secret"]?["objectId"]?.stringValue == secret)
            let masterInclude = try await p.find("Post", ["include": "secret"])
            #expect(masterInclude.results.first?["secret"]?["code"] == "1234")
            try await p.setCLP("Secret", ["get": ["*": true]])
            let inQuery = try await p.findAs(nil, "Post", where: ["secret": ["$inQuery": ["className": "Secret", "where": [:]]]])
            #expect(inQuery["error"] == "Permission denied")
            let select = try await p.findAs(
                nil, "Post",
                where: [
                    "title": ["$select": ["query": ["className": "Secret", "where": [:]], "key": "code"]]
                ])
            #expect(select.code == 119)
        }
    }
}

@Suite("Protected fields and cross-user access")
struct ProtectedFieldsTests {
    @Test("protected fields are hidden from the callers they apply to, on find, get and include; master sees them", arguments: Backend.all)
    func hidden(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let owner = try await p.newUser("owner")
            let other = try await p.newUser("other")
            let staff = try await p.newUser("staff")
            _ = try await p.createRole("Staff", users: [staff.id])
            let id = try await p.createId("Profile", ["name": "n", "phone": "555", "salary": 10, "owner": p.userPointer(owner.id)])
            let postId = try await p.createId("Entry", ["profile": ["__type": "Pointer", "className": "Profile", "objectId": .string(id)]])
            try await p.setCLP(
                "Profile",
                [
                    "find": ["*": true], "get": ["*": true],
                    "protectedFields": ["*": ["phone", "salary"], "role:Staff": ["salary"], "userField:owner": []],
                ])
            let anonymous = try await p.findAs(nil, "Profile")
            let a = try #require(anonymous.results.first)
            #expect(a["name"] == "n" && a["phone"] == nil && a["salary"] == nil)
            let otherGet = try await p.call(other.token, .get, "/classes/Profile/\(id)")
            #expect(otherGet["phone"] == nil && otherGet["salary"] == nil && otherGet["owner"] != nil)
            let staffGet = try await p.call(staff.token, .get, "/classes/Profile/\(id)")
            #expect(staffGet["phone"] == "555" && staffGet["salary"] == nil)
            let ownerGet = try await p.call(owner.token, .get, "/classes/Profile/\(id)")
            #expect(ownerGet["phone"] == "555" && ownerGet["salary"] == 10)
            // keys without the owner field: the userField rule still applies, and owner is not returned.
            let ownerKeys = try await p.findAs(owner.token, "Profile", ["keys": "phone"])
            #expect(ownerKeys.results.first?["phone"] == "555")
            #expect(ownerKeys.results.first?["owner"] == nil)
            let otherKeys = try await p.findAs(other.token, "Profile", ["keys": "phone,name"])
            #expect(otherKeys.results.first?["phone"] == nil && otherKeys.results.first?["name"] == "n")
            let included = try await p.findAs(other.token, "Entry", ["include": "profile"])
            let profile = try #require(included.results.first?["profile"])
            #expect(profile["name"] == "n" && profile["phone"] == nil && profile["salary"] == nil)
            let master = try await p.get("Profile", id)
            #expect(master["phone"] == "555" && master["salary"] == 10)
            let masterInclude = try await p.find("Entry", ["include": "profile"])
            #expect(masterInclude.results.first?["profile"]?["salary"] == 10)
            #expect(postId.count == 10)
        }
    }

    @Test("querying or sorting on a protected field is 119, also inside $or and sub-queries", arguments: Backend.all)
    func queryDenied(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("Card", ["name": "n", "pin": "1234"])
            _ = try await p.createId("Wallet", ["card": ["__type": "Pointer", "className": "Card", "objectId": .string(id)], "label": "1234"])
            try await p.setCLP("Card", ["find": ["*": true], "get": ["*": true], "protectedFields": ["*": ["pin"]]])
            let cases: [(String, JSONValue?, [String: String])] = [
                ("Card", ["pin": "1234"], [:]),
                ("Card", ["pin": ["$regex": "^1"]], [:]),
                ("Card", ["$or": [["name": "x"], ["pin": "1234"]]], [:]),
                ("Card", nil, ["order": "pin"]),
                ("Wallet", ["card": ["$inQuery": ["className": "Card", "where": ["pin": "1234"]]]], [:]),
                ("Wallet", ["label": ["$select": ["query": ["className": "Card", "where": [:]], "key": "pin"]]], [:]),
            ]
            for (className, w, params) in cases {
                let r = try await p.findAs(nil, className, where: w, params)
                #expect(r.code == 119, "\(String(describing: w)) \(params) -> \(r.json)")
                #expect(r["error"] == "Permission denied")
            }
            let master = try await p.find("Card", where: ["pin": "1234"])
            #expect(master.results.count == 1)
        }
    }

    @Test("_User: email is hidden from other users and anonymous clients, visible to the user and to master", arguments: Backend.all)
    func userEmail(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let r = try await p.request(.post, "/users", ["username": "erin", "password": "pw", "email": "erin@example.com"], master: false)
            let erinId = try #require(r["objectId"]?.stringValue)
            let erinToken = try #require(r["sessionToken"]?.stringValue)
            let frank = try await p.newUser("frank")
            _ = try await p.request(.put, "/users/\(erinId)", ["ACL": ["*": ["read": true], erinId: ["read": true, "write": true]]])
            let byFrank = try await p.call(frank.token, .get, "/users/\(erinId)")
            #expect(byFrank["username"] == "erin")
            #expect(byFrank["email"] == nil)
            let anonymousList = try await p.call(nil, .get, "/users")
            #expect(anonymousList.results.contains { $0["email"] != nil } == false)
            let byEmail = try await p.findAs(frank.token, "_User", where: ["email": "erin@example.com"])
            #expect(byEmail.code == 119)
            let selfQuery = try await p.findAs(erinToken, "_User", where: ["objectId": .string(erinId), "email": "erin@example.com"])
            #expect(selfQuery.results.count == 1)
            let bySelf = try await p.call(erinToken, .get, "/users/\(erinId)")
            #expect(bySelf["email"] == "erin@example.com")
            let byMaster = try await p.request(.get, "/users/\(erinId)")
            #expect(byMaster["email"] == "erin@example.com")
        }
    }

    @Test("a user cannot read or change another user's private object through any endpoint", arguments: Backend.all)
    func crossUser(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.newUser("alice")
            let bob = try await p.newUser("bob")
            let privateACL: JSONValue = .object([alice.id: ["read": true, "write": true]])
            let diary = try await p.createId("Diary", ["text": "secret", "ACL": privateACL])
            let note = try await p.createId(
                "Note", ["diary": ["__type": "Pointer", "className": "Diary", "objectId": .string(diary)], "label": "secret"])
            let shelf = try await p.createId("Shelf", ["name": "s"])
            _ = try await p.update(
                "Shelf", shelf,
                ["diaries": ["__op": "AddRelation", "objects": [["__type": "Pointer", "className": "Diary", "objectId": .string(diary)]]]])

            let get = try await p.call(bob.token, .get, "/classes/Diary/\(diary)")
            #expect(get.status == 404 && get.code == 101)
            let find = try await p.findAs(bob.token, "Diary")
            #expect(find.results.isEmpty)
            let count = try await p.findAs(bob.token, "Diary", ["count": "1", "limit": "0"])
            #expect(count["count"] == 0)
            let include = try await p.findAs(bob.token, "Note", ["include": "diary"])
            #expect(include.results.count == 1 && include.results.first?["diary"] == nil)
            let inQuery = try await p.findAs(bob.token, "Note", where: ["diary": ["$inQuery": ["className": "Diary", "where": ["text": "secret"]]]])
            #expect(inQuery.results.isEmpty)
            let selectWhere: JSONValue = ["label": ["$select": ["query": ["className": "Diary", "where": [:]], "key": "text"]]]
            let select = try await p.findAs(bob.token, "Note", where: selectWhere)
            #expect(select.status == 200 && select.results.isEmpty)
            let aliceSelect = try await p.findAs(alice.token, "Note", where: selectWhere)
            #expect(aliceSelect.results.count == 1)
            let related = try await p.findAs(
                bob.token, "Diary",
                where: [
                    "$relatedTo": ["object": ["__type": "Pointer", "className": "Shelf", "objectId": .string(shelf)], "key": "diaries"]
                ])
            #expect(related.results.isEmpty)
            let batch = try await p.call(
                bob.token, .post, "/batch",
                [
                    "requests": [
                        ["method": "GET", "path": .string("/parse/classes/Diary/\(diary)")],
                        ["method": "PUT", "path": .string("/parse/classes/Diary/\(diary)"), "body": ["text": "owned"]],
                        ["method": "DELETE", "path": .string("/parse/classes/Diary/\(diary)")],
                    ]
                ])
            #expect(batch.json.arrayValue?.compactMap { $0["error"]?["code"]?.integerValue } == [101, 101, 101])
            let update = try await p.call(bob.token, .put, "/classes/Diary/\(diary)", ["text": "owned", "ACL": ["*": ["read": true]]])
            #expect(update.code == 101)
            let delete = try await p.call(bob.token, .delete, "/classes/Diary/\(diary)")
            #expect(delete.code == 101)
            let stored = try await p.get("Diary", diary)
            #expect(stored["text"] == "secret")
            #expect(stored["ACL"] == privateACL)
            // Alice reads it everywhere.
            let aliceInclude = try await p.findAs(alice.token, "Note", ["include": "diary"])
            #expect(aliceInclude.results.first?["diary"]?["text"] == "secret")
            let aliceRelated = try await p.findAs(
                alice.token, "Diary",
                where: [
                    "$relatedTo": ["object": ["__type": "Pointer", "className": "Shelf", "objectId": .string(shelf)], "key": "diaries"]
                ])
            #expect(aliceRelated.results.count == 1)
            #expect(note.count == 10)
        }
    }
}
