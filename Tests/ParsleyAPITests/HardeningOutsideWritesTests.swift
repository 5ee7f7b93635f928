import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPush
import Synchronization
import Testing

/// Values that come back from outside a client's body (a `beforeSave` webhook's or Swift trigger's answer, cloud
/// code's own writes, function results, find answers, file metadata, cloud pushes) get a client body's checks: a
/// refused keyword (`constructor`, `__proto__`, `_bsontype: Code`) at any depth is 105, NUL is 107, and nothing is
/// stored, with or without the master key.
@Suite("Hardening: values from outside a client's body")
struct HardeningOutsideWritesTests {
    static let polluted: JSONValue = ["prototype": ["polluted": true]]
    static let constructorRefused: JSONValue = ["code": 105, "error": "Prohibited keyword in request data: {\"key\":\"constructor\"}."]

    static func isProhibited(_ r: Reply) -> Bool {
        r.status == 400 && r.code == 105 && r["error"]?.stringValue?.hasPrefix("Prohibited keyword in request data: ") == true
    }

    @Test("a beforeSave webhook answering constructor, a nested __proto__ or _bsontype: Code is 105 and stores nothing", arguments: Backend.all)
    func beforeSaveWebhook(_ backend: Backend) async throws {
        try await WebhookReceiver.with { hooks in
            try await TestServer.with(backend: backend, WebhooksTests.options) { p in
                hooks.respond(
                    "/beforeSave",
                    .compute { body in
                        var object = body["object"]?.objectValue ?? [:]
                        switch object["title"]?.stringValue {
                        case "constructor": object["constructor"] = Self.polluted
                        case "bson": object["meta"] = ["inner": ["_bsontype": "Code", "code": "x"]]
                        case "proto": object["list"] = [1, ["a": ["__proto__": ["admin": true]]]]
                        case "dotted": object["meta.__proto__"] = ["admin": true]
                        case "add": object["tags"] = ["__op": "AddUnique", "objects": [["constructor": Self.polluted]]]
                        default: break
                        }
                        return ["success": .object(object)]
                    })
                let made = try await p.request(
                    .post, "/hooks/triggers", ["className": "Note", "triggerName": "beforeSave", "url": .string(hooks.url("/beforeSave"))])
                #expect(made.status == 200)
                let id = try await p.createId("Note", ["title": "clean", "ACL": ["*": ["read": true, "write": true]]])
                for master in [true, false] {
                    let created = try await p.create("Note", ["title": "constructor"], master: master)
                    #expect(created.json == Self.constructorRefused, "master \(master): \(created.status) \(created.json)")
                    for title in ["bson", "proto", "dotted", "add"] {
                        let refused = try await p.create("Note", ["title": .string(title)], master: master)
                        #expect(Self.isProhibited(refused), "create \(title), master \(master): \(refused.status) \(refused.json)")
                        let updated = try await p.update("Note", id, ["title": .string(title)], master: master)
                        #expect(Self.isProhibited(updated), "update \(title), master \(master): \(updated.status) \(updated.json)")
                    }
                    let updated = try await p.update("Note", id, ["title": "constructor"], master: master)
                    #expect(updated.json == Self.constructorRefused, "master \(master): \(updated.status) \(updated.json)")
                }
                // Only the clean object, unchanged.
                let found = try await p.find("Note")
                #expect(found.results.map { $0["objectId"] } == [.string(id)], "\(found.json)")
                let stored = try #require(found.results.first?.objectValue)
                #expect(stored["title"] == "clean")
                for key in ["constructor", "meta", "list", "tags"] { #expect(stored[key] == nil, "\(stored)") }
            }
        }
    }

    /// Cloud code that hands back refused values: a `beforeSave` that sets them, and functions that write them
    /// through `req.parse` (to a class without triggers).
    static func cloud() -> CloudCode {
        var cloud = CloudCode()
        cloud.beforeSave("Item") { req in
            switch req.object["title", as: String.self] {
            case "proto": req.object["meta"] = ["deep": ["__proto__": ["admin": true]]]
            case "constructor": req.object["constructor"] = Self.polluted
            case "bson": req.object["list"] = [["_bsontype": "Code", "code": "x"]]
            case "nul": req.object["note"] = .string("a\u{0}b")
            case "nulKey": req.object["meta"] = .object(["a\u{0}b": 1])
            case "increment": req.object["n"] = ["__op": "Increment", "amount": 1, "constructor": Self.polluted]
            default: break
            }
        }
        cloud.define("cloudCreate") { req in
            JSONValue.object(try await req.parse.create("Thing", ["title": "made", "meta": ["constructor": Self.polluted]]))
        }
        cloud.define("cloudCreateNUL") { req in
            JSONValue.object(try await req.parse.asMaster.create("Thing", ["title": .string("made\u{0}")]))
        }
        cloud.define("cloudUpdate") { req in
            let id = req.params["id"]?.stringValue ?? ""
            return JSONValue.object(
                try await req.parse.asMaster.update("Thing", id, ["n": ["__op": "Increment", "amount": 1], "meta.__proto__": ["admin": true]]))
        }
        return cloud
    }

    @Test(
        "a Swift beforeSave that sets refused values, and cloud code's own writes, are refused as a client's body and store nothing",
        arguments: Backend.all)
    func cloudCodeWrites(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            let id = try await p.createId("Item", ["title": "clean", "n": 1])
            for master in [true, false] {
                for title in ["proto", "constructor", "bson", "increment"] {
                    let created = try await p.create("Item", ["title": .string(title)], master: master)
                    #expect(Self.isProhibited(created), "create \(title), master \(master): \(created.status) \(created.json)")
                    let updated = try await p.update("Item", id, ["title": .string(title)], master: master)
                    #expect(Self.isProhibited(updated), "update \(title), master \(master): \(updated.status) \(updated.json)")
                }
                for title in ["nul", "nulKey"] {
                    let created = try await p.create("Item", ["title": .string(title)], master: master)
                    #expect(created.status == 400 && created.code == 107, "\(title), master \(master): \(created.status) \(created.json)")
                    #expect(created["error"] == "Invalid JSON: strings may not contain the NUL character (\\u0000)")
                }
            }
            // The same values in a client's own body are refused the same way.
            let client = try await p.create("Item", ["title": "x", "meta": ["deep": ["__proto__": ["admin": true]]]])
            #expect(Self.isProhibited(client), "\(client.json)")
            let items = try await p.find("Item")
            #expect(items.results.count == 1, "\(items.json)")
            #expect(items.results.first?["title"] == "clean")
            #expect(items.results.first?["n"] == 1)
            #expect(items.results.first?["meta"] == nil)

            let thing = try await p.createId("Thing", ["title": "kept", "n": 1])
            let created = try await p.request(.post, "/functions/cloudCreate", [:])
            #expect(created.json == Self.constructorRefused, "\(created.status) \(created.json)")
            let nul = try await p.request(.post, "/functions/cloudCreateNUL", [:], master: false)
            #expect(nul.status == 400 && nul.code == 107, "\(nul.status) \(nul.json)")
            let updated = try await p.request(.post, "/functions/cloudUpdate", ["id": .string(thing)], master: false)
            #expect(Self.isProhibited(updated), "\(updated.status) \(updated.json)")
            let things = try await p.find("Thing")
            #expect(things.results.count == 1, "\(things.json)")
            #expect(things.results.first?["n"] == 1)
            #expect(things.results.first?["meta"] == nil)
        }
    }

    @Test("function results and find answers, from webhooks or Swift, holding refused keywords are 105", arguments: Backend.all)
    func answers(_ backend: Backend) async throws {
        var cloud = CloudCode()
        cloud.define("swiftResult") { _ in ["ok": true, "nested": [["constructor": Self.polluted]]] as JSONValue }
        cloud.afterFind("Shown") { req in
            req.objects.map { o in
                var o = o
                o["extra"] = ["__proto__": ["admin": true]]
                return o
            }
        }
        cloud.beforeFind("Asked") { req in req.query.whereKey("meta", ["$eq": ["constructor": Self.polluted]]) }
        try await WebhookReceiver.with { hooks in
            try await TestServer.with(backend: backend, WebhooksTests.options, cloud: cloud) { p in
                hooks.respond("/function", .json(["success": ["ok": true, "__proto__": ["admin": true]]]))
                hooks.respond(
                    "/afterFind",
                    .compute { body in
                        let objects = body["objects"]?.arrayValue ?? []
                        return [
                            "success": .array(
                                objects.map { o in
                                    var o = o.objectValue ?? [:]
                                    o["constructor"] = Self.polluted
                                    return .object(o)
                                })
                        ]
                    })
                hooks.respond("/beforeFind", .json(["success": ["where": ["meta": ["_bsontype": "Code"]]]]))
                #expect(
                    try await p.request(.post, "/hooks/functions", ["functionName": "hooked", "url": .string(hooks.url("/function"))]).status == 200)
                for (className, trigger, path) in [("Doc", "afterFind", "/afterFind"), ("Other", "beforeFind", "/beforeFind")] {
                    let made = try await p.request(
                        .post, "/hooks/triggers", ["className": .string(className), "triggerName": .string(trigger), "url": .string(hooks.url(path))])
                    #expect(made.status == 200)
                }
                for className in ["Doc", "Other", "Shown", "Asked"] { _ = try await p.createId(className, ["a": 1]) }
                for master in [true, false] {
                    for function in ["hooked", "swiftResult"] {
                        let r = try await p.request(.post, "/functions/\(function)", [:], master: master)
                        #expect(Self.isProhibited(r), "\(function), master \(master): \(r.status) \(r.json)")
                    }
                    let doc = try await p.find("Doc", master: master)
                    #expect(doc.json == Self.constructorRefused, "master \(master): \(doc.status) \(doc.json)")
                    for className in ["Other", "Shown", "Asked"] {
                        let r = try await p.find(className, master: master)
                        #expect(Self.isProhibited(r), "\(className), master \(master): \(r.status) \(r.json)")
                    }
                }
            }
        }
    }

    @Test(
        "file metadata and tags with refused keywords, from the client or a beforeSave file trigger, are 105 and store no file",
        arguments: Backend.all)
    func fileMetadata(_ backend: Backend) async throws {
        let saved = Mutex<[String]>([])
        var cloud = CloudCode()
        cloud.beforeSaveFile { req in
            if req.file.name.hasSuffix("bad.txt") { req.file.tags = ["t": ["__proto__": ["admin": true]]] }
        }
        cloud.afterSaveFile { req in saved.withLock { $0.append(req.file.name) } }
        try await TestServer.with(backend: backend, cloud: cloud) { p in
            var body: [String: JSONValue] = [
                "base64": "SGVsbG8=", "_ContentType": "text/plain", "_ApplicationId": .string(TestServer.appId),
                "_MasterKey": .string(TestServer.masterKey), "fileData": ["metadata": ["owner": ["constructor": Self.polluted]], "tags": [:]],
            ]
            let fromClient = try await p.raw(
                .post, "/parse/files/a.txt", body: JSONWriter.string(.object(body)), headers: [.contentType: "text/plain"])
            #expect(fromClient.json == Self.constructorRefused, "\(fromClient.status) \(fromClient.json)")
            body["fileData"] = ["metadata": [:], "tags": ["k": ["_bsontype": "Code"]]]
            let tags = try await p.raw(.post, "/parse/files/b.txt", body: JSONWriter.string(.object(body)), headers: [.contentType: "text/plain"])
            #expect(Self.isProhibited(tags), "\(tags.status) \(tags.json)")
            var h = p.headers(master: true)
            h[.contentType] = "text/plain"
            let fromTrigger = try await p.raw(.post, "/parse/files/bad.txt", body: "hello", headers: h)
            #expect(Self.isProhibited(fromTrigger), "\(fromTrigger.status) \(fromTrigger.json)")
            let fine = try await p.raw(.post, "/parse/files/fine.txt", body: "hello", headers: h)
            #expect(fine.status == 201)
            // Only the clean upload was stored (its afterSave ran).
            for _ in 0..<100 where saved.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(20)) }
            let names = saved.withLock { $0 }
            #expect(names.count == 1 && names.allSatisfy { $0.hasSuffix("fine.txt") }, "\(names)")
        }
    }

    /// A provider that accepts every message (the push is only queued in these tests).
    struct AcceptingProvider: PushProvider {
        var name: String { "ios" }
        var summary: String { "accepts everything" }
        func serves(deviceType: String) -> Bool { true }
        func serves(_ message: PushMessage) -> Bool { true }
        func send(_ message: PushMessage) async -> PushOutcome { .sent }
        func shutdown() async throws {}
    }

    @Test("a push from cloud code whose data holds a refused keyword is 105 and queues nothing", arguments: Backend.all)
    func cloudPush(_ backend: Backend) async throws {
        var cloud = CloudCode()
        cloud.define("pushPolluted") { req in
            try await req.parse.push(["channels": ["news"], "data": ["alert": "hi", "extra": ["constructor": Self.polluted]]])
        }
        let options = TestServer.options { $0.push.providers = [AcceptingProvider()] }
        try await TestServer.with(backend: backend, options, cloud: cloud) { p in
            for master in [true, false] {
                let r = try await p.request(.post, "/functions/pushPolluted", [:], master: master)
                #expect(r.json == Self.constructorRefused, "master \(master): \(r.status) \(r.json)")
            }
            let statuses = try await p.find("_PushStatus")
            #expect(statuses.status == 200 && statuses.results.isEmpty, "\(statuses.json)")
        }
    }
}
