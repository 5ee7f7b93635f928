import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// The `ACL` key of class-level permissions (Parse Server 8+): the ACL of objects created without one, with
/// `currentUser` standing for the creating user, validated as Parse Server validates it.
@Suite("Default ACL")
struct DefaultACLTests {
    static let open: [String: JSONValue] = [
        "find": ["*": true], "count": ["*": true], "get": ["*": true], "create": ["*": true], "update": ["*": true],
        "delete": ["*": true], "addField": ["*": true],
    ]
    static let defaultACL: JSONValue = ["*": ["read": true], "currentUser": ["read": true, "write": true]]

    @Test("objects created without an ACL get the class's default, currentUser being the creator", arguments: Backend.all)
    func appliedOnCreate(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Note", ["text": "before"])
            var clp = Self.open
            clp["ACL"] = Self.defaultACL
            try await p.setCLP("Note", .object(clp))
            let schema = try await p.request(.get, "/schemas/Note")
            #expect(schema["classLevelPermissions"]?["ACL"] == Self.defaultACL)

            let (annId, annToken) = try await p.signUp("ann")
            let (_, bobToken) = try await p.signUp("bob")
            let made = try await p.asUser(annToken, .post, "/classes/Note", ["text": "mine"])
            #expect(made.status == 201)
            let id = try #require(made["objectId"]?.stringValue)
            let stored = try await p.get("Note", id)
            #expect(stored["ACL"] == ["*": ["read": true], annId: ["read": true, "write": true]])
            // Everyone reads it; only ann writes it.
            #expect(try await p.asUser(bobToken, .get, "/classes/Note/\(id)").status == 200)
            #expect(try await p.asUser(bobToken, .put, "/classes/Note/\(id)", ["text": "bob's"]).code == 101)
            #expect(try await p.asUser(annToken, .put, "/classes/Note/\(id)", ["text": "ann's"]).status == 200)

            // An ACL given wins; the master key (no user) gets the default without currentUser; updates keep theirs.
            let given = try await p.asUser(annToken, .post, "/classes/Note", ["text": "private", "ACL": [:]])
            let givenId = try #require(given["objectId"]?.stringValue)
            #expect(try await p.get("Note", givenId)["ACL"] == [:])
            let byMaster = try await p.createId("Note", ["text": "master"])
            #expect(try await p.get("Note", byMaster)["ACL"] == ["*": ["read": true]])
            let anonymous = try await p.create("Note", ["text": "anonymous"], master: false)
            let anonymousId = try #require(anonymous["objectId"]?.stringValue)
            #expect(try await p.get("Note", anonymousId)["ACL"] == ["*": ["read": true]])
        }
    }

    @Test("a bad ACL key in class-level permissions is 107 with Parse Server's messages", arguments: Backend.all)
    func validated(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Note", ["text": "a"])
            let cases: [(JSONValue, String)] = [
                (true, "'true' is not a valid value for class level permissions ACL - must be an object"),
                (["*": true], "'true' is not a valid value for class level permissions acl"),
                (["*": ["read": true, "readd": true]], "'readd' is not a valid key for class level permissions acl"),
                (["*": ["read": "yes"]], "'yes' is not a valid value for class level permissions acl"),
                (["bad key!": ["read": true]], "'bad key!' is not a valid key for class level permissions"),
            ]
            for (acl, message) in cases {
                let r = try await p.request(.put, "/schemas/Note", ["classLevelPermissions": ["ACL": acl]])
                #expect(r.status == 400)
                #expect(r.json == ["code": 107, "error": .string(message)], "\(acl)")
            }
            let refused = try await p.request(.put, "/schemas/Note", ["classLevelPermissions": ["find": ["*": false]]])
            #expect(refused["error"] == "'false' is not a valid value for class level permissions acl find:*")
        }
    }
}
