import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Synchronization
import Testing

/// A `beforeFind` that answers the find with objects of its own (Parse Server 8.3+): the database is not queried for
/// the master key, a client's objects with an `objectId` are read again with its rights, `afterFind` still runs,
/// `count` is their number; in Swift cloud code and as a trigger webhook's `success` array.
@Suite("beforeFind answering")
struct BeforeFindObjectsTests {
    /// The objects the trigger answers with (nil: the query runs).
    final class Answer: Sendable {
        private let objects = Mutex<[[String: JSONValue]]?>(nil)
        func set(_ value: [[String: JSONValue]]?) { objects.withLock { $0 = value } }
        var value: [[String: JSONValue]]? { objects.withLock { $0 } }
    }

    static func cloud(_ answer: Answer) -> CloudCode {
        var cloud = CloudCode()
        cloud.beforeFindAnswering("Cached") { _ in answer.value }
        cloud.afterFind("Cached") { req in
            req.objects.map { o in
                var o = o; o["seen"] = true; return o
            }
        }
        return cloud
    }

    @Test("Swift beforeFind objects answer finds, counts and gets; clients get them read again with their rights", arguments: Backend.all)
    func swiftAnswers(_ backend: Backend) async throws {
        let answer = Answer()
        try await TestServer.with(backend: backend, cloud: Self.cloud(answer)) { p in
            let open = try await p.createId("Cached", ["title": "stored", "ACL": ["*": ["read": true]]])
            let closed = try await p.createId("Cached", ["title": "stored", "ACL": [:]])
            #expect(try await p.find("Cached", master: false).results.count == 1, "no answer: the query runs")

            answer.set([["objectId": .string(open), "title": "cached"], ["objectId": .string(closed), "title": "cached", "className": "Cached"]])
            let asMaster = try await p.find("Cached", where: ["missing": 1], ["count": "1"])
            #expect(asMaster.status == 200)
            #expect(asMaster.results.map { $0["title"] } == ["cached", "cached"], "the database is not queried")
            #expect(asMaster.results.allSatisfy { $0["seen"] == true && $0["className"] == nil }, "afterFind runs on them")
            #expect(asMaster["count"] == 2)

            let asClient = try await p.find("Cached", where: ["missing": 1], ["count": "1"], master: false)
            #expect(asClient.results.map { $0["objectId"] } == [.string(open)], "read again with the client's rights")
            #expect(asClient.results.first?["title"] == "stored")
            #expect(asClient.results.first?["seen"] == true)
            #expect(asClient["count"] == 1)
            let counted = try await p.find("Cached", ["count": "1", "limit": "0"], master: false)
            #expect(counted["count"] == 1)
            #expect(counted.results.isEmpty)

            // A get answers the first object (read again for a client: an ACL it does not pass is 404).
            answer.set([["objectId": .string(closed), "title": "cached"]])
            #expect(try await p.get("Cached", closed)["title"] == "cached")
            #expect(try await p.get("Cached", closed, master: false).status == 404)
            answer.set([["objectId": .string(open), "title": "cached"]])
            let got = try await p.get("Cached", open, master: false)
            #expect(got["title"] == "stored")
            #expect(got["seen"] == true)

            // Objects never saved (no objectId) are answered as they are, to clients too; [] answers nothing.
            answer.set([["title": "fresh"]])
            let fresh = try await p.find("Cached", master: false)
            #expect(fresh.results == [["title": "fresh", "seen": true]])
            answer.set([])
            let none = try await p.find("Cached", master: false)
            #expect(none.status == 200)
            #expect(none.results.isEmpty)
        }
    }

    @Test("a beforeFind webhook's success array answers the find without querying the database", arguments: Backend.all)
    func webhookAnswers(_ backend: Backend) async throws {
        try await WebhookReceiver.with { hooks in
            try await TestServer.with(backend: backend, WebhooksTests.options) { p in
                let id = try await p.createId("Hooked", ["title": "stored", "ACL": ["*": ["read": true]]])
                hooks.respond(
                    "/beforeFind",
                    .json(["success": [["objectId": .string(id), "title": "hooked", "className": "Hooked"], ["title": "fresh"]]]))
                let made = try await p.request(
                    .post, "/hooks/triggers", ["className": "Hooked", "triggerName": "beforeFind", "url": .string(hooks.url("/beforeFind"))])
                #expect(made.status == 200)
                let found = try await p.find("Hooked", ["count": "1"])
                #expect(found.results == [["objectId": .string(id), "title": "hooked"], ["title": "fresh"]])
                #expect(found["count"] == 2)
                let asClient = try await p.find("Hooked", master: false)
                #expect(asClient.results.map { $0["title"] } == ["stored"])
            }
        }
    }
}
