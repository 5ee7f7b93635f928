import Foundation
import ParsleyCore
import ParsleyDomain
import Testing

/// The GraphQL API through a real GraphQL client from PyPI (`gql`, on graphql-core): the schema it introspects with the
/// master key is one graphql-core accepts, the documents it validates against it run, and errors arrive as Parse's
/// (Tests/graphql-client/gql_client.py).
@Suite("GraphQL through Python's gql client")
struct GraphQLClientTests {
    /// `gql` with its requests transport, installed from PyPI once per test process when python3 lacks it.
    static let gqlReady = Task { await PythonPackages.ensure(imports: "gql, requests", requirement: "gql[requests]") }

    /// `gql` with its websockets transport (subscriptions).
    static let websocketsReady = Task { await PythonPackages.ensure(imports: "gql, websockets", requirement: "gql[websockets]") }

    static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("graphql-client/\(name)")
            .path
    }

    @Test("gql: introspected schema, create, find with variables, node, update, refused documents, Parse error codes, delete", arguments: Backend.all)
    func client(_ backend: Backend) async throws {
        try #require(await Self.gqlReady.value, "python3 with gql[requests] (python3 -m pip install 'gql[requests]')")
        try await TestServer.with(backend: backend, TestServer.options { $0.mountGraphQL = true }) { p in
            // The class and its fields exist (the schema shows them); no object is left.
            let seed = try await p.createId("GameScore", ["score": 1, "playerName": "seed"])
            #expect(try await p.delete("GameScore", seed).status == 200)
            let port = try #require(p.port)
            let (status, output) = try await ChildProcess.run(
                "/usr/bin/env", ["python3", Self.script("gql_client.py"), "http://127.0.0.1:\(port)", p.options.applicationId, p.options.masterKey],
                limit: .seconds(120))
            #expect(status == 0, "\(output)")
            #expect(output.contains("gql client: all checks passed"), "\(output)")
        }
    }

    @Test(
        "subscriptions over graphql-transport-ws (gql's websockets transport): matching, readable events only, with the selection",
        arguments: Backend.all)
    func subscriptions(_ backend: Backend) async throws {
        try #require(await Self.websocketsReady.value, "python3 with gql[websockets] (python3 -m pip install 'gql[websockets]')")
        let options = TestServer.options {
            $0.mountGraphQL = true
            $0.liveQuery = LiveQueryOptions(classNames: ["GameScore"])
        }
        try await TestServer.with(backend: backend, options) { p in
            let seed = try await p.createId("GameScore", ["score": 1, "playerName": "seed"])
            #expect(try await p.delete("GameScore", seed).status == 200)
            let (_, token) = try await p.signUp("watcher", "pw-watcher")
            let (other, _) = try await p.signUp("other", "pw-other")
            let port = try #require(p.port)
            let (status, output) = try await ChildProcess.run(
                "/usr/bin/env", ["python3", Self.script("gql_subscriptions.py"), "http://127.0.0.1:\(port)", p.options.applicationId, token, other],
                limit: .seconds(120))
            #expect(status == 0, "\(output)")
            #expect(output.contains("gql subscriptions: all checks passed"), "\(output)")
        }
    }
}
