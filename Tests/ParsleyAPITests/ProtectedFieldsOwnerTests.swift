import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

@testable import ParsleyServer

/// Parse Server 9's `protectedFieldsOwnerExempt`: whether a user reading their own `_User` sees its protected fields.
@Suite("Options: protectedFieldsOwnerExempt")
struct ProtectedFieldsOwnerTests {
    @Test("true (default): the user sees all their own fields; false: protectedFields apply to their own _User too", arguments: Backend.all)
    func ownUser(_ backend: Backend) async throws {
        for exempt in [true, false] {
            let options = TestServer.options {
                $0.protectedFieldsOwnerExempt = exempt
                // As the settings reader makes {"_User": {"*": ["phone"]}} with the option false: no default email.
                $0.protectedFields = ["_User": ["*": exempt ? ["phone", "email"] : ["phone"]]]
            }
            try await TestServer.with(backend: backend, options) { p in
                let r = try await p.request(
                    .post, "/users", ["username": "ann", "password": "pw-ann", "email": "ann@example.com", "phone": "555"], master: false)
                let ann = try #require(r["objectId"]?.stringValue)
                let token = try #require(r["sessionToken"]?.stringValue)
                let me = try await p.call(token, .get, "/users/me")
                #expect(me["username"] == "ann" && me["email"] == "ann@example.com", "\(me.json)")
                #expect(me["phone"] == (exempt ? "555" : nil), "\(me.json)")
                let get = try await p.call(token, .get, "/users/\(ann)")
                #expect(get["phone"] == (exempt ? "555" : nil), "\(get.json)")
                let found = try await p.findAs(token, "_User", where: ["username": "ann"])
                #expect(found.results.first?["phone"] == (exempt ? "555" : nil))
                #expect(try await p.request(.get, "/users/\(ann)")["phone"] == "555")
            }
        }
    }

    @Test("protectedFieldsSaveResponseExempt false: save answers leave protected fields out; true (default) keeps them", arguments: Backend.all)
    func saveResponses(_ backend: Backend) async throws {
        for exempt in [true, false] {
            let options = TestServer.options {
                $0.protectedFieldsSaveResponseExempt = exempt
                $0.allowClientClassCreation = true
                $0.protectedFields = ["Card": ["*": ["score"]], "_User": ["*": ["email"]]]
            }
            try await TestServer.with(backend: backend, options) { p in
                // An update answers the values its operations produced (an Increment's total): a protected one only when exempt.
                let created = try await p.create("Card", ["score": 1, "name": "n", "ACL": ["*": ["read": true, "write": true]]], master: false)
                #expect(created.status == 201)
                let id = try #require(created["objectId"]?.stringValue)
                let updated = try await p.update("Card", id, ["score": ["__op": "Increment", "amount": 2], "name": "m"], master: false)
                #expect(updated.status == 200)
                #expect(updated["score"] == (exempt ? 3 : nil), "\(updated.json)")
                #expect(updated["updatedAt"] != nil)
                // The master key's answers keep them.
                #expect(try await p.update("Card", id, ["score": ["__op": "Increment", "amount": 1]])["score"] == 4)
            }
        }
    }

    @Test("false: an entity protectedFields sets itself gets no default email; other entities keep it")
    func settings() throws {
        let file: [String: JSONValue] = ["protectedFields": ["_User": ["*": ["phone"]]], "protectedFieldsOwnerExempt": false]
        let values = OptionValues(environment: [:], file: file)
        #expect(try ServerSettings.protectedFields(values, ownerExempt: false) == ["_User": ["*": ["phone"]]])
        #expect(try ServerSettings.protectedFields(values, ownerExempt: true) == ["_User": ["*": ["phone", "email"]]])
        #expect(try ServerSettings.protectedFields(OptionValues(environment: [:]), ownerExempt: false) == ["_User": ["*": ["email"]]])
    }
}
