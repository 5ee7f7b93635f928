import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Query changes of Parse Server 8/9 on the wire: `explain` needs the master key unless
/// `databaseOptions.allowPublicExplain`, and `$regex` takes the `u` option.
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

    @Test("$regex takes the u option (alone or with others); other letters stay 102", arguments: Backend.all)
    func regexUnicodeOption(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let emoji = try await p.createId("Word", ["w": "😀"])
            let accented = try await p.createId("Word", ["w": "é"])
            _ = try await p.createId("Word", ["w": "ab"])
            let one = try await p.ids("Word", where: ["w": ["$regex": "^.$", "$options": "u"]])
            #expect(one == [emoji, accented].sorted())
            let caseless = try await p.ids("Word", where: ["w": ["$regex": "^AB$", "$options": "iu"]])
            #expect(caseless.count == 1)
            let bad = try await p.find("Word", where: ["w": ["$regex": "a", "$options": "ug"]])
            #expect(bad.status == 400)
            #expect(bad.json == ["code": 102, "error": "Bad $options value for query: ug"])
        }
    }
}
