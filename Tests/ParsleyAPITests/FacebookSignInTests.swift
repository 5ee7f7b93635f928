import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyIdentityFakes
import Testing

/// Facebook classic log-in (`{id, access_token}`, checked by the Graph API) beside Limited Login (`{id, token}`), through
/// the real server, against a local Graph API the `auth` option points at (`graphURL`).
@Suite("Sign in with Facebook: Graph API access tokens and Limited Login")
struct FacebookSignInTests {
    static let app = "555000111"
    static let secret = "fb-app-secret"

    /// `auth.facebook` for Graph API log-ins only.
    static func graphOnly(_ graph: FakeAccessTokenProvider, appSecret: String? = secret) -> JSONValue {
        var entry: [String: JSONValue] = ["appIds": [.string(app)], "graphURL": .string(graph.graphURL)]
        if let appSecret { entry["appSecret"] = .string(appSecret) }
        return .object(entry)
    }

    /// A server whose `auth.facebook` is `facebook(graph)`, beside a Graph API that requires the app secret's proof.
    static func with(
        _ backend: Backend, facebook: @escaping @Sendable (FakeAccessTokenProvider) -> JSONValue = { graphOnly($0) },
        _ body: @escaping @Sendable (ParseClient, FakeAccessTokenProvider) async throws -> Void
    ) async throws {
        try await FakeAccessTokenProvider.with { graph in
            graph.setAppSecret(secret)
            let options = TestServer.options { $0.accounts.auth = ["facebook": facebook(graph)] }
            try await TestServer.with(backend: backend, options) { p in try await body(p, graph) }
        }
    }

    static func data(_ id: String, _ token: String) -> JSONValue { ["facebook": ["id": .string(id), "access_token": .string(token)]] }

    static func userCount(_ p: ParseClient) async throws -> Int { try await p.request(.get, "/users").results.count }

    @Test(
        "Graph API: sign-up 201 with a session, log-in 200 as the same user, link, 208 for another's id, 206 for a bad token, unlink",
        arguments: Backend.all)
    func graphLifecycle(_ backend: Backend) async throws {
        try await Self.with(backend) { p, graph in
            // A token with characters a query string must escape reaches the Graph API unchanged.
            let aliceToken = "EAAB+tok/1=&fields=name"
            graph.addGraphToken(aliceToken, userId: "10001", appId: Self.app)
            graph.addGraphToken("EAAB-bob", userId: "10002", appId: Self.app)
            let first = try await p.request(.post, "/users", ["authData": Self.data("10001", aliceToken)], master: false)
            #expect(first.status == 201, "\(first.json)")
            #expect(first["sessionToken"]?.stringValue?.isEmpty == false)
            let alice = try #require(first["objectId"]?.stringValue)
            let again = try await p.request(.post, "/users", ["authData": Self.data("10001", aliceToken)], master: false)
            #expect(again.status == 200)
            #expect(again["objectId"]?.stringValue == alice)

            // A password user links Facebook with its session, then signs in with it.
            let bob = try await p.signUp("bob")
            let link = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": Self.data("10002", "EAAB-bob")])
            #expect(link.status == 200, "\(link.json)")
            let viaFacebook = try await p.request(.post, "/users", ["authData": Self.data("10002", "EAAB-bob")], master: false)
            #expect(viaFacebook.status == 200)
            #expect(viaFacebook["objectId"]?.stringValue == bob.id)
            // Alice's Facebook id stays hers, even with a valid token for it; a token that does not check out is 206.
            let steal = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": Self.data("10001", aliceToken)])
            #expect(steal.code == 208)
            let unknown = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": Self.data("10003", "made-up")])
            #expect(unknown.code == 206)

            // Unlink: the Facebook id no longer signs in as Bob (it makes a new user).
            let unlink = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": ["facebook": nil]])
            #expect(unlink.status == 200)
            #expect(try await p.asUser(bob.token, .get, "/users/me")["authData"]?["facebook"] == nil)
            let fresh = try await p.request(.post, "/users", ["authData": Self.data("10002", "EAAB-bob")], master: false)
            #expect(fresh.status == 201)
            #expect(fresh["objectId"]?.stringValue != bob.id)

            // Every call asked about the app and the user, with the token as sent and its appsecret_proof.
            let calls = graph.graphCalls
            #expect(calls.contains { $0.path == "app" && $0.accessToken == aliceToken })
            #expect(calls.contains { $0.path == "me" && $0.accessToken == aliceToken })
            #expect(
                calls.allSatisfy {
                    $0.appSecretProof == FakeAccessTokenProvider.appSecretProof($0.accessToken ?? "", secret: Self.secret)
                })
        }
    }

    @Test(
        "Graph API: another user's id, another app's token, an unknown or smuggled token, a failing Graph API: 101, no user",
        arguments: Backend.all)
    func graphAttacks(_ backend: Backend) async throws {
        try await Self.with(backend) { p, graph in
            graph.addGraphToken("victim-token", userId: "20001", appId: Self.app)
            graph.addGraphToken("attacker-token", userId: "20666", appId: Self.app)
            // The victim's token from another Facebook app (a game that asked the victim to log in with Facebook).
            graph.addGraphToken("other-app-token", userId: "20001", appId: "999000999")
            let attacks: [(String, JSONValue)] = [
                ("another user's id with one's own token", Self.data("20001", "attacker-token")),
                ("a token another Facebook app obtained", Self.data("20001", "other-app-token")),
                ("an unknown token", Self.data("20001", "made-up")),
                ("a valid token with a query string appended", Self.data("20001", "victim-token&fields=id")),
                ("an empty token", Self.data("20001", "")),
                ("no access_token", ["facebook": ["id": "20001"]]),
                ("a token that is a list", ["facebook": ["id": "20001", "access_token": ["victim-token"]]]),
                ("an empty id", Self.data("", "victim-token")),
            ]
            for (attack, authData) in attacks {
                let r = try await p.request(.post, "/users", ["authData": authData], master: false)
                #expect(r.status == 404 && r.code == 101, "\(attack): \(r.status) \(r.json)")
                #expect(r["error"]?.stringValue == "Facebook auth is invalid for this user.", "\(attack)")
            }
            for behaviour in [FakeAccessTokenProvider.Behaviour.serverError, .notJSON] {
                graph.setBehaviour(behaviour)
                let r = try await p.request(.post, "/users", ["authData": Self.data("20001", "victim-token")], master: false)
                #expect(r.code == 101, "\(behaviour): \(r.json)")
            }
            #expect(try await Self.userCount(p) == 0)
            // The victim's own token works (so each refusal above is the attack's doing).
            graph.setBehaviour(.normal)
            let good = try await p.request(.post, "/users", ["authData": Self.data("20001", "victim-token")], master: false)
            #expect(good.status == 201)
        }
        // A server whose app secret is not the app's own (its appsecret_proof does not check out), or that sends none.
        for appSecret in ["not-the-app-secret", nil] {
            try await Self.with(backend, facebook: { Self.graphOnly($0, appSecret: appSecret) }) { p, graph in
                graph.addGraphToken("victim-token", userId: "20001", appId: Self.app)
                let r = try await p.request(.post, "/users", ["authData": Self.data("20001", "victim-token")], master: false)
                #expect(r.code == 101 && r["error"]?.stringValue == "Facebook auth is invalid for this user.", "\(appSecret ?? "none"): \(r.json)")
                #expect(try await Self.userCount(p) == 0)
            }
        }
    }

    @Test("an unreachable or hanging Graph API answers 101 within seconds, creates nothing, and recovers", arguments: Backend.all)
    func graphUnreachable(_ backend: Backend) async throws {
        try await Self.with(backend, facebook: { _ in ["appIds": .string(Self.app), "graphURL": "http://127.0.0.1:1"] }) { p, _ in
            let start = ContinuousClock.now
            let r = try await p.request(.post, "/users", ["authData": Self.data("1", "t")], master: false)
            #expect(r.code == 101)
            #expect(r["error"]?.stringValue?.contains("could not be verified") == true)
            // The provider call's timeout is 5 s and the fake hangs 60 s: the bound leaves room for two loaded cores.
            #expect(ContinuousClock.now - start < .seconds(15))
        }
        try await Self.with(backend) { p, graph in
            graph.addGraphToken("t", userId: "1", appId: Self.app)
            graph.setBehaviour(.hang)
            let start = ContinuousClock.now
            let r = try await p.request(.post, "/users", ["authData": Self.data("1", "t")], master: false)
            #expect(r.code == 101)
            #expect(r["error"]?.stringValue?.contains("could not be verified") == true)
            #expect(ContinuousClock.now - start < .seconds(15))
            #expect(try await Self.userCount(p) == 0)
            graph.setBehaviour(.normal)
            let recovered = try await p.request(.post, "/users", ["authData": Self.data("1", "t")], master: false)
            #expect(recovered.status == 201)
        }
    }

    @Test("clientId and appIds: both shapes sign in as the one Facebook user; a shape not configured answers 101", arguments: Backend.all)
    func bothShapes(_ backend: Backend) async throws {
        try await FakeIdentityProvider.with { idp in
            let limited = idp.mint(sub: "30001", aud: .string(Self.app), iss: "https://www.facebook.com")
            let limitedData: JSONValue = ["facebook": ["id": "30001", "token": .string(limited)]]
            try await Self.with(
                backend,
                facebook: { graph in
                    [
                        "clientId": .string(Self.app), "jwksURL": .string(idp.jwksURL), "appIds": [.string(Self.app)],
                        "graphURL": .string(graph.graphURL), "appSecret": .string(Self.secret),
                    ]
                }
            ) { p, graph in
                graph.addGraphToken("EAAB-30001", userId: "30001", appId: Self.app)
                let viaLimited = try await p.request(.post, "/users", ["authData": limitedData], master: false)
                #expect(viaLimited.status == 201, "\(viaLimited.json)")
                let viaGraph = try await p.request(.post, "/users", ["authData": Self.data("30001", "EAAB-30001")], master: false)
                #expect(viaGraph.status == 200, "\(viaGraph.json)")
                #expect(viaGraph["objectId"] == viaLimited["objectId"])
            }
            try await Self.with(backend) { p, _ in
                let r = try await p.request(.post, "/users", ["authData": limitedData], master: false)
                #expect(r.code == 101 && r["error"]?.stringValue == "Facebook auth is not configured.", "\(r.json)")
            }
            try await Self.with(backend, facebook: { _ in ["clientId": .string(Self.app), "jwksURL": .string(idp.jwksURL)] }) { p, graph in
                graph.addGraphToken("EAAB-30001", userId: "30001", appId: Self.app)
                let r = try await p.request(.post, "/users", ["authData": Self.data("30001", "EAAB-30001")], master: false)
                #expect(r.code == 101 && r["error"]?.stringValue == "Facebook auth is not configured.", "\(r.json)")
                #expect(graph.graphCalls.isEmpty)
                #expect(try await Self.userCount(p) == 0)
            }
        }
    }
}
