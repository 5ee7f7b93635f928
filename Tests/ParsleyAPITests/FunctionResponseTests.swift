import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Cloud functions setting the HTTP status and headers of their answer (Parse Server 9.1) through `req.response`.
@Suite("Cloud function responses")
struct FunctionResponseTests {
    static func cloud() -> CloudCode {
        var cloud = CloudCode()
        cloud.define("created") { req in
            try req.response.status(201).set("X-Custom", "abc").set("Cache-Control", "no-store")
            return "made"
        }
        cloud.define("badStatus") { req -> String in
            try req.response.status(99)
            return "never"
        }
        cloud.define("badHeader") { req -> String in
            try req.response.set("X-Bad", "a\r\nInjected: 1")
            return "never"
        }
        cloud.define("plain") { _ in "plain" }
        return cloud
    }

    @Test("status and headers set by the function answer /functions/:name; bad ones are 141; others stay 200", arguments: Backend.all)
    func statusAndHeaders(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            let created = try await p.request(.post, "/functions/created", [:], master: false)
            #expect(created.status == 201)
            #expect(created.json == ["result": "made"])
            #expect(created.headers[HTTPField.Name("X-Custom")!] == "abc")
            #expect(created.headers[.cacheControl] == "no-store")
            let plain = try await p.request(.get, "/functions/plain", master: false)
            #expect(plain.status == 200)
            #expect(plain.headers[HTTPField.Name("X-Custom")!] == nil)
            let badStatus = try await p.request(.post, "/functions/badStatus", [:], master: false)
            #expect(badStatus.status == 400)
            #expect(badStatus.json == ["code": 141, "error": "Invalid status code: 99"])
            let badHeader = try await p.request(.post, "/functions/badHeader", [:], master: false)
            #expect(badHeader.json == ["code": 141, "error": "Invalid header value for X-Bad"])
            #expect(badHeader.headers[HTTPField.Name("Injected")!] == nil)
        }
    }
}
