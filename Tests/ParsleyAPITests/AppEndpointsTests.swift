import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

@Suite("Config, installations, functions, events")
struct AppEndpointsTests {
    @Test("config: empty, merged by master PUT, master-only params hidden from clients", arguments: Backend.all)
    func config(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let empty = try await p.request(.get, "/config", master: false)
            #expect(empty.json == ["params": [:]])
            let put = try await p.request(.put, "/config", ["params": ["welcome": "hi", "secret": "x", "n": 42], "masterKeyOnly": ["secret": true]])
            #expect(put.json == ["result": true])
            let denied = try await p.request(.put, "/config", ["params": ["welcome": "pwned"]], master: false)
            #expect(denied.status == 403)
            let merge = try await p.request(
                .put, "/config", ["params": ["n": ["__op": "Delete"], "more": ["__type": "Date", "iso": "2022-01-01T00:00:00.000Z"]]])
            #expect(merge.status == 200)
            let client = try await p.request(.get, "/config", master: false)
            #expect(client["params"] == ["welcome": "hi", "more": ["__type": "Date", "iso": "2022-01-01T00:00:00.000Z"]])
            let master = try await p.request(.get, "/config")
            #expect(master["params"]?["secret"] == "x")
            #expect(master["masterKeyOnly"]?["secret"] == true)
        }
    }

    @Test("installations: create, upsert by installationId, immutable fields, master-only list and delete", arguments: Backend.all)
    func installations(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let missingId = try await p.request(.post, "/installations", ["deviceType": "ios"], master: false)
            #expect(missingId.code == 135)
            let missingType = try await p.request(.post, "/installations", ["installationId": "ABC-1"], master: false)
            #expect(missingType.code == 135)
            let created = try await p.request(
                .post, "/installations", ["installationId": "ABC-1", "deviceType": "ios", "channels": ["news"]], master: false)
            #expect(created.status == 201)
            let id = try #require(created["objectId"]?.stringValue)
            let upsert = try await p.request(.post, "/installations", ["installationId": "abc-1", "badge": 3], master: false)
            #expect(upsert.status == 200)
            #expect(upsert["updatedAt"] != nil)
            let got = try await p.request(.get, "/installations/\(id)", master: false)
            #expect(got["installationId"] == "abc-1")
            #expect(got["badge"] == 3)
            let change = try await p.request(.put, "/installations/\(id)", ["deviceType": "android"], master: false)
            #expect(change.code == 136)
            let list = try await p.request(.get, "/installations", master: false)
            #expect(list.code == 119)
            let del = try await p.request(.delete, "/installations/\(id)", master: false)
            #expect(del.code == 119)
            let masterList = try await p.request(.get, "/classes/_Installation")
            #expect(masterList.results.count == 1)
            let masterDelete = try await p.request(.delete, "/installations/\(id)")
            #expect(masterDelete.json == [:])
        }
    }

    @Test("unknown cloud functions and jobs are 141; analytics events are accepted", arguments: Backend.all)
    func functionsAndEvents(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let fn = try await p.request(.post, "/functions/hello", ["name": "x"], master: false)
            #expect(fn.json == ["code": 141, "error": "Invalid function: \"hello\""])
            let job = try await p.request(.post, "/jobs/cleanup", [:])
            #expect(job.code == 141)
            let event = try await p.request(.post, "/events/AppOpened", ["at": ["__type": "Date", "iso": "2022-01-01T00:00:00.000Z"]], master: false)
            #expect(event.json == [:])
        }
    }

    @Test("purge empties a class and keeps its schema", arguments: Backend.all)
    func purge(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Junk", ["a": 1])
            _ = try await p.createId("Junk", ["a": 2])
            let denied = try await p.request(.delete, "/purge/Junk", master: false)
            #expect(denied.status == 403)
            let r = try await p.request(.delete, "/purge/Junk")
            #expect(r.json == [:])
            let left = try await p.find("Junk")
            #expect(left.results.isEmpty)
            let schema = try await p.request(.get, "/schemas/Junk")
            #expect(schema["fields"]?["a"] != nil)
        }
    }
}
