import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Testing

/// Webhooks against a real local HTTP server (WebhookReceiver): Parse Server's Hooks API, the call protocol with
/// `X-Parse-Webhook-Key`, precedence over Swift handlers, and what a slow, broken or absent receiver answers.
@Suite("Webhooks")
struct WebhooksTests {
    static let options = TestServer.options {
        $0.webhookKey = "hook-secret"
        // Generous for a loaded machine (the suite runs tests side by side), well under the slow receiver's delay.
        $0.webhookTimeout = .milliseconds(1500)
    }

    @Test(
        "the Hooks API: bare arrays and objects, POST creates, PUT changes or deletes with __op Delete, 143 errors, master key only",
        arguments: Backend.all)
    func hooksAPI(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            #expect(try await p.request(.get, "/hooks/functions").json == [])
            let created = try await p.request(.post, "/hooks/functions", ["functionName": "foo", "url": "https://example.com/foo"])
            #expect(created.status == 200)
            #expect(created.json == ["functionName": "foo", "url": "https://example.com/foo"])
            let again = try await p.request(.post, "/hooks/functions", ["functionName": "foo", "url": "https://example.com/foo"])
            #expect(again.status == 400)
            #expect(again.json == ["code": 143, "error": "function name: foo already exists"])
            #expect(try await p.request(.get, "/hooks/functions").json == [["functionName": "foo", "url": "https://example.com/foo"]])
            let moved = try await p.request(.put, "/hooks/functions/foo", ["url": "https://example.com/bar"])
            #expect(moved.json == ["functionName": "foo", "url": "https://example.com/bar"])
            #expect(try await p.request(.get, "/hooks/functions/foo").json == ["functionName": "foo", "url": "https://example.com/bar"])
            #expect(try await p.request(.put, "/hooks/functions/foo", ["__op": "Delete"]).json == [:])
            #expect(try await p.request(.get, "/hooks/functions/foo").json == ["code": 143, "error": "no function named: foo is defined"])
            #expect(
                try await p.request(.put, "/hooks/functions/foo", ["url": "https://x.org"]).json == [
                    "code": 143, "error": "no function named: foo is defined",
                ])
            #expect(
                try await p.request(.post, "/hooks/functions", ["functionName": "bad"]).json == ["code": 143, "error": "invalid hook declaration"])

            let trigger = try await p.request(
                .post, "/hooks/triggers", ["className": "Game", "triggerName": "beforeSave", "url": "https://example.com/bs"])
            #expect(trigger.json == ["className": "Game", "triggerName": "beforeSave", "url": "https://example.com/bs"])
            let duplicate = try await p.request(
                .post, "/hooks/triggers", ["className": "Game", "triggerName": "beforeSave", "url": "https://example.com/x"])
            #expect(duplicate.json == ["code": 143, "error": "class Game already has trigger beforeSave"])
            #expect(
                try await p.request(.get, "/hooks/triggers").json == [
                    ["className": "Game", "triggerName": "beforeSave", "url": "https://example.com/bs"]
                ])
            #expect(try await p.request(.get, "/hooks/triggers/Game/beforeSave")["url"] == "https://example.com/bs")
            let badName = try await p.request(
                .post, "/hooks/triggers", ["className": "Game", "triggerName": "whenever", "url": "https://example.com/x"])
            #expect(badName.json == ["code": 143, "error": "invalid hook declaration"])
            #expect(try await p.request(.put, "/hooks/triggers/Game/beforeSave", ["__op": "Delete"]).json == [:])
            #expect(try await p.request(.get, "/hooks/triggers/Game/beforeSave").json == ["code": 143, "error": "class Game does not exist"])
            #expect(try await p.request(.get, "/hooks/functions", master: false).status == 403)
            #expect(try await p.request(.post, "/hooks/functions", ["functionName": "x", "url": "https://x.org"], master: false).status == 403)
        }
    }

    @Test(
        "function webhooks: Parse Server's body and key, the answer as the result, precedence over Swift; error, garbage, slow and down answer 141",
        arguments: Backend.all)
    func functions(_ backend: Backend) async throws {
        try await WebhookReceiver.with { hooks in
            try await TestServer.withAPI(backend: backend, Self.options, cloud: CloudCodeTests.cloud()) { api, _, p in
                hooks.respond("/hello", .compute { body in ["success": .string("hooked \(body["params"]?["name"]?.stringValue ?? "?")")] })
                hooks.respond("/refuse", .json(["error": "nope"]))
                hooks.respond("/garbage", .garbage)
                hooks.respond("/slow", .slow(.seconds(15)))
                // Port 1 on loopback, as elsewhere in the tests: nobody listens there and no test server is handed it (a port
                // bound and let go could be a parallel test's server by the time the hook is called).
                let down = "http://127.0.0.1:1/down"
                for (name, url) in [
                    ("hello", hooks.url("/hello")), ("refuse", hooks.url("/refuse")), ("garbage", hooks.url("/garbage")),
                    ("slow", hooks.url("/slow")), ("down", down),
                ] {
                    #expect(try await p.request(.post, "/hooks/functions", ["functionName": .string(name), "url": .string(url)]).status == 200)
                }
                let ann = try await p.signUp("ann")
                // The webhook named like the Swift function `hello` takes its place.
                let hello = try await p.asUser(ann.token, .post, "/functions/hello", ["name": "Ann"])
                #expect(hello.json == ["result": "hooked Ann"])
                let call = try #require(hooks.calls(to: "/hello").last)
                #expect(call.key == "hook-secret")
                #expect(call.body["functionName"] == "hello")
                #expect(call.body["params"] == ["name": "Ann"])
                #expect(call.body["master"] == false)
                #expect(call.body["user"]?["username"] == "ann")
                #expect(call.body["user"]?["sessionToken"] == .string(ann.token))
                #expect(call.body["headers"]?["x-parse-application-id"] == .string(TestServer.appId))
                #expect(call.body["ip"]?.stringValue?.isEmpty == false)

                #expect(try await p.request(.post, "/functions/refuse", [:]).json == ["code": 141, "error": "nope"])
                #expect(try await p.request(.post, "/functions/garbage", [:]).json == ["code": 141, "error": "Malformed response"])
                let started = ContinuousClock.now
                let slow = try await p.request(.post, "/functions/slow", [:])
                #expect(slow.code == 141)
                #expect(ContinuousClock.now - started < .seconds(10), "the webhook timeout (1.5 s) ends the call, not the receiver's 15 s")
                let unreachable = try await p.request(.post, "/functions/down", [:])
                #expect(unreachable.code == 141)
                #expect(unreachable.status == 400)
                // After five failures in a row the URL is not called for a while: failing fast, with a reason.
                for _ in 0..<5 { _ = try await p.request(.post, "/functions/down", [:]) }
                let open = try await p.request(.post, "/functions/down", [:])
                #expect(open["error"]?.stringValue?.contains("unavailable") == true, "\(open.json)")
                // The server still answers everything else.
                #expect(try await p.request(.post, "/functions/echo", ["a": 1]).json == ["result": ["a": 1]])
                // Calls and failures per URL, as the metrics listener shows them.
                let webhooks = api.services.cloud.webhooks
                #expect(webhooks.callCounts[down] == 5, "after five failures the calls fail fast without calling: \(webhooks.callCounts)")
                #expect(webhooks.failureCounts[hooks.url("/garbage")] == 1)
                let metrics = ParsleyMetrics(pool: {
                    var usage = ParsleyMetrics.PoolUsage(readersBusy: 0, readers: 0, writesQueued: 0)
                    usage.webhookCalls = webhooks.callCounts
                    usage.webhookFailures = webhooks.failureCounts
                    return usage
                })
                let text = metrics.render()
                #expect(text.contains("parsley_webhook_failures_total{url=\"\(down)\"} 5"), "\(text)")
                #expect(text.contains("parsley_webhook_calls_total{url=\"\(hooks.url("/hello"))\"} 1"))
            }
        }
    }

    @Test(
        "trigger webhooks: beforeSave's object is what is stored, beforeDelete may refuse, afterSave is called after commit and its failure never reaches the client",
        arguments: Backend.all)
    func triggers(_ backend: Backend) async throws {
        try await WebhookReceiver.with { hooks in
            try await TestServer.with(backend: backend, Self.options) { p in
                hooks.respond(
                    "/item/beforeSave",
                    .compute { body in
                        var object = body["object"]?.objectValue ?? [:]
                        object["checked"] = true
                        return ["success": .object(object)]
                    })
                hooks.respond("/item/beforeDelete", .json(["error": "items stay"]))
                let register: [(String, String)] = [
                    ("beforeSave", hooks.url("/item/beforeSave")), ("beforeDelete", hooks.url("/item/beforeDelete")),
                    ("afterSave", hooks.url("/item/afterSave")),
                ]
                for (trigger, url) in register {
                    let r = try await p.request(
                        .post, "/hooks/triggers", ["className": "Item", "triggerName": .string(trigger), "url": .string(url)])
                    #expect(r.status == 200, "\(r.json)")
                }
                let created = try await p.request(.post, "/classes/Item", ["name": "a"], extra: ["X-Parse-Cloud-Context": #"{"why":"test"}"#])
                #expect(created.status == 201, "\(created.json)")
                #expect(created["checked"] == true, "the field the webhook added is echoed")
                let id = try #require(created["objectId"]?.stringValue)
                #expect(try await p.get("Item", id)["checked"] == true)
                let before = try #require(hooks.calls(to: "/item/beforeSave").first)
                #expect(before.body["triggerName"] == "beforeSave")
                #expect(before.body["object"]?["className"] == "Item")
                #expect(before.body["object"]?["objectId"] == nil, "a new object has no id yet")
                #expect(before.body["context"] == ["why": "test"])
                #expect(before.body["headers"]?["x-parse-cloud-context"] == #"{"why":"test"}"#, "headers reach webhooks without Swift cloud code")
                #expect(before.key == "hook-secret")

                let after = try await hooks.wait(for: "/item/afterSave", count: 1)
                #expect(after.first?.body["object"]?["objectId"] == .string(id))
                #expect(after.first?.body["object"]?["checked"] == true)
                #expect(after.first?.body["context"] == ["why": "test"])

                let refused = try await p.delete("Item", id)
                #expect(refused.json == ["code": 141, "error": "items stay"])
                #expect(try await p.get("Item", id).status == 200)

                // An afterSave webhook that is down: the write still succeeds (the call is retried, then counted as failed).
                let down = "http://127.0.0.1:1/gone"
                #expect(try await p.request(.put, "/hooks/triggers/Item/afterSave", ["url": .string(down)]).status == 200)
                let updated = try await p.update("Item", id, ["name": "b"])
                #expect(updated.status == 200)
                #expect(updated["checked"] == true)
            }
        }
    }
}
