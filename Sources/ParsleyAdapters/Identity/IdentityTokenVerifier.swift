import Foundation
import JWTKit
import ParsleyCore

/// Checks an OpenID Connect identity token (a compact JWS) as Parse Server's apple, google and facebook adapters do:
/// signed by a key of the provider's JWKS (found by `kid`, verified with the algorithm of that key, which must be one of
/// `algorithms` and the one the token names), issued by one of `issuers`, for one of `audiences` (the app's client
/// ids), about `sub == id`, not expired and not before its `nbf`.
struct IdentityTokenVerifier: Sendable {
    enum Failure: Error, Sendable {
        /// The token is not one the provider issued for this app and this id.
        case invalid(String)
        /// The provider's keys could not be fetched.
        case keysUnavailable(String)
    }

    let issuers: Set<String>
    let audiences: Set<String>
    let algorithms: Set<String>
    let keys: JWKSCache

    init(issuers: Set<String>, audiences: Set<String>, algorithms: Set<String> = ["RS256"], jwksURL: String) {
        self.issuers = issuers
        self.audiences = audiences
        self.algorithms = algorithms
        self.keys = JWKSCache(url: jwksURL)
    }

    func verify(_ token: String, id: String) async throws(Failure) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URLDecode(parts[0]), let header = try? JSONParser.parse(headerBytes) else {
            throw .invalid("not a compact JWS")
        }
        guard case .string(let algorithm)? = header["alg"], algorithms.contains(algorithm) else { throw .invalid("algorithm not allowed") }
        guard case .string(let kid)? = header["kid"], !kid.isEmpty else { throw .invalid("no kid") }
        // Extensions the token declares critical are ones this verifier does not know: refused (RFC 7515 §4.1.11).
        guard header["crit"] == nil else { throw .invalid("critical header extensions") }
        let found: JWKSKeySet.Key?
        do {
            found = try await keys.key(kid: kid)
        } catch {
            throw .keysUnavailable("\(error)")
        }
        guard let key = found else { throw .invalid("unknown kid") }
        guard key.algorithm == algorithm else { throw .invalid("algorithm does not match the key") }
        let claims: IdentityClaims
        do {
            claims = try await key.verifier.verify(token, as: IdentityClaims.self)
        } catch {
            throw .invalid("signature or expiry: \(error)")
        }
        guard let issuer = claims.iss?.value, issuers.contains(issuer) else { throw .invalid("issuer") }
        guard let audience = claims.aud?.value, audience.contains(where: audiences.contains) else { throw .invalid("audience") }
        guard claims.sub?.value == id else { throw .invalid("subject") }
    }

    static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

/// The claims the verifier reads. `exp` is required; jwt-kit calls `verify` after the signature checked out.
struct IdentityClaims: JWTPayload {
    var iss: IssuerClaim?
    var aud: AudienceClaim?
    var sub: SubjectClaim?
    var exp: ExpirationClaim
    var nbf: NotBeforeClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try nbf?.verifyNotBefore()
    }
}
