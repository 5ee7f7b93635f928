import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyIdentityFakes
import Testing

/// Providers configured with `"oauth2": true` (Parse Server's oauth2 adapter): `{id, access_token}` checked by the
/// authorization server's token introspection endpoint (RFC 7662), through the real server, against a local endpoint.
@Suite("Sign in with an OAuth 2.0 provider (oauth2: true, token introspection)")
struct OAuth2SignInTests {
    static let basic = "Basic cGFyc2xleTpzM2NyZXQ="

    /// `corp`: client ids checked, with credentials for the endpoint; `legacy`: the user id in `user_id`, nothing else;
    /// `plain`: nothing but the endpoint (the user id in `sub`).
    static func auth(_ fake: FakeAccessTokenProvider, endpoint: String? = nil) -> [String: JSONValue] {
        let url = JSONValue.string(endpoint ?? fake.introspectionURL)
        return [
            "corp": [
                "oauth2": true, "tokenIntrospectionEndpointUrl": url, "appidField": "client_id", "appIds": ["ios-app", "web-app"],
                "authorizationHeader": .string(basic),
            ],
            "legacy": ["oauth2": true, "tokenIntrospectionEndpointUrl": url, "useridField": "user_id"],
            "plain": ["oauth2": true, "tokenIntrospectionEndpointUrl": url],
        ]
    }

    static func with(
        _ backend: Backend, endpoint: String? = nil, _ body: @escaping @Sendable (ParseClient, FakeAccessTokenProvider) async throws -> Void
    ) async throws {
        try await FakeAccessTokenProvider.with { fake in
            let options = TestServer.options { $0.accounts.auth = Self.auth(fake, endpoint: endpoint) }
            try await TestServer.with(backend: backend, options) { p in try await body(p, fake) }
        }
    }

    static func data(_ id: String, _ token: String, provider: String = "corp") -> JSONValue {
        .object([provider: ["id": .string(id), "access_token": .string(token)]])
    }

    static func userCount(_ p: ParseClient) async throws -> Int { try await p.request(.get, "/users").results.count }

    @Test(
        "sign-up 201 with a session, log-in 200 as the same user, link, 208 for another's id, 206 for a bad token, unlink",
        arguments: Backend.all)
    func lifecycle(_ backend: Backend) async throws {
        try await Self.with(backend) { p, fake in
            // A token with characters a form body must escape reaches the endpoint unchanged.
            let aliceToken = "at+alice/1=&token=x"
            fake.setIntrospection(aliceToken, ["active": true, "sub": "alice", "client_id": "ios-app", "scope": "openid"])
            fake.setIntrospection("at-bob", ["active": true, "sub": "bob", "client_id": ["other-app", "web-app"]])
            let first = try await p.request(.post, "/users", ["authData": Self.data("alice", aliceToken)], master: false)
            #expect(first.status == 201, "\(first.json)")
            #expect(first["sessionToken"]?.stringValue?.isEmpty == false)
            let alice = try #require(first["objectId"]?.stringValue)
            let again = try await p.request(.post, "/users", ["authData": Self.data("alice", aliceToken)], master: false)
            #expect(again.status == 200)
            #expect(again["objectId"]?.stringValue == alice)

            let bob = try await p.signUp("bob")
            let link = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": Self.data("bob", "at-bob")])
            #expect(link.status == 200, "\(link.json)")
            let viaCorp = try await p.request(.post, "/users", ["authData": Self.data("bob", "at-bob")], master: false)
            #expect(viaCorp["objectId"]?.stringValue == bob.id)
            let steal = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": Self.data("alice", aliceToken)])
            #expect(steal.code == 208)
            let unknown = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": Self.data("carol", "made-up")])
            #expect(unknown.code == 206)
            let unlink = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": ["corp": nil]])
            #expect(unlink.status == 200)
            let fresh = try await p.request(.post, "/users", ["authData": Self.data("bob", "at-bob")], master: false)
            #expect(fresh.status == 201)
            #expect(fresh["objectId"]?.stringValue != bob.id)

            // Every call was a form POST with the configured credentials and the token as sent.
            let calls = fake.introspectionCalls
            #expect(calls.contains { $0.token == aliceToken })
            #expect(calls.allSatisfy { $0.authorization == Self.basic && $0.contentType == "application/x-www-form-urlencoded" })
        }
    }

    @Test("useridField names the field the user id is in (default sub); no authorizationHeader sends no Authorization", arguments: Backend.all)
    func fields(_ backend: Backend) async throws {
        try await Self.with(backend) { p, fake in
            fake.setIntrospection("at-legacy", ["active": true, "user_id": "u-1", "sub": "someone-else"])
            let legacy = try await p.request(.post, "/users", ["authData": Self.data("u-1", "at-legacy", provider: "legacy")], master: false)
            #expect(legacy.status == 201, "\(legacy.json)")
            #expect(fake.introspectionCalls.last == .init(authorization: nil, contentType: "application/x-www-form-urlencoded", token: "at-legacy"))
            // `sub`, not `user_id`, names the user of a provider without useridField.
            let bySub = try await p.request(.post, "/users", ["authData": Self.data("someone-else", "at-legacy", provider: "plain")], master: false)
            #expect(bySub.status == 201)
            let byUserId = try await p.request(.post, "/users", ["authData": Self.data("u-1", "at-legacy", provider: "plain")], master: false)
            #expect(byUserId.code == 101)
            #expect(try await Self.userCount(p) == 2)
        }
    }

    @Test("an inactive token, another client's, another user's, an unknown one, a failing endpoint: 101, no user", arguments: Backend.all)
    func attacks(_ backend: Backend) async throws {
        try await Self.with(backend) { p, fake in
            let invalid = "OAuth2 access token is invalid for this user."
            let invalidApp = "OAuth2: Invalid app ID."
            let failed = "OAuth2 token introspection request failed."
            let answers: [(String, JSONValue, String)] = [
                ("inactive", ["active": false, "sub": "alice", "client_id": "ios-app"], invalid),
                ("active as a string", ["active": "true", "sub": "alice", "client_id": "ios-app"], invalid),
                ("another client", ["active": true, "sub": "alice", "client_id": "evil-app"], invalidApp),
                ("a client list without ours", ["active": true, "sub": "alice", "client_id": ["evil-app", "other"]], invalidApp),
                ("no client", ["active": true, "sub": "alice"], invalidApp),
                ("another user", ["active": true, "sub": "mallory", "client_id": "ios-app"], invalid),
                ("no user", ["active": true, "client_id": "ios-app"], invalid),
                ("a JSON answer that is no object", [["active": true, "sub": "alice", "client_id": "ios-app"]], failed),
            ]
            for (attack, answer, message) in answers {
                let token = "at-\(attack)"
                fake.setIntrospection(token, answer)
                let r = try await p.request(.post, "/users", ["authData": Self.data("alice", token)], master: false)
                #expect(r.status == 404 && r.code == 101, "\(attack): \(r.status) \(r.json)")
                #expect(r["error"]?.stringValue == message, "\(attack): \(r.json)")
            }
            let malformed: [(String, JSONValue)] = [
                ("an unknown token", Self.data("alice", "made-up")),
                ("an empty token", Self.data("alice", "")),
                ("no access_token", ["corp": ["id": "alice"]]),
                ("an id that is a number", ["corp": ["id": 7, "access_token": "made-up"]]),
            ]
            for (attack, authData) in malformed {
                let r = try await p.request(.post, "/users", ["authData": authData], master: false)
                #expect(r.code == 101 && r["error"]?.stringValue == invalid, "\(attack): \(r.json)")
            }
            fake.setIntrospection("at-alice", ["active": true, "sub": "alice", "client_id": "web-app"])
            for behaviour in [FakeAccessTokenProvider.Behaviour.serverError, .notJSON] {
                fake.setBehaviour(behaviour)
                let r = try await p.request(.post, "/users", ["authData": Self.data("alice", "at-alice")], master: false)
                #expect(r.code == 101 && r["error"]?.stringValue == failed, "\(behaviour): \(r.json)")
            }
            #expect(try await Self.userCount(p) == 0)
            // Alice's own token works (so each refusal above is the attack's doing).
            fake.setBehaviour(.normal)
            let good = try await p.request(.post, "/users", ["authData": Self.data("alice", "at-alice")], master: false)
            #expect(good.status == 201)
        }
    }

    @Test("an endpoint that is down or hangs answers 101 within seconds, creates nothing, and recovers", arguments: Backend.all)
    func unreachable(_ backend: Backend) async throws {
        try await Self.with(backend, endpoint: "http://127.0.0.1:1/introspect") { p, _ in
            let start = ContinuousClock.now
            let r = try await p.request(.post, "/users", ["authData": Self.data("alice", "at-alice")], master: false)
            #expect(r.code == 101 && r["error"]?.stringValue == "OAuth2 token introspection request failed.", "\(r.json)")
            // The provider call's timeout is 5 s and the fake hangs 60 s: the bound leaves room for two loaded cores.
            #expect(ContinuousClock.now - start < .seconds(15))
        }
        try await Self.with(backend) { p, fake in
            fake.setIntrospection("at-alice", ["active": true, "sub": "alice", "client_id": "ios-app"])
            fake.setBehaviour(.hang)
            let start = ContinuousClock.now
            let r = try await p.request(.post, "/users", ["authData": Self.data("alice", "at-alice")], master: false)
            #expect(r.code == 101 && r["error"]?.stringValue == "OAuth2 token introspection request failed.", "\(r.json)")
            #expect(ContinuousClock.now - start < .seconds(15))
            #expect(try await Self.userCount(p) == 0)
            fake.setBehaviour(.normal)
            let recovered = try await p.request(.post, "/users", ["authData": Self.data("alice", "at-alice")], master: false)
            #expect(recovered.status == 201)
        }
    }
}
