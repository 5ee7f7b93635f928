import ParsleyCore
import Testing

@Suite("Class-level permissions")
struct ClassLevelPermissionsTests {
    let fields: [String: FieldType] = [
        "owner": .pointer("_User"), "editors": .array, "post": .pointer("Post"), "secret": .string, "title": .string,
    ]

    func code(_ json: JSONValue) -> Int? {
        do {
            _ = try ClassLevelPermissions(validating: json, fields: fields)
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    func message(_ json: JSONValue) -> String? {
        do {
            _ = try ClassLevelPermissions(validating: json, fields: fields)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("valid CLP JSON parses; omitted operations are closed")
    func parse() throws {
        let clp = try ClassLevelPermissions(
            validating: [
                "find": ["*": true], "get": ["role:Admin": true, "abc123": true], "count": ["requiresAuthentication": true],
                "update": ["pointerFields": ["owner"]], "readUserFields": ["editors"], "protectedFields": ["*": ["secret"]],
            ], fields: fields)
        #expect(clp.rules[.find] == .everyone)
        #expect(clp.rules[.get]?.grants == ["role:Admin", "abc123"])
        #expect(clp.rules[.create] == .nobody)
        #expect(clp.rules[.update]?.pointerFields == ["owner"])
        #expect(clp.readUserFields == ["editors"])
        #expect(clp.json["create"] == [:])
        #expect(clp.json["find"] == ["*": true])
        // Stored form reads back the same.
        #expect(ClassLevelPermissions(stored: clp.json) == clp)
        // Nothing stored: everything open.
        #expect(ClassLevelPermissions(stored: nil) == .open)
    }

    @Test("bad CLP JSON is 107 with Parse Server's messages")
    func invalid() {
        #expect(code("nope") == 107)
        #expect(message(["fnd": ["*": true]]) == "fnd is not a valid operation for class level permissions")
        #expect(message(["find": ["*": false]]) == "'false' is not a valid value for class level permissions acl find:*")
        #expect(message(["find": ["*": 1]]) == "'1' is not a valid value for class level permissions acl find:*")
        #expect(message(["find": ["not-an-id!": true]]) == "'not-an-id!' is not a valid key for class level permissions")
        #expect(code(["find": true]) == 107)
        #expect(code(["readUserFields": "owner"]) == 107)
        #expect(message(["readUserFields": ["title"]]) == "'title' is not a valid column for class level pointer permissions readUserFields")
        #expect(code(["update": ["pointerFields": ["post"]]]) == 107)
        #expect(code(["update": ["pointerFields": "owner"]]) == 107)
        #expect(message(["protectedFields": ["*": ["nothere"]]]) == "Field 'nothere' in protectedFields:* does not exist")
        #expect(message(["protectedFields": ["*": ["createdAt"]]]) == "Default field 'createdAt' can not be protected")
        #expect(code(["protectedFields": ["bad key!": ["secret"]]]) == 107)
        #expect(code(["protectedFields": ["*": "secret"]]) == 107)
    }

    @Test("decisions follow Parse Server's order")
    func decide() throws {
        let clp = try ClassLevelPermissions(
            validating: [
                "find": ["role:Reader": true], "get": ["requiresAuthentication": true], "count": ["u1": true],
                "create": ["pointerFields": ["owner"]], "update": ["pointerFields": ["owner"]], "delete": [:],
                "addField": ["pointerFields": ["owner"]],
            ], fields: fields)
        #expect(clp.decide(.find, className: "C", userId: "u2", roles: ["Reader"]) == .allowed)
        let denied = clp.decide(.find, className: "C", userId: "u2", roles: [])
        #expect(denied == .denied(ParseError(.operationForbidden, "Permission denied for action find on class C.")))
        #expect(
            clp.decide(.get, className: "C", userId: nil, roles: [])
                == .denied(ParseError(.objectNotFound, "Permission denied, user needs to be authenticated.")))
        #expect(clp.decide(.get, className: "C", userId: "u9", roles: []) == .allowed)
        #expect(clp.decide(.count, className: "C", userId: "u1", roles: []) == .allowed)
        // Pointer permissions never allow a create.
        if case .denied(let e) = clp.decide(.create, className: "C", userId: "u1", roles: []) {
            #expect(e.code == .operationForbidden)
        } else {
            Issue.record("create should be denied")
        }
        #expect(clp.decide(.update, className: "C", userId: "u1", roles: []) == .pointerRestricted(["owner"]))
        #expect(clp.decide(.addField, className: "C", userId: "u1", roles: [], isUpdate: true) == .pointerRestricted(["owner"]))
        if case .denied = clp.decide(.addField, className: "C", userId: "u1", roles: [], isUpdate: false) {
        } else {
            Issue.record("addField on create should be denied")
        }
        if case .denied = clp.decide(.delete, className: "C", userId: "u1", roles: ["Reader"]) {} else { Issue.record("delete is closed") }
        // readUserFields restrict every read that no key grants.
        let users = try ClassLevelPermissions(validating: ["find": [:], "get": [:], "readUserFields": ["owner"]], fields: fields)
        #expect(users.decide(.find, className: "C", userId: "u1", roles: []) == .pointerRestricted(["owner"]))
        #expect(ClassLevelPermissions.open.decide(.delete, className: "C", userId: nil, roles: []) == .allowed)
    }

    @Test("protected fields intersect every applicable entry")
    func protectedFields() throws {
        let clp = try ClassLevelPermissions(
            validating: [
                "protectedFields": [
                    "*": ["secret", "title"], "authenticated": ["secret", "title"], "role:Staff": ["secret"], "u1": [],
                    "userField:owner": [],
                ]
            ], fields: fields)
        #expect(clp.protectedFields(userId: nil, roles: []) == ["secret", "title"])
        #expect(clp.protectedFields(userId: "u2", roles: []) == ["secret", "title"])
        #expect(clp.protectedFields(userId: "u2", roles: ["Staff"]) == ["secret"])
        #expect(clp.protectedFields(userId: "u1", roles: []) == [])
        // Roles only count for logged-in users.
        #expect(clp.protectedFields(userId: nil, roles: ["Staff"]) == ["secret", "title"])
        #expect(clp.userFieldRules.map(\.field) == ["owner"])
        var merged = ClassLevelPermissions.open
        merged.merge(protectedFields: ["*": ["email"]])
        #expect(merged.protectedFields(userId: "x", roles: []) == ["email"])
    }
}
