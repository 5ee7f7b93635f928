import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

@testable import ParsleyServer

/// Parse Server's server-wide `protectedFields` (and the deprecated `userSensitiveFields`), through the real server:
/// merged with each class's own protected fields and with Parse Server's default (`_User`'s `email`), and applied on
/// every read path: get, find, include, queries on the field, LiveQuery.
@Suite("Options: protectedFields, userSensitiveFields")
struct ProtectedFieldsOptionTests {
    typealias T = LiveQueryTests

    static func options() -> ParseServerOptions {
        TestServer.liveOptions(["Profile", "Warmup"]) {
            // As the settings reader makes them from {"Profile": {"*": ["secret", "salary"], "role:Staff": ["secret"]}}
            // and userSensitiveFields ["phone"].
            $0.protectedFields = ["Profile": ["*": ["secret", "salary"], "role:Staff": ["secret"]], "_User": ["*": ["phone", "email"]]]
        }
    }

    @Test(
        "server-wide protected fields are hidden on get, find and include, merged with the class's own; the user and master see them",
        arguments: Backend.all)
    func hiddenOnEveryRead(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            let r = try await p.request(
                .post, "/users", ["username": "ann", "password": "pw-ann", "email": "ann@example.com", "phone": "555"], master: false)
            let ann = try #require(r["objectId"]?.stringValue)
            let annToken = try #require(r["sessionToken"]?.stringValue)
            _ = try await p.request(.put, "/users/\(ann)", ["ACL": ["*": ["read": true], ann: ["read": true, "write": true]]])
            let bob = try await p.newUser("bob")
            let staff = try await p.newUser("staff")
            _ = try await p.createRole("Staff", users: [staff.id])
            let profile = try await p.createId("Profile", ["name": "n", "secret": "s", "salary": 10, "nick": "k"])
            _ = try await p.createId("Entry", ["profile": ["__type": "Pointer", "className": "Profile", "objectId": .string(profile)]])
            // The class's own protected fields add to the server's.
            try await p.setCLP("Profile", ["find": ["*": true], "get": ["*": true], "protectedFields": ["*": ["nick"]]])

            // _User: userSensitiveFields' phone joins email.
            let byBob = try await p.call(bob.token, .get, "/users/\(ann)")
            #expect(byBob["username"] == "ann" && byBob["phone"] == nil && byBob["email"] == nil, "\(byBob.json)")
            let found = try await p.findAs(bob.token, "_User", where: ["username": "ann"])
            #expect(found.results.first?["phone"] == nil && found.results.first?["username"] == "ann")
            let me = try await p.call(annToken, .get, "/users/me")
            #expect(me["phone"] == "555" && me["email"] == "ann@example.com")
            #expect(try await p.request(.get, "/users/\(ann)")["phone"] == "555")

            // Profile: the server's secret and salary, the class's nick. A Staff member gets what every entry that applies
            // to it hides (Parse Server intersects them): `*` hides secret, salary, nick; role:Staff only secret.
            let get = try await p.call(bob.token, .get, "/classes/Profile/\(profile)")
            #expect(get["name"] == "n" && get["secret"] == nil && get["nick"] == nil && get["salary"] == nil, "\(get.json)")
            let staffGet = try await p.call(staff.token, .get, "/classes/Profile/\(profile)")
            #expect(staffGet["secret"] == nil && staffGet["nick"] == "k" && staffGet["salary"] == 10, "\(staffGet.json)")
            let anonymous = try await p.findAs(nil, "Profile")
            #expect(anonymous.results.first?["secret"] == nil && anonymous.results.first?["name"] == "n")
            let keys = try await p.findAs(bob.token, "Profile", ["keys": "secret,name"])
            #expect(keys.results.first?["secret"] == nil && keys.results.first?["name"] == "n")
            let included = try await p.findAs(bob.token, "Entry", ["include": "profile"])
            let inner = try #require(included.results.first?["profile"])
            #expect(inner["name"] == "n" && inner["secret"] == nil && inner["nick"] == nil)
            // Querying or sorting on it is refused as for a class's own protected fields.
            let query = try await p.findAs(bob.token, "Profile", where: ["secret": "s"])
            #expect(query.code == 119, "\(query.json)")
            #expect(query["error"] == "Permission denied")
            let phoneQuery = try await p.findAs(bob.token, "_User", where: ["phone": "555"])
            #expect(phoneQuery.code == 119, "\(phoneQuery.json)")
            // The master key sees everything.
            let master = try await p.get("Profile", profile)
            #expect(master["secret"] == "s" && master["nick"] == "k" && master["salary"] == 10)
        }
    }

    @Test("server-wide protected fields stay out of LiveQuery events and subscriptions", arguments: Backend.all)
    func liveQuery(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            let bob = try await p.newUser("bob")
            _ = try await p.createId("Profile", ["name": "first", "secret": "s0"])
            let bobLQ = try await T.client(p, token: bob.token)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            #expect(try await bobLQ.subscribe(1, "Profile", keys: ["secret", "name"])["op"] == "subscribed")
            #expect(try await bobLQ.subscribe(2, "Profile", where: ["secret": "s"])["code"] == 119)
            #expect(try await master.subscribe(1, "Profile")["op"] == "subscribed")
            _ = try await p.createId("Profile", ["name": "n", "secret": "s"])
            let event = try await bobLQ.expect("create")
            #expect(event["object"]?["name"] == "n")
            #expect(event["object"]?["secret"] == nil)
            #expect(try await master.expect("create")["object"]?["secret"] == "s")
            for lq in [bobLQ, master] { await lq.close() }
        }
    }
}

@Suite("Options: protectedFields settings")
struct ProtectedFieldsSettingsTests {
    @Test("the config's protectedFields, userSensitiveFields and Parse Server's default merge as Parse Server merges them")
    func merge() throws {
        let file: [String: JSONValue] = [
            "protectedFields": ["Profile": ["*": ["secret"]], "_User": ["authenticated": ["phone"]]],
            "userSensitiveFields": ["ssn"],
        ]
        let merged = try ServerSettings.protectedFields(OptionValues(environment: [:], file: file))
        #expect(merged["Profile"] == ["*": ["secret"]])
        #expect(merged["_User"] == ["authenticated": ["phone"], "*": ["ssn", "email"]])
        // Without the options: Parse Server's default only; a list in the variable works too.
        #expect(try ServerSettings.protectedFields(OptionValues(environment: [:])) == ["_User": ["*": ["email"]]])
        let env = OptionValues(environment: ["PARSE_SERVER_USER_SENSITIVE_FIELDS": "phone, ssn"])
        #expect(try ServerSettings.protectedFields(env) == ["_User": ["*": ["email", "phone", "ssn"]]])
        #expect(throws: ServerSettings.Invalid.self) {
            try ServerSettings.protectedFields(OptionValues(environment: ["PARSE_SERVER_PROTECTED_FIELDS": #"{"Profile": ["secret"]}"#]))
        }
    }
}
