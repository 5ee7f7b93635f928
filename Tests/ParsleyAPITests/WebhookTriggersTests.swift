import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Testing

/// Trigger webhooks beyond save and delete, against a real local HTTP server: `beforeFind` (change or refuse),
/// `afterFind` (replace the results), the log-in triggers and the file triggers on class `@File`.
@Suite("Webhook triggers")
struct WebhookTriggersTests {
    @Test("beforeFind webhooks change or refuse queries; afterFind webhooks replace the results", arguments: Backend.all)
    func findWebhooks(_ backend: Backend) async throws {
        try await WebhookReceiver.with { hooks in
            try await TestServer.with(backend: backend, WebhooksTests.options) { p in
                // Only the `public` objects, at most two; the count is not limited.
                hooks.respond(
                    "/beforeFind",
                    .compute { body in
                        var query = body["query"]?.objectValue ?? [:]
                        var conditions = query["where"]?.objectValue ?? [:]
                        conditions["public"] = true
                        query["where"] = .object(conditions)
                        query["limit"] = 2
                        return ["success": .object(query)]
                    })
                hooks.respond("/refuse", .json(["error": "not today"]))
                hooks.respond(
                    "/afterFind",
                    .compute { body in
                        let objects = body["objects"]?.arrayValue ?? []
                        return [
                            "success": .array(
                                objects.map { o in
                                    var o = o.objectValue ?? [:]
                                    o["seen"] = true
                                    return .object(o)
                                })
                        ]
                    })
                for i in 0..<5 { _ = try await p.createId("Doc", ["n": .int(Int64(i)), "public": .bool(i != 1), "ACL": ["*": ["read": true]]]) }
                _ = try await p.createId("Closed", ["a": 1])
                for (className, trigger, path) in [
                    ("Doc", "beforeFind", "/beforeFind"), ("Doc", "afterFind", "/afterFind"), ("Closed", "beforeFind", "/refuse"),
                ] {
                    let made = try await p.request(
                        .post, "/hooks/triggers", ["className": .string(className), "triggerName": .string(trigger), "url": .string(hooks.url(path))])
                    #expect(made.status == 200)
                }
                let found = try await p.find("Doc", ["order": "n", "keys": "n"], master: false)
                #expect(found.results.compactMap { $0["n"]?.integerValue } == [0, 2])
                #expect(found.results.allSatisfy { $0["seen"] == true })
                let call = try #require(hooks.calls(to: "/beforeFind").first)
                #expect(call.body["triggerName"] == "beforeFind")
                #expect(call.body["query"]?["className"] == "Doc")
                #expect(call.body["query"]?["order"] == "n")
                #expect(call.body["query"]?["keys"] == "n")
                #expect(call.body["isGet"] == false)
                #expect(call.body["master"] == false)
                let after = try #require(hooks.calls(to: "/afterFind").first)
                #expect(after.body["objects"]?.arrayValue?.first?["className"] == "Doc")
                let refused = try await p.find("Closed", master: false)
                #expect(refused.json == ["code": 141, "error": "not today"])
                // A hook removed is no longer called.
                #expect(try await p.request(.put, "/hooks/triggers/Closed/beforeFind", ["__op": "Delete"]).status == 200)
                #expect(try await p.find("Closed", master: false).results.count == 1)
            }
        }
    }

    @Test("log-in webhooks: beforeLogin may refuse with the user as object; afterLogin and afterLogout are called", arguments: Backend.all)
    func loginWebhooks(_ backend: Backend) async throws {
        try await WebhookReceiver.with { hooks in
            try await TestServer.with(backend: backend, WebhooksTests.options) { p in
                hooks.respond(
                    "/beforeLogin",
                    .compute { body in
                        body["object"]?["username"] == "banned" ? ["error": "banned"] : ["success": [:]]
                    })
                hooks.respond("/afterLogin", .json(["success": [:]]))
                hooks.respond("/afterLogout", .json(["success": [:]]))
                for (className, trigger) in [("_User", "beforeLogin"), ("_User", "afterLogin"), ("_Session", "afterLogout")] {
                    let made = try await p.request(
                        .post, "/hooks/triggers",
                        ["className": .string(className), "triggerName": .string(trigger), "url": .string(hooks.url("/\(trigger)"))])
                    #expect(made.status == 200)
                }
                _ = try await p.signUp("banned")
                _ = try await p.signUp("ann")
                let refused = try await p.request(.post, "/login", ["username": "banned", "password": "secret-pw"], master: false)
                #expect(refused.json == ["code": 141, "error": "banned"])
                let ann = try await p.request(.post, "/login", ["username": "ann", "password": "secret-pw"], master: false)
                let token = try #require(ann["sessionToken"]?.stringValue)
                #expect(try await p.asUser(token, .post, "/logout", [:]).status == 200)
                let before = hooks.calls(to: "/beforeLogin")
                #expect(before.count == 2)
                #expect(before.last?.body["object"]?["className"] == "_User")
                #expect(before.last?.body["object"]?["password"] == nil)
                #expect(hooks.calls(to: "/afterLogin").map { $0.body["object"]?["username"] } == ["ann"])
                let logout = try #require(hooks.calls(to: "/afterLogout").first)
                #expect(logout.body["object"]?["sessionToken"] == .string(token))
                #expect(logout.body["triggerName"] == "afterLogout")
            }
        }
    }

    @Test(
        "file webhooks on class @File: beforeSave may refuse or set metadata, afterSave and the delete triggers get the file", arguments: Backend.all)
    func fileWebhooks(_ backend: Backend) async throws {
        try await WebhookReceiver.with { hooks in
            try await TestServer.with(backend: backend, WebhooksTests.options) { p in
                hooks.respond(
                    "/beforeSave",
                    .compute { body in
                        guard body["file"]?["name"]?.stringValue?.hasSuffix("secret.txt") != true else { return ["error": "no secrets"] }
                        return ["success": ["metadata": ["checked": true]]]
                    })
                for trigger in ["afterSave", "beforeDelete", "afterDelete"] { hooks.respond("/\(trigger)", .json(["success": [:]])) }
                for trigger in ["beforeSave", "afterSave", "beforeDelete", "afterDelete"] {
                    let made = try await p.request(
                        .post, "/hooks/triggers", ["className": "@File", "triggerName": .string(trigger), "url": .string(hooks.url("/\(trigger)"))])
                    #expect(made.status == 200)
                }
                let ann = try await p.signUp("ann")
                #expect(try await p.asUserUpload(ann.token, "secret.txt", "psst").json == ["code": 141, "error": "no secrets"])
                let file = try await p.uploadFile(ann.token, "notes.txt", "hello", contentType: "text/plain")
                let name = try #require(file["name"]?.stringValue)
                let metadata = try await p.request(.get, "/files/\(TestServer.appId)/metadata/\(name)", master: false)
                #expect(metadata["metadata"] == ["checked": true])
                let saved = try #require(try await hooks.wait(for: "/afterSave", count: 1).first)
                #expect(saved.body["file"]?["name"] == .string(name))
                #expect(saved.body["file"]?["url"]?.stringValue?.hasSuffix(name) == true)
                #expect(saved.body["fileSize"] == 5)
                #expect(saved.body["contentType"] == "text/plain")
                #expect(try await p.request(.delete, "/files/\(name)").status == 200)
                #expect(hooks.calls(to: "/beforeDelete").count == 1)
                #expect(try await hooks.wait(for: "/afterDelete", count: 1).count == 1)
            }
        }
    }
}
