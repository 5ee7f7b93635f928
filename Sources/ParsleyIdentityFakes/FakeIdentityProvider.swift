import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
public import ParsleyCore
import Synchronization

/// A real OpenID Connect identity provider stand-in on 127.0.0.1: `GET /jwks` serves its public keys with
/// `Cache-Control: public, max-age=<maxAge>` and counts the fetches; `mint` signs identity tokens (RS256) with its
/// current key, or forges them (`TokenForgery`). `rotate()` publishes a new key and signs with it from then on,
/// as Apple and Google do every few weeks.
public final class FakeIdentityProvider: Sendable {
    /// How `GET /jwks` answers.
    public enum JWKSBehaviour: Sendable {
        case normal
        /// Never answers (until the fake stops, or after a minute).
        case hang
        /// 500 with an HTML body.
        case serverError
    }

    public let port: Int
    /// The `iss` of its tokens.
    public let issuer: String
    private struct State {
        var published: [FakeSigningKey]
        var fetches = 0
        var maxAge: Int?
        var behaviour = JWKSBehaviour.normal
    }
    private let state: Mutex<State>

    /// The keys every fake starts with: generated once per test run.
    static let firstKey = FakeSigningKey.make(kid: "fake-key-1")
    static let rotatedKey = FakeSigningKey.make(kid: "fake-key-2")
    static let ellipticKey = FakeSigningKey.makeP256(kid: "fake-ec-1")

    private init(port: Int, issuer: String?, maxAge: Int?) {
        self.port = port
        self.issuer = issuer ?? "http://127.0.0.1:\(port)"
        self.state = Mutex(State(published: [Self.firstKey], maxAge: maxAge))
    }

    public var url: String { "http://127.0.0.1:\(port)" }
    /// The JWKS endpoint (`jwksURL` in the `auth` option).
    public var jwksURL: String { url + "/jwks" }
    /// How many times the JWKS was fetched.
    public var jwksFetches: Int { state.withLock { $0.fetches } }

    /// `Cache-Control: max-age` of the next answers (nil: no Cache-Control header).
    public func setMaxAge(_ seconds: Int?) { state.withLock { $0.maxAge = seconds } }
    public func setBehaviour(_ behaviour: JWKSBehaviour) { state.withLock { $0.behaviour = behaviour } }

    /// Publishes a second key beside the first and signs with it from now on.
    public func rotate() {
        state.withLock { if !$0.published.contains(where: { $0.kid == Self.rotatedKey.kid }) { $0.published.append(Self.rotatedKey) } }
    }

    /// Publishes a P-256 key beside the others and signs with it (ES256) from now on.
    public func useES256() {
        state.withLock { if !$0.published.contains(where: { $0.kid == Self.ellipticKey.kid }) { $0.published.append(Self.ellipticKey) } }
    }

    /// The key tokens are signed with: the newest published one.
    public var signingKey: FakeSigningKey { state.withLock { $0.published.last ?? Self.firstKey } }

    /// An identity token for `sub`, for the audience `aud` (a string or a list), from `iss` (default: this
    /// provider's issuer), expiring `expiresIn` seconds from now (negative: already expired).
    public func mint(
        sub: String, aud: JSONValue, iss: String? = nil, expiresIn: Int = 600, extra: [String: JSONValue] = [:], forgery: TokenForgery? = nil
    ) -> String {
        let now = Int(Date().timeIntervalSince1970)
        var claims = extra
        claims["iss"] = .string(iss ?? issuer)
        claims["aud"] = aud
        claims["sub"] = .string(sub)
        claims["iat"] = .int(Int64(now - 10))
        claims["exp"] = .int(Int64(now + expiresIn))
        return IdentityTokenMinter.mint(claims, key: signingKey, forgery: forgery)
    }

    /// Runs a fake identity provider beside `body`. `issuer` nil: its own URL.
    public static func with(issuer: String? = nil, maxAge: Int? = 3600, _ body: (FakeIdentityProvider) async throws -> Void) async throws {
        let box = Mutex<FakeIdentityProvider?>(nil)
        let router = Router()
        router.get("/jwks") { _, _ -> Response in
            guard let fake = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return try await fake.serveJWKS()
        }
        try await LoopbackServer.run(router, label: "fake-identity-provider") { port in
            let fake = FakeIdentityProvider(port: port, issuer: issuer, maxAge: maxAge)
            box.withLock { $0 = fake }
            try await body(fake)
        }
    }

    private func serveJWKS() async throws -> Response {
        let (keys, maxAge, behaviour) = state.withLock { state in
            state.fetches += 1
            return (state.published, state.maxAge, state.behaviour)
        }
        switch behaviour {
        case .normal: break
        case .hang:
            try await Task.sleep(for: .seconds(60))
            return Response(status: .gatewayTimeout)
        case .serverError:
            return Response(
                status: .internalServerError, headers: [.contentType: "text/html"],
                body: .init(byteBuffer: ByteBuffer(string: "<html>oops</html>")))
        }
        var headers: HTTPFields = [.contentType: "application/json"]
        if let maxAge { headers[.cacheControl] = "public, max-age=\(maxAge), must-revalidate, no-transform" }
        let body: JSONValue = ["keys": .array(keys.map(\.jwk))]
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(body))))
    }
}
