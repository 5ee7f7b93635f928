import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// What a trigger's registration adds: a validator `rateLimit` on the class's routes (Parse Server's), and cloud
/// code saving without its classes' triggers (`parse.withoutTriggers`).
@Suite("Cloud trigger options")
struct CloudTriggerOptionsTests {
    static func cloud(log: CloudCodeTests.AfterLog) -> CloudCode {
        var cloud = CloudCode()
        let limit = CloudValidator.RateLimit(requestTimeWindow: .seconds(60), requestCount: 2, errorResponseMessage: "Too many posts")
        cloud.beforeSave("Limited", validator: CloudValidator(rateLimit: limit)) { _ in }
        cloud.beforeSave("Stamp") { req in
            req.object["stamped"] = true
            log.add("before \(req.object["n", as: Int.self] ?? -1)")
        }
        cloud.afterSave("Stamp") { req in log.add("after \(req.object["n", as: Int.self] ?? -1)") }
        cloud.beforeFind("Stamp") { req in log.add("find") }
        // Saves with and without the class's triggers.
        cloud.define("saveBoth") { req in
            _ = try await req.parse.create("Stamp", ["n": 1])
            _ = try await req.parse.withoutTriggers.create("Stamp", ["n": 2])
            let quietCount = try await req.parse.withoutTriggers.count("Stamp")
            return quietCount
        }
        return cloud
    }

    @Test(
        "a trigger validator's rateLimit applies to its class's create and update routes, per client, not to other classes or the master key",
        arguments: Backend.all)
    func triggerRateLimit(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud(log: CloudCodeTests.AfterLog())) { p in
            _ = try await p.createId("Limited", ["a": 0])  // master key: not counted
            _ = try await p.createId("LimitedNot", ["a": 0])
            let first = try await p.request(.post, "/classes/Limited", ["a": 1], master: false)
            let id = try #require(first["objectId"]?.stringValue)
            #expect(try await p.request(.put, "/classes/Limited/\(id)", ["a": 2], master: false).status == 200)
            let third = try await p.request(.put, "/classes/Limited/\(id)", ["a": 3], master: false)
            #expect(third.status == 429)
            #expect(third.json == ["code": 100, "error": "Too many posts"])
            #expect(try await p.request(.get, "/classes/Limited/\(id)", master: false).status == 200, "reads are not limited")
            #expect(
                try await p.request(.post, "/classes/LimitedNot", ["a": 1], master: false).status == 201, "nor another class with the same prefix")
            #expect(try await p.request(.put, "/classes/Limited/\(id)", ["a": 4]).status == 200, "nor the master key")
        }
    }

    @Test("cloud code may save without its classes' triggers: no beforeSave, afterSave or beforeFind for those calls", arguments: Backend.all)
    func withoutTriggers(_ backend: Backend) async throws {
        let log = CloudCodeTests.AfterLog()
        try await TestServer.with(backend: backend, cloud: Self.cloud(log: log)) { p in
            #expect(try await p.request(.post, "/functions/saveBoth", [:]).json == ["result": 2])
            let lines = try await log.wait(for: 2)
            try await Task.sleep(for: .milliseconds(300))  // an after-trigger for the quiet save would have run by now
            #expect(log.all.sorted() == ["after 1", "before 1"], "\(lines)")
            let stored = try await p.find("Stamp", ["order": "n"])
            #expect(stored.results.map { $0["stamped"] ?? .null } == [true, .null])
            #expect(log.all.contains("find"), "a client's find runs beforeFind")
        }
    }
}
