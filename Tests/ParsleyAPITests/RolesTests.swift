import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

extension ParseClient {
    /// Signs a new user up; returns their id and session token.
    func newUser(_ username: String) async throws -> (id: String, token: String) {
        let r = try await request(.post, "/users", ["username": .string(username), "password": .string("pw-\(username)")], master: false)
        guard r.status == 201, let id = r["objectId"]?.stringValue, let token = r["sessionToken"]?.stringValue else {
            throw Failure("sign-up failed: \(r.status) \(r.json)")
        }
        return (id, token)
    }

    /// A request as the holder of `token` (nil: an anonymous client).
    func call(_ token: String?, _ method: HTTPRequest.Method, _ path: String, _ body: JSONValue? = nil) async throws -> Reply {
        try await request(method, path, body, master: false, extra: token.map { ["X-Parse-Session-Token": $0] } ?? [:])
    }

    /// A find as the holder of `token` (nil: anonymous).
    func findAs(_ token: String?, _ className: String, where w: JSONValue? = nil, _ params: [String: String] = [:]) async throws -> Reply {
        var items: [String] = []
        if let w { items.append("where=" + Self.encode(JSONWriter.string(w))) }
        for (k, v) in params.sorted(by: { $0.key < $1.key }) { items.append("\(k)=\(Self.encode(v))") }
        return try await call(token, .get, "/classes/\(className)" + (items.isEmpty ? "" : "?" + items.joined(separator: "&")))
    }

    /// Creates a role with the master key; returns its id.
    func createRole(_ name: String, users: [String] = [], roles: [String] = [], acl: JSONValue = ["*": ["read": true]]) async throws -> String {
        var body: [String: JSONValue] = ["name": .string(name), "ACL": acl]
        if !users.isEmpty { body["users"] = ["__op": "AddRelation", "objects": .array(users.map { userPointer($0) })] }
        if !roles.isEmpty { body["roles"] = ["__op": "AddRelation", "objects": .array(roles.map { rolePointer($0) })] }
        let r = try await request(.post, "/roles", .object(body))
        guard r.status == 201, let id = r["objectId"]?.stringValue else { throw Failure("role create failed: \(r.status) \(r.json)") }
        return id
    }

    func userPointer(_ id: String) -> JSONValue { ["__type": "Pointer", "className": "_User", "objectId": .string(id)] }
    func rolePointer(_ id: String) -> JSONValue { ["__type": "Pointer", "className": "_Role", "objectId": .string(id)] }

    /// Role names (sorted) stored with the master key.
    func roleNames() async throws -> [String] {
        let r = try await request(.get, "/roles")
        return r.results.compactMap { $0["name"]?.stringValue }.sorted()
    }
}

@Suite("Roles")
struct RolesTests {
    @Test("create, read, list and delete roles through /roles and /classes/_Role", arguments: Backend.all)
    func crud(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let r = try await p.request(.post, "/roles", ["name": "Moderators", "ACL": ["*": ["read": true]]])
            #expect(r.status == 201)
            let id = try #require(r["objectId"]?.stringValue)
            #expect(r.headers[.location]?.hasSuffix("/parse/roles/\(id)") == true)
            let got = try await p.request(.get, "/roles/\(id)")
            #expect(got["name"] == "Moderators")
            #expect(got["users"] == ["__type": "Relation", "className": "_User"])
            #expect(got["roles"] == ["__type": "Relation", "className": "_Role"])
            let viaClasses = try await p.request(.get, "/classes/_Role/\(id)")
            #expect(viaClasses["name"] == "Moderators")
            let second = try await p.request(.post, "/classes/_Role", ["name": "Admins", "ACL": [:]])
            #expect(second.status == 201)
            #expect(second.headers[.location]?.contains("/classes/_Role/") == true)
            let names = try await p.roleNames()
            #expect(names == ["Admins", "Moderators"])
            // A client sees only the publicly readable role.
            let anonymous = try await p.call(nil, .get, "/roles")
            #expect(anonymous.results.compactMap { $0["name"]?.stringValue } == ["Moderators"])
            let deleted = try await p.request(.delete, "/roles/\(id)")
            #expect(deleted.status == 200)
            let after = try await p.roleNames()
            #expect(after == ["Admins"])
        }
    }

    @Test("name and ACL are required, the name pattern is enforced, nothing is stored on failure", arguments: Backend.all)
    func validation(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let cases: [(String, JSONValue, Int, String)] = [
                ("/roles", ["ACL": [:]], 111, "name is required."),
                ("/classes/_Role", ["ACL": [:]], 111, "name is required."),
                ("/roles", ["name": "Editors"], 111, "ACL is required."),
                ("/roles", ["name": .null, "ACL": [:]], 111, "name is required."),
                ("/roles", ["name": "bad/name", "ACL": [:]], 139, "A role's name can only contain alphanumeric characters, _, -, and spaces."),
                ("/classes/_Role", ["name": "", "ACL": [:]], 139, "A role's name can only contain alphanumeric characters, _, -, and spaces."),
                ("/roles", ["name": 12, "ACL": [:]], 139, "A role's name must be a String."),
            ]
            for (path, body, code, message) in cases {
                let r = try await p.request(.post, path, body)
                #expect(r.status == 400, "\(body)")
                #expect(r.code == code, "\(body) -> \(r.json)")
                #expect(r["error"]?.stringValue == message)
            }
            let ok = try await p.request(.post, "/roles", ["name": "Good-name_1 x", "ACL": [:]])
            #expect(ok.status == 201)
            let names = try await p.roleNames()
            #expect(names == ["Good-name_1 x"])
        }
    }

    @Test("names are unique (137) through every path, including batch", arguments: Backend.all)
    func unique(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createRole("Staff")
            for path in ["/roles", "/classes/_Role"] {
                let r = try await p.request(.post, path, ["name": "Staff", "ACL": [:]])
                #expect(r.code == 137, "\(r.json)")
                #expect(r["error"] == "A duplicate value for a field with unique values was provided")
            }
            let batch = try await p.request(
                .post, "/batch",
                [
                    "requests": [["method": "POST", "path": "/parse/roles", "body": ["name": "Staff", "ACL": [:]]]]
                ])
            #expect(batch.json.arrayValue?.first?["error"]?["code"] == 137)
            let names = try await p.roleNames()
            #expect(names == ["Staff"])
        }
    }

    @Test("a role's name cannot change (136) and cannot be removed (111); other fields can", arguments: Backend.all)
    func immutableName(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createRole("Writers")
            let renamed = try await p.request(.put, "/roles/\(id)", ["name": "Readers"])
            #expect(renamed.code == 136)
            let viaClasses = try await p.request(.put, "/classes/_Role/\(id)", ["name": "Readers"])
            #expect(viaClasses.code == 136)
            let removed = try await p.request(.put, "/roles/\(id)", ["name": ["__op": "Delete"]])
            #expect(removed.code == 111)
            let aclRemoved = try await p.request(.put, "/roles/\(id)", ["ACL": .null])
            #expect(aclRemoved.code == 111)
            let same = try await p.request(.put, "/roles/\(id)", ["name": "Writers", "note": "x"])
            #expect(same.status == 200)
            let got = try await p.request(.get, "/roles/\(id)")
            #expect(got["name"] == "Writers")
            #expect(got["note"] == "x")
            #expect(got["ACL"] == ["*": ["read": true]])
        }
    }

    @Test("inheritance: members of a role listed in P.roles get P, however deep; cycles terminate", arguments: Backend.all)
    func inheritance(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.newUser("alice")
            let bob = try await p.newUser("bob")
            // alice is in Junior; Junior is listed in Senior.roles; Senior in Lead.roles.
            let junior = try await p.createRole("Junior", users: [alice.id])
            let senior = try await p.createRole("Senior", roles: [junior])
            _ = try await p.createRole("Lead", roles: [senior])
            let forLead = try await p.createId("Doc", ["title": "lead", "ACL": ["role:Lead": ["read": true, "write": true]]])
            let forSenior = try await p.createId("Doc", ["title": "senior", "ACL": ["role:Senior": ["read": true]]])
            _ = try await p.createId("Doc", ["title": "nobody", "ACL": [:]])
            let aliceSees = try await p.findAs(alice.token, "Doc", ["order": "title"])
            #expect(aliceSees.results.compactMap { $0["title"]?.stringValue } == ["lead", "senior"])
            let bobSees = try await p.findAs(bob.token, "Doc")
            #expect(bobSees.results.isEmpty)
            let bobGet = try await p.call(bob.token, .get, "/classes/Doc/\(forLead)")
            #expect(bobGet.code == 101)
            let aliceWrite = try await p.call(alice.token, .put, "/classes/Doc/\(forLead)", ["title": "lead2"])
            #expect(aliceWrite.status == 200)
            let bobWrite = try await p.call(bob.token, .put, "/classes/Doc/\(forSenior)", ["title": "hacked"])
            #expect(bobWrite.code == 101)
            let unchanged = try await p.get("Doc", forSenior)
            #expect(unchanged["title"] == "senior")

            // Membership changes apply at once (the cache is cleared on every role write).
            let removed = try await p.request(.put, "/roles/\(junior)", ["users": ["__op": "RemoveRelation", "objects": [p.userPointer(alice.id)]]])
            #expect(removed.status == 200)
            let afterRemoval = try await p.findAs(alice.token, "Doc")
            #expect(afterRemoval.results.isEmpty)
            let added = try await p.request(.put, "/roles/\(senior)", ["users": ["__op": "AddRelation", "objects": [p.userPointer(bob.id)]]])
            #expect(added.status == 200)
            let bobNow = try await p.findAs(bob.token, "Doc", ["order": "title"])
            #expect(bobNow.results.compactMap { $0["title"]?.stringValue } == ["lead2", "senior"])
        }
    }

    @Test("while no role has a member nobody has a role; the first member, added by any path, has it at once", arguments: Backend.all)
    func firstMember(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.newUser("alice")
            let bob = try await p.newUser("bob")
            let staff = try await p.createRole("Staff")
            let doc = try await p.createId("Doc", ["title": "staff only", "ACL": ["role:Staff": ["read": true]]])
            // Both users resolved while no role has a member (cached for every user).
            #expect(try await p.call(alice.token, .get, "/classes/Doc/\(doc)").code == 101)
            #expect(try await p.call(bob.token, .get, "/classes/Doc/\(doc)").code == 101)
            // A member added through /classes/_Role in a batch: alice reads at once, bob still not.
            let batch = try await p.request(
                .post, "/batch",
                [
                    "requests": [
                        [
                            "method": "PUT", "path": .string("/parse/classes/_Role/\(staff)"),
                            "body": ["users": ["__op": "AddRelation", "objects": [p.userPointer(alice.id)]]],
                        ]
                    ]
                ])
            #expect(batch.status == 200)
            #expect(try await p.call(alice.token, .get, "/classes/Doc/\(doc)").status == 200)
            #expect(try await p.call(bob.token, .get, "/classes/Doc/\(doc)").code == 101)
            // The last member removed: nobody again.
            let removed = try await p.request(.put, "/roles/\(staff)", ["users": ["__op": "RemoveRelation", "objects": [p.userPointer(alice.id)]]])
            #expect(removed.status == 200)
            #expect(try await p.call(alice.token, .get, "/classes/Doc/\(doc)").code == 101)
            // A role created with its first member.
            _ = try await p.createRole("Readers", users: [bob.id])
            let forReaders = try await p.createId("Doc", ["title": "readers", "ACL": ["role:Readers": ["read": true]]])
            #expect(try await p.call(bob.token, .get, "/classes/Doc/\(forReaders)").status == 200)
            #expect(try await p.call(alice.token, .get, "/classes/Doc/\(forReaders)").code == 101)
        }
    }

    @Test("cyclic role graphs resolve without hanging", arguments: Backend.all)
    func cycles(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let carol = try await p.newUser("carol")
            let a = try await p.createRole("A", users: [carol.id])
            let b = try await p.createRole("B", roles: [a])
            let c = try await p.createRole("C", roles: [b])
            // Close the cycle: A.roles holds C.
            let closed = try await p.request(.put, "/roles/\(a)", ["roles": ["__op": "AddRelation", "objects": [p.rolePointer(c)]]])
            #expect(closed.status == 200)
            // Self-reference too.
            _ = try await p.request(.put, "/roles/\(b)", ["roles": ["__op": "AddRelation", "objects": [p.rolePointer(b)]]])
            for role in ["A", "B", "C"] {
                _ = try await p.createId("Note", ["role": .string(role), "ACL": .object(["role:\(role)": ["read": true]])])
            }
            let seen = try await p.findAs(carol.token, "Note", ["order": "role"])
            #expect(seen.results.compactMap { $0["role"]?.stringValue } == ["A", "B", "C"])
        }
    }

    @Test("role writes obey the role's ACL: a user cannot add themselves to a role they cannot write", arguments: Backend.all)
    func roleACL(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let mallory = try await p.newUser("mallory")
            let admin = try await p.newUser("admin")
            let admins = try await p.createRole("Admins", users: [admin.id], acl: ["*": ["read": true], "role:Admins": ["write": true]])
            let secret = try await p.createId("Vault", ["gold": 100, "ACL": ["role:Admins": ["read": true, "write": true]]])
            let join = try await p.call(
                mallory.token, .put, "/roles/\(admins)", ["users": ["__op": "AddRelation", "objects": [p.userPointer(mallory.id)]]])
            #expect(join.code == 101)
            let joinClasses = try await p.call(
                mallory.token, .put, "/classes/_Role/\(admins)", ["users": ["__op": "AddRelation", "objects": [p.userPointer(mallory.id)]]])
            #expect(joinClasses.code == 101)
            // A rename attempt by a non-writer is 101 too (the immutability rule does not leak the role).
            let rename = try await p.call(mallory.token, .put, "/roles/\(admins)", ["name": "Mine"])
            #expect(rename.code == 101)
            let del = try await p.call(mallory.token, .delete, "/roles/\(admins)")
            #expect(del.code == 101)
            let vault = try await p.call(mallory.token, .get, "/classes/Vault/\(secret)")
            #expect(vault.code == 101)
            let members = try await p.request(
                .get,
                "/users?where="
                    + ParseClient.encode(
                        JSONWriter.string([
                            "$relatedTo": ["object": p.rolePointer(admins), "key": "users"]
                        ])))
            #expect(members.results.compactMap { $0["objectId"]?.stringValue } == [admin.id])
            // The admin (through the role) may add members, and the new member reads the vault.
            let adminAdds = try await p.call(
                admin.token, .put, "/roles/\(admins)", ["users": ["__op": "AddRelation", "objects": [p.userPointer(mallory.id)]]])
            #expect(adminAdds.status == 200)
            let nowVisible = try await p.call(mallory.token, .get, "/classes/Vault/\(secret)")
            #expect(nowVisible["gold"] == 100)
        }
    }

    @Test("a client may create a role when the _Role CLP allows it, not when it forbids it", arguments: Backend.all)
    func clientCreate(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let dave = try await p.newUser("dave")
            let r = try await p.call(dave.token, .post, "/roles", ["name": "Club", "ACL": .object([dave.id: ["read": true, "write": true]])])
            #expect(r.status == 201)
            let locked = try await p.request(.put, "/schemas/_Role", ["classLevelPermissions": ["find": ["*": true], "get": ["*": true]]])
            #expect(locked.status == 200)
            let denied = try await p.call(dave.token, .post, "/roles", ["name": "Club2", "ACL": [:]])
            #expect(denied.code == 119)
            #expect(denied["error"] == "Permission denied")
            let names = try await p.roleNames()
            #expect(names == ["Club"])
        }
    }

    @Test("CLP keys naming a parent role admit members of child roles", arguments: Backend.all)
    func inheritedCLP(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.newUser("alice")
            let bob = try await p.newUser("bob")
            let child = try await p.createRole("Child", users: [alice.id])
            _ = try await p.createRole("Parent", roles: [child])
            _ = try await p.createId("Report", ["n": 1])
            try await p.setCLP("Report", ["find": ["role:Parent": true], "get": ["role:Parent": true], "delete": ["role:Parent": true]])
            let aliceFinds = try await p.findAs(alice.token, "Report")
            #expect(aliceFinds.results.count == 1)
            let bobFinds = try await p.findAs(bob.token, "Report")
            #expect(bobFinds.code == 119)
            #expect(bobFinds["error"] == "Permission denied")
            let id = try #require(aliceFinds.results.first?["objectId"]?.stringValue)
            let bobDeletes = try await p.call(bob.token, .delete, "/classes/Report/\(id)")
            #expect(bobDeletes.code == 119)
            let stillThere = try await p.total("Report")
            #expect(stillThere == 1)
            let aliceDeletes = try await p.call(alice.token, .delete, "/classes/Report/\(id)")
            #expect(aliceDeletes.status == 200)
        }
    }

    @Test("a transactional batch of role writes stores all or nothing", arguments: Backend.all)
    func transactionalBatch(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createRole("Existing")
            let failing = try await p.request(
                .post, "/batch",
                [
                    "transaction": true,
                    "requests": [
                        ["method": "POST", "path": "/parse/roles", "body": ["name": "New1", "ACL": [:]]],
                        ["method": "POST", "path": "/parse/classes/_Role", "body": ["name": "Existing", "ACL": [:]]],
                    ],
                ])
            #expect(failing.code == 137)
            let afterFailure = try await p.roleNames()
            #expect(afterFailure == ["Existing"])
            let ok = try await p.request(
                .post, "/batch",
                [
                    "transaction": true,
                    "requests": [
                        ["method": "POST", "path": "/parse/roles", "body": ["name": "New1", "ACL": [:]]],
                        ["method": "POST", "path": "/parse/roles", "body": ["name": "New2", "ACL": [:]]],
                    ],
                ])
            #expect(ok.status == 200)
            let afterSuccess = try await p.roleNames()
            #expect(afterSuccess == ["Existing", "New1", "New2"])
        }
    }
}
