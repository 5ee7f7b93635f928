import Hummingbird
import HummingbirdTesting
import ParsleyCore
import ParsleyDomain
import Testing

@Suite("authData providers")
struct AuthProviderTests {
    /// A stand-in for GitHub's API on loopback: token "good-token" belongs to user 4242.
    static func withFakeGitHub(_ body: @escaping @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.get("/user") { request, _ -> Response in
            guard request.headers[.authorization] == "bearer good-token" else { return Response(status: .unauthorized) }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"id":4242,"login":"octocat"}"#)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            guard let port = client.port else { throw Failure("no port") }
            try await body("http://127.0.0.1:\(port)")
        }
    }

    @Test("GitHub authData: a valid token signs up then logs in; a wrong token or id is refused", arguments: Backend.all)
    func github(_ backend: Backend) async throws {
        try await Self.withFakeGitHub { url in
            try await TestServer.with(backend: backend, TestServer.options { $0.accounts.githubAPIURL = url }) { p in
                let good: JSONValue = ["authData": ["github": ["id": "4242", "access_token": "good-token"]]]
                let first = try await p.request(.post, "/users", good, master: false)
                #expect(first.status == 201)
                let id = try #require(first["objectId"]?.stringValue)
                let again = try await p.request(.post, "/users", good, master: false)
                #expect(again.status == 200)
                #expect(again["objectId"]?.stringValue == id)
                #expect(again["sessionToken"] != nil)
                let badToken = try await p.request(
                    .post, "/users", ["authData": ["github": ["id": "4242", "access_token": "stolen"]]], master: false)
                #expect(badToken.code == 101)
                let otherId = try await p.request(
                    .post, "/users", ["authData": ["github": ["id": "1", "access_token": "good-token"]]], master: false)
                #expect(otherId.code == 101)
                let users = try await p.request(.get, "/users")
                #expect(users.results.count == 1)
            }
        }
    }

    @Test("an unreachable provider is a Parse error, not a crash", arguments: Backend.all)
    func unreachable(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.accounts.githubAPIURL = "http://127.0.0.1:1" }) { p in
            let r = try await p.request(.post, "/users", ["authData": ["github": ["id": "4242", "access_token": "good-token"]]], master: false)
            #expect(r.status == 400)
            #expect(r.code == 251)
        }
    }
}
