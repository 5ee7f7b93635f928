import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Parse Server's `allowCustomObjectId` and `objectIdSize`, through the real server.
@Suite("Options: allowCustomObjectId, objectIdSize")
struct ObjectIdOptionsTests {
    @Test(
        "allowCustomObjectId: a create's and a sign-up's objectId is used; empty or null is 104; a taken one is 137; batch too",
        arguments: Backend.all)
    func customIds(_ backend: Backend) async throws {
        let options = TestServer.options {
            $0.allowCustomObjectId = true
            $0.allowClientClassCreation = true
        }
        try await TestServer.with(backend: backend, options) { p in
            let created = try await p.request(.post, "/classes/Item", ["objectId": "item-1", "name": "a"], master: false)
            #expect(created.status == 201, "\(created.json)")
            #expect(created["objectId"] == "item-1")
            #expect(created.headers[.location]?.hasSuffix("/classes/Item/item-1") == true)
            #expect(try await p.get("Item", "item-1")["name"] == "a")
            // Without one, the server makes one.
            let generated = try await p.request(.post, "/classes/Item", ["name": "b"], master: false)
            #expect(generated["objectId"]?.stringValue?.count == 10)
            for empty: JSONValue in ["", .null] {
                let r = try await p.request(.post, "/classes/Item", ["objectId": empty, "name": "c"], master: false)
                #expect(r.status == 400)
                #expect(r.json == ["code": 104, "error": "objectId must not be empty, null or undefined"])
            }
            let taken = try await p.request(.post, "/classes/Item", ["objectId": "item-1", "name": "again"], master: false)
            #expect(taken.code == 137, "\(taken.json)")
            #expect(try await p.get("Item", "item-1")["name"] == "a")
            // Sign-up.
            let user = try await p.request(.post, "/users", ["objectId": "user-ann", "username": "ann", "password": "pw"], master: false)
            #expect(user.status == 201, "\(user.json)")
            #expect(user["objectId"] == "user-ann")
            let me = try await p.request(.get, "/users/me", master: false, extra: ["X-Parse-Session-Token": user["sessionToken"]?.stringValue ?? ""])
            #expect(me["objectId"] == "user-ann")
            // Batch.
            let batch = try await p.request(
                .post, "/batch", ["requests": [["method": "POST", "path": "/parse/classes/Item", "body": ["objectId": "item-2"]]]], master: false)
            #expect(batch.json.arrayValue?.first?["success"]?["objectId"] == "item-2", "\(batch.json)")
            // An update cannot change the id.
            _ = try await p.update("Item", "item-1", ["objectId": "other", "name": "z"])
            #expect(try await p.get("Item", "item-1")["name"] == "z")
            #expect(try await p.get("Item", "other").status == 404)
        }
    }

    @Test("without allowCustomObjectId an objectId in a create is 105, as before; objectIdSize sets generated ids' length", arguments: Backend.all)
    func defaultsAndSize(_ backend: Backend) async throws {
        let options = TestServer.options {
            $0.objectIdSize = 20
            $0.allowClientClassCreation = true
        }
        try await TestServer.with(backend: backend, options) { p in
            let refused = try await p.request(.post, "/classes/Item", ["objectId": "mine", "name": "a"], master: false)
            #expect(refused.json == ["code": 105, "error": "objectId is an invalid field name."])
            let signUp = try await p.request(.post, "/users", ["objectId": "mine", "username": "ann", "password": "pw"], master: false)
            #expect(signUp.code == 105)
            let item = try await p.request(.post, "/classes/Item", ["name": "a"], master: false)
            #expect(item["objectId"]?.stringValue?.count == 20)
            let user = try await p.request(.post, "/users", ["username": "bob", "password": "pw"], master: false)
            #expect(user["objectId"]?.stringValue?.count == 20)
        }
    }
}
