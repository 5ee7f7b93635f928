import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// The read-only master key in Parse Server 9: `readOnlyMasterKeyIps`, `request.isReadOnly` in cloud code and
/// `allowAggregationForReadOnlyMasterKey`.
@Suite("Read-only master key (Parse Server 9)")
struct ReadOnlyMasterKeyTests {
    static let readOnlyKey = "read-only-master-key"
    static let readOnly = ["X-Parse-Master-Key": readOnlyKey]

    static func options(_ change: (inout ParseServerOptions) -> Void = { _ in }) -> ParseServerOptions {
        TestServer.options {
            $0.readOnlyMasterKey = readOnlyKey
            change(&$0)
        }
    }

    static func cloud() -> CloudCode {
        var cloud = CloudCode()
        cloud.define("who") { req in ["master": .bool(req.master), "isReadOnly": .bool(req.isReadOnly)] as JSONValue }
        return cloud
    }

    @Test("readOnlyMasterKeyIps: the read-only key from elsewhere is ignored (403), the master key is not", arguments: Backend.all)
    func addresses(_ backend: Backend) async throws {
        let elsewhere = Self.options { $0.security.readOnlyMasterKeyIps = ["10.0.0.0/8"].compactMap(IPRange.init) }
        try await TestServer.with(backend: backend, elsewhere) { p in
            let refused = try await p.request(.get, "/schemas", master: false, extra: Self.readOnly)
            #expect(refused.status == 403)
            #expect(refused.json == ["error": "Permission denied"])
            #expect(try await p.request(.get, "/schemas").status == 200)
        }
        let here = Self.options {
            $0.security.readOnlyMasterKeyIps = ["127.0.0.1", "::1"].compactMap(IPRange.init)
            $0.security.masterKeyIps = ["10.0.0.0/8"].compactMap(IPRange.init)
        }
        try await TestServer.with(backend: backend, here) { p in
            let allowed = try await p.request(.get, "/schemas", master: false, extra: Self.readOnly)
            #expect(allowed.status == 200)
            #expect(try await p.request(.get, "/schemas").status == 403)
        }
    }

    @Test("request.isReadOnly is true for the read-only master key only", arguments: Backend.all)
    func cloudRequests(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options(), cloud: Self.cloud()) { p in
            let readOnly = try await p.request(.post, "/functions/who", [:], master: false, extra: Self.readOnly)
            #expect(readOnly.json == ["result": ["master": true, "isReadOnly": true]])
            #expect(try await p.request(.post, "/functions/who", [:]).json == ["result": ["master": true, "isReadOnly": false]])
            #expect(try await p.request(.post, "/functions/who", [:], master: false).json == ["result": ["master": false, "isReadOnly": false]])
        }
    }

    @Test("allowAggregationForReadOnlyMasterKey: true by default; false refuses the read-only key's aggregates with 119", arguments: Backend.all)
    func aggregation(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            _ = try await p.createId("Score", ["n": 1])
            let allowed = try await p.request(.get, "/aggregate/Score?distinct=n", master: false, extra: Self.readOnly)
            #expect(allowed.status == 200)
            #expect(allowed.json == ["results": [1]])
        }
        try await TestServer.with(backend: backend, Self.options { $0.allowAggregationForReadOnlyMasterKey = false }) { p in
            _ = try await p.createId("Score", ["n": 1])
            let refused = try await p.request(.get, "/aggregate/Score?distinct=n", master: false, extra: Self.readOnly)
            #expect(refused.status == 400)
            #expect(refused.json == ["code": 119, "error": "read-only masterKey isn't allowed to perform the aggregate operation."])
            #expect(try await p.request(.get, "/aggregate/Score?distinct=n").status == 200)
        }
    }
}
