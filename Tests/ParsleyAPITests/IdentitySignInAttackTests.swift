import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyIdentityFakes
import Testing

/// Forged and misdirected identity tokens, the provider's key cache, and a provider that cannot be reached.
@Suite("Sign in with identity tokens: attacks, key cache, unreachable provider")
struct IdentitySignInAttackTests {
    typealias Sign = IdentitySignInTests

    /// A provider's authData for `id` with `token`, in that provider's shape.
    static func data(_ provider: String, id: String, token: String) -> JSONValue {
        let field = provider == "apple" || provider == "facebook" ? "token" : "id_token"
        return .object([provider: .object(["id": .string(id), field: .string(token)])])
    }

    /// The audience and issuer a provider's good tokens carry.
    static func audienceAndIssuer(_ provider: String, _ fake: FakeIdentityProvider) -> (JSONValue, String) {
        switch provider {
        case "apple": (.string(Sign.appleClient), Sign.apple)
        case "google": (.string(Sign.googleClient), "https://accounts.google.com")
        case "facebook": (.string(Sign.facebookApp), "https://limited.facebook.com")
        default: ("web-app", fake.issuer)
        }
    }

    @Test("every forged or misdirected token answers 101 and creates no user", arguments: Backend.all)
    func attacks(_ backend: Backend) async throws {
        try await Sign.with(backend) { p, fake in
            for provider in ["apple", "google", "facebook", "keycloak"] {
                let (aud, iss) = Self.audienceAndIssuer(provider, fake)
                // The good token works (so each refusal below is the attack's doing).
                let good = try await p.request(
                    .post, "/users", ["authData": Self.data(provider, id: "good", token: fake.mint(sub: "good", aud: aud, iss: iss))], master: false)
                #expect(good.status == 201, "\(provider): \(good.json)")
                var attacks: [(String, String, String)] = TokenForgery.allCases.map {
                    ("\($0)", "victim", fake.mint(sub: "victim", aud: aud, iss: iss, forgery: $0))
                }
                attacks += [
                    ("expired", "victim", fake.mint(sub: "victim", aud: aud, iss: iss, expiresIn: -60)),
                    ("another app's token", "victim", fake.mint(sub: "victim", aud: "someone-elses-app", iss: iss)),
                    ("audience list without ours", "victim", fake.mint(sub: "victim", aud: ["a", "b"], iss: iss)),
                    ("wrong issuer", "victim", fake.mint(sub: "victim", aud: aud, iss: "https://evil.example")),
                    ("sub != id", "victim", fake.mint(sub: "attacker", aud: aud, iss: iss)),
                    (
                        "not before", "victim",
                        fake.mint(sub: "victim", aud: aud, iss: iss, extra: ["nbf": .int(Int64(Date().timeIntervalSince1970) + 3600)])
                    ),
                    ("not a JWT", "victim", "not.a.jwt"),
                    ("empty", "victim", ""),
                ]
                for (attack, id, token) in attacks {
                    let r = try await p.request(.post, "/users", ["authData": Self.data(provider, id: id, token: token)], master: false)
                    #expect(r.status == 404 && r.code == 101, "\(provider), \(attack): \(r.status) \(r.json)")
                }
                // Linking with a forged token is refused too (206 for a user's session, as Parse Server).
                let bob = try await p.signUp("bob-\(provider)")
                let link = try await p.asUser(
                    bob.token, .put, "/users/\(bob.id)",
                    ["authData": Self.data(provider, id: "victim", token: fake.mint(sub: "victim", aud: aud, iss: iss, forgery: .otherKey))])
                #expect(link.code == 206)
            }
            let users = try await p.request(.get, "/users")
            #expect(users.results.count == 8)  // a good sign-up and a bob per provider
            #expect(users.results.allSatisfy { $0["authData"]?.objectValue?.values.contains { $0["id"] == "victim" } != true })
        }
    }

    @Test("malformed headers answer 101: no kid, a kid that is no string, critical extensions, alg of another case, a header that is no JSON")
    func malformedHeaders() async throws {
        try await Sign.with(.sqlite) { p, fake in
            let good = fake.mint(sub: "m", aud: .string(Sign.appleClient), iss: Sign.apple)
            let parts = good.split(separator: ".").map(String.init)
            try #require(parts.count == 3)
            func header(_ json: String) -> String { IdentityTokenMinter.base64URL(Data(json.utf8)) }
            let kid = fake.signingKey.kid
            let headers = [
                #"{"alg":"RS256"}"#, #"{"alg":"RS256","kid":1}"#, #"{"alg":"RS256","kid":"\#(kid)","crit":["exp"]}"#,
                #"{"alg":"rs256","kid":"\#(kid)"}"#, #"{"alg":["RS256"],"kid":"\#(kid)"}"#, "not json",
            ]
            for h in headers {
                let token = "\(header(h)).\(parts[1]).\(parts[2])"
                let r = try await p.request(.post, "/users", ["authData": ["apple": ["id": "m", "token": .string(token)]]], master: false)
                #expect(r.code == 101, "\(h): \(r.json)")
            }
            // The same signature under its own header checks out (so the refusals above are the headers' doing).
            let r = try await p.request(.post, "/users", ["authData": ["apple": ["id": "m", "token": .string(good)]]], master: false)
            #expect(r.status == 201)
        }
    }

    @Test("ES256: an OpenID Connect provider takes P-256 keys, Apple (RS256 only) does not; forged ES256 tokens are 101", arguments: Backend.all)
    func es256(_ backend: Backend) async throws {
        try await Sign.with(backend) { p, fake in
            fake.useES256()
            let good = try await p.request(
                .post, "/users", ["authData": Self.data("keycloak", id: "ec-1", token: fake.mint(sub: "ec-1", aud: "web-app"))], master: false)
            #expect(good.status == 201, "\(good.json)")
            let apple = fake.mint(sub: "ec-1", aud: .string(Sign.appleClient), iss: Sign.apple)
            let refused = try await p.request(.post, "/users", ["authData": Self.data("apple", id: "ec-1", token: apple)], master: false)
            #expect(refused.code == 101)
            for forgery in TokenForgery.allCases {
                let token = fake.mint(sub: "ec-2", aud: "web-app", forgery: forgery)
                let r = try await p.request(.post, "/users", ["authData": Self.data("keycloak", id: "ec-2", token: token)], master: false)
                #expect(r.code == 101, "\(forgery): \(r.json)")
            }
            #expect(try await Sign.userCount(p) == 1)
        }
    }

    @Test("the JWKS is fetched once for many log-ins, again once for a rotated key, and not for every unknown kid", arguments: Backend.all)
    func keyCache(_ backend: Backend) async throws {
        try await Sign.with(backend) { p, fake in
            for n in 0..<5 {
                let r = try await p.request(.post, "/users", ["authData": Sign.appleData(fake, "user-\(n % 2)")], master: false)
                #expect(r.status == 201 || r.status == 200)
            }
            #expect(fake.jwksFetches == 1)
            // The provider rotates its keys: the first token with the new kid fetches the set again, once.
            fake.rotate()
            let rotated = try await p.request(.post, "/users", ["authData": Sign.appleData(fake, "user-0")], master: false)
            #expect(rotated.status == 200)
            #expect(fake.jwksFetches == 2)
            _ = try await p.request(.post, "/users", ["authData": Sign.appleData(fake, "user-1")], master: false)
            #expect(fake.jwksFetches == 2)
            // Tokens with made-up kids right after: refused without asking the provider each time.
            for _ in 0..<3 {
                let forged = fake.mint(sub: "user-0", aud: .string(Sign.appleClient), iss: Sign.apple, forgery: .unknownKid)
                let r = try await p.request(.post, "/users", ["authData": ["apple": ["id": "user-0", "token": .string(forged)]]], master: false)
                #expect(r.code == 101)
            }
            #expect(fake.jwksFetches == 2)
        }
    }

    @Test("concurrent first log-ins share one JWKS fetch; max-age=0 fetches every time", arguments: Backend.all)
    func oneFetchInFlight(_ backend: Backend) async throws {
        try await Sign.with(backend) { p, fake in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<8 {
                    group.addTask { try await p.request(.post, "/users", ["authData": Sign.appleData(fake, "c-\(n)")], master: false).status }
                }
                for try await status in group { #expect(status == 201) }
            }
            #expect(fake.jwksFetches == 1)
        }
        try await Sign.with(backend, maxAge: 0) { p, fake in
            for _ in 0..<3 { _ = try await p.request(.post, "/users", ["authData": Sign.appleData(fake, "z")], master: false) }
            #expect(fake.jwksFetches == 3)
        }
    }

    @Test("an unreachable, failing or hanging JWKS answers 101 promptly, creates nothing, and recovers", arguments: Backend.all)
    func unreachable(_ backend: Backend) async throws {
        try await Sign.with(
            backend, configure: { auth, _ in auth["apple"] = ["clientId": .string(Sign.appleClient), "jwksURL": "http://127.0.0.1:1/jwks"] }
        ) { p, fake in
            let start = ContinuousClock.now
            let r = try await p.request(.post, "/users", ["authData": Sign.appleData(fake, "a")], master: false)
            #expect(r.code == 101)
            #expect(r["error"]?.stringValue?.contains("could not be fetched") == true)
            // The HTTP client retries refused connections until the fetch's 5 s timeout; never longer (the bound leaves
            // room for two loaded cores; the fake hangs 60 s).
            #expect(ContinuousClock.now - start < .seconds(15))
        }
        try await Sign.with(backend) { p, fake in
            fake.setBehaviour(.serverError)
            let failing = try await p.request(.post, "/users", ["authData": Sign.appleData(fake, "a")], master: false)
            #expect(failing.code == 101)
            fake.setBehaviour(.hang)
            let start = ContinuousClock.now
            let hanging = try await p.request(.post, "/users", ["authData": Sign.appleData(fake, "a")], master: false)
            #expect(hanging.code == 101)
            #expect(ContinuousClock.now - start < .seconds(15))
            #expect(try await Sign.userCount(p) == 0)
            fake.setBehaviour(.normal)
            let recovered = try await p.request(.post, "/users", ["authData": Sign.appleData(fake, "a")], master: false)
            #expect(recovered.status == 201)
        }
    }
}
