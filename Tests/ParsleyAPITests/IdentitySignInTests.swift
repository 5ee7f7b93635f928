import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyIdentityFakes
import Testing

/// Sign in with Apple, Google, Facebook Limited Login and a generic OpenID Connect provider, through the real server,
/// against a local identity provider whose JWKS the `auth` option points at (`jwksURL`).
@Suite("Sign in with identity tokens (Apple, Google, Facebook, OpenID Connect)")
struct IdentitySignInTests {
    static let appleClient = "com.example.parsley"
    static let googleClient = "1234-parsley.apps.googleusercontent.com"
    static let facebookApp = "555000111"
    static let apple = "https://appleid.apple.com"

    /// Every JWT provider configured against `fake`; `keycloak` is a generic OpenID Connect provider.
    static func auth(_ fake: FakeIdentityProvider) -> [String: JSONValue] {
        let jwks = JSONValue.string(fake.jwksURL)
        return [
            "apple": ["clientId": .string(appleClient), "jwksURL": jwks],
            "google": ["clientId": .string(googleClient), "jwksURL": jwks],
            "facebook": ["clientId": .string(facebookApp), "jwksURL": jwks],
            "keycloak": ["oidc": true, "issuer": .string(fake.issuer), "clientId": ["web-app", "ios-app"], "jwksURL": jwks],
        ]
    }

    static func with(
        _ backend: Backend, maxAge: Int? = 3600,
        configure: @escaping @Sendable (inout [String: JSONValue], FakeIdentityProvider) -> Void = { _, _ in },
        _ body: @escaping @Sendable (ParseClient, FakeIdentityProvider) async throws -> Void
    ) async throws {
        try await FakeIdentityProvider.with(maxAge: maxAge) { fake in
            var auth = Self.auth(fake)
            configure(&auth, fake)
            try await TestServer.with(backend: backend, TestServer.options { $0.accounts.auth = auth }) { p in try await body(p, fake) }
        }
    }

    static func appleData(_ fake: FakeIdentityProvider, _ id: String) -> JSONValue {
        ["apple": ["id": .string(id), "token": .string(fake.mint(sub: id, aud: .string(appleClient), iss: apple))]]
    }

    static func userCount(_ p: ParseClient) async throws -> Int { try await p.request(.get, "/users").results.count }

    @Test("Apple: sign-up 201 with a session, log-in 200 as the same user, link, 208 for another's id, unlink", arguments: Backend.all)
    func appleLifecycle(_ backend: Backend) async throws {
        try await Self.with(backend) { p, fake in
            let first = try await p.request(.post, "/users", ["authData": Self.appleData(fake, "001.apple")], master: false)
            #expect(first.status == 201)
            #expect(first["sessionToken"]?.stringValue?.isEmpty == false)
            let id = try #require(first["objectId"]?.stringValue)
            let again = try await p.request(.post, "/users", ["authData": Self.appleData(fake, "001.apple")], master: false)
            #expect(again.status == 200)
            #expect(again["objectId"]?.stringValue == id)
            let firstToken = try #require(again["sessionToken"]?.stringValue)
            // A log-in with a new identity token stores it (Parse Server's mutated authData).
            let newer = fake.mint(sub: "001.apple", aud: .string(Self.appleClient), iss: Self.apple, extra: ["nonce": "second"])
            let third = try await p.request(.post, "/users", ["authData": ["apple": ["id": "001.apple", "token": .string(newer)]]], master: false)
            #expect(third.status == 200 && third["objectId"]?.stringValue == id)
            #expect(try await p.request(.get, "/users/\(id)")["authData"]?["apple"]?["token"] == .string(newer))

            // A password user links Apple with its session, then signs in with it.
            let bob = try await p.signUp("bob")
            let link = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": Self.appleData(fake, "002.apple")])
            #expect(link.status == 200)
            let viaApple = try await p.request(.post, "/users", ["authData": Self.appleData(fake, "002.apple")], master: false)
            #expect(viaApple.status == 200)
            #expect(viaApple["objectId"]?.stringValue == bob.id)
            // Bob cannot take the first user's Apple id, even with a valid token for it.
            let steal = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": Self.appleData(fake, "001.apple")])
            #expect(steal.code == 208)
            #expect(steal["error"]?.stringValue == "this auth is already used")
            // A token that does not check out while linking: 206, as Parse Server answers.
            let forged = try await p.asUser(
                bob.token, .put, "/users/\(bob.id)",
                ["authData": ["apple": ["id": "003.apple", "token": .string(fake.mint(sub: "003.apple", aud: "another.app", iss: Self.apple))]]])
            #expect(forged.code == 206)

            // authData reaches its user and the master key only.
            let seenByBob = try await p.asUser(bob.token, .get, "/users/\(id)")
            #expect(seenByBob.status == 200 ? seenByBob["authData"] == nil : true)
            let me = try await p.asUser(firstToken, .get, "/users/me")
            #expect(me["authData"]?["apple"]?["id"] == "001.apple")
            let found = try await p.asUser(bob.token, .get, "/users")
            #expect(found.results.allSatisfy { $0["authData"] == nil || $0["objectId"]?.stringValue == bob.id })

            // Unlink: the Apple id no longer signs in as Bob (it makes a new user).
            let unlink = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": ["apple": nil]])
            #expect(unlink.status == 200)
            let bobNow = try await p.asUser(bob.token, .get, "/users/me")
            #expect(bobNow["authData"]?["apple"] == nil)
            let fresh = try await p.request(.post, "/users", ["authData": Self.appleData(fake, "002.apple")], master: false)
            #expect(fresh.status == 201)
            #expect(fresh["objectId"]?.stringValue != bob.id)
        }
    }

    @Test(
        "Google (either issuer spelling), Facebook Limited Login and a generic OpenID Connect provider sign up, then log in", arguments: Backend.all)
    func otherProviders(_ backend: Backend) async throws {
        try await Self.with(backend) { p, fake in
            let cases: [(String, JSONValue)] = [
                ("google", ["id": "g-1", "id_token": .string(fake.mint(sub: "g-1", aud: .string(Self.googleClient), iss: "accounts.google.com"))]),
                (
                    "google",
                    ["id": "g-2", "id_token": .string(fake.mint(sub: "g-2", aud: .string(Self.googleClient), iss: "https://accounts.google.com"))]
                ),
                (
                    "facebook",
                    ["id": "fb-1", "token": .string(fake.mint(sub: "fb-1", aud: .string(Self.facebookApp), iss: "https://www.facebook.com"))]
                ),
                (
                    "facebook",
                    ["id": "fb-2", "token": .string(fake.mint(sub: "fb-2", aud: .string(Self.facebookApp), iss: "https://limited.facebook.com"))]
                ),
                ("keycloak", ["id": "kc-1", "id_token": .string(fake.mint(sub: "kc-1", aud: "ios-app"))]),
                ("keycloak", ["id": "kc-2", "id_token": .string(fake.mint(sub: "kc-2", aud: ["web-app", "account"]))]),
            ]
            for (provider, data) in cases {
                let signUp = try await p.request(.post, "/users", ["authData": .object([provider: data])], master: false)
                #expect(signUp.status == 201, "\(provider) \(data["id"] ?? nil): \(signUp.json)")
                let logIn = try await p.request(.post, "/users", ["authData": .object([provider: data])], master: false)
                #expect(logIn.status == 200)
                #expect(logIn["objectId"] == signUp["objectId"])
            }
            #expect(try await Self.userCount(p) == cases.count)
        }
    }

    @Test("a provider not configured, or enabled: false, answers 252 and creates no user; anonymous stays on unless disabled", arguments: Backend.all)
    func unsupported(_ backend: Backend) async throws {
        try await Self.with(
            backend,
            configure: { auth, _ in
                auth["apple"] = ["clientId": .string(Self.appleClient), "enabled": false]
                auth["google"] = nil
            }
        ) { p, fake in
            let apple = try await p.request(.post, "/users", ["authData": Self.appleData(fake, "x")], master: false)
            #expect(apple.status == 400)
            #expect(apple.code == 252)
            #expect(apple["error"]?.stringValue == "This authentication method is unsupported.")
            let google = try await p.request(
                .post, "/users", ["authData": ["google": ["id": "g", "id_token": .string(fake.mint(sub: "g", aud: .string(Self.googleClient)))]]],
                master: false)
            #expect(google.code == 252)
            #expect(try await Self.userCount(p) == 0)
            let anonymous = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "device"]]], master: false)
            #expect(anonymous.status == 201)
        }
        try await Self.with(backend, configure: { auth, _ in auth = ["anonymous": ["enabled": false], "github": ["enabled": false]] }) { p, _ in
            let anonymous = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "device"]]], master: false)
            #expect(anonymous.code == 252)
            let github = try await p.request(.post, "/users", ["authData": ["github": ["id": "1", "access_token": "t"]]], master: false)
            #expect(github.code == 252)
            #expect(try await Self.userCount(p) == 0)
        }
    }
}
