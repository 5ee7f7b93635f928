import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Query changes of Parse Server 8/9 on the wire: `explain` needs the master key unless
/// `databaseOptions.allowPublicExplain`.
@Suite("Parse Server 9 queries")
struct ParseServer9QueriesTests {
    static let refused: JSONValue = ["code": 102, "error": "Using the explain query parameter requires the master key"]

    @Test("explain without the master key is 102 unless allowPublicExplain; the master key may explain finds and aggregates", arguments: Backend.all)
    func explainNeedsMaster(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Plan", ["n": 1, "ACL": ["*": ["read": true]]])
            for value in ["true", "queryPlanner", "1"] {
                let anonymous = try await p.find("Plan", ["explain": value], master: false)
                #expect(anonymous.status == 400)
                #expect(anonymous.json == Self.refused, "explain=\(value)")
            }
            let counted = try await p.find("Plan", ["explain": "true", "count": "1", "limit": "0"], master: false)
            #expect(counted.json == Self.refused)
            let inBody = try await p.request(.post, "/classes/Plan", ["_method": "GET", "explain": true], master: false)
            #expect(inBody.json == Self.refused)
            // Query-string values are read as JSON first, as Parse Server reads them: `explain=false` asks for nothing.
            #expect(try await p.find("Plan", ["explain": "false"], master: false).results.count == 1)
            let notAsked = try await p.request(.post, "/classes/Plan", ["_method": "GET", "explain": false], master: false)
            #expect(notAsked.results.count == 1)
            let asMaster = try await p.find("Plan", ["explain": "true"])
            #expect(asMaster.status == 200)
            #expect(asMaster.results.count == 1)
            let aggregate = try await p.request(.get, "/aggregate/Plan?explain=true&distinct=n")
            #expect(aggregate.status == 200)
        }
        try await TestServer.with(backend: backend, TestServer.options { $0.allowPublicExplain = true }) { p in
            _ = try await p.createId("Plan", ["n": 1, "ACL": ["*": ["read": true]]])
            let anonymous = try await p.find("Plan", ["explain": "true"], master: false)
            #expect(anonymous.status == 200)
            #expect(anonymous.results.count == 1)
        }
    }
}
