public import Crypto
public import Foundation
public import ParsleyCore
public import _CryptoExtras

/// An RS256 signing key with its `kid`, as an identity provider publishes it in its JWKS.
public struct FakeSigningKey: Sendable {
    public let kid: String
    public let privateKey: _RSA.Signing.PrivateKey

    public init(kid: String, privateKey: _RSA.Signing.PrivateKey) {
        self.kid = kid
        self.privateKey = privateKey
    }

    /// RSA 2048 generation takes a moment in debug builds: a few keys serve the whole test run.
    public static func make(kid: String) -> FakeSigningKey {
        // Only fails if BoringSSL cannot make a key at all.
        FakeSigningKey(kid: kid, privateKey: try! _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    /// The public half as a JWK (`kty` RSA, `alg` RS256, `use` sig).
    public var jwk: JSONValue {
        let primitives = try? privateKey.publicKey.getKeyPrimitives()
        return [
            "kty": "RSA", "use": "sig", "alg": "RS256", "kid": .string(kid),
            "n": .string(IdentityTokenMinter.base64URL(primitives?.modulus ?? Data())),
            "e": .string(IdentityTokenMinter.base64URL(primitives?.publicExponent ?? Data())),
        ]
    }
}

/// How a minted token is made wrong on purpose: each is an attack the server must refuse.
public enum TokenForgery: Sendable, CaseIterable {
    /// `alg: none` and no signature.
    case algNone
    /// `alg: HS256`, an HMAC keyed with the provider's public key (PEM), the classic algorithm confusion.
    case hs256WithPublicKey
    /// A `kid` the provider never published, signed with a key it never published either.
    case unknownKid
    /// The published `kid`, signed with another key.
    case otherKey
    /// The signature of another token.
    case tamperedClaims
}

/// Makes compact JWTs (JWS, RS256) as an identity provider does, and forged ones.
public enum IdentityTokenMinter {
    /// Unpublished keys for `.unknownKid` and `.otherKey`.
    static let strangerKey = FakeSigningKey.make(kid: "stranger")

    /// A token over `claims`, signed with `key` unless `forgery` says otherwise.
    public static func mint(_ claims: [String: JSONValue], key: FakeSigningKey, forgery: TokenForgery? = nil) -> String {
        let payload = base64URL(Data(JSONWriter.bytes(.object(claims))))
        switch forgery {
        case nil:
            return rs256(payload: payload, kid: key.kid, with: key.privateKey)
        case .algNone:
            let header = base64URL(Data(JSONWriter.bytes(["alg": "none", "typ": "JWT", "kid": .string(key.kid)])))
            return "\(header).\(payload)."
        case .hs256WithPublicKey:
            let header = base64URL(Data(JSONWriter.bytes(["alg": "HS256", "typ": "JWT", "kid": .string(key.kid)])))
            let secret = SymmetricKey(data: Data(key.privateKey.publicKey.pemRepresentation.utf8))
            let mac = HMAC<SHA256>.authenticationCode(for: Data("\(header).\(payload)".utf8), using: secret)
            return "\(header).\(payload).\(base64URL(Data(mac)))"
        case .unknownKid:
            return rs256(payload: payload, kid: "unknown-\(UUID().uuidString)", with: strangerKey.privateKey)
        case .otherKey:
            return rs256(payload: payload, kid: key.kid, with: strangerKey.privateKey)
        case .tamperedClaims:
            let genuine = rs256(payload: payload, kid: key.kid, with: key.privateKey)
            var changed = claims
            changed["tampered"] = true
            let otherPayload = base64URL(Data(JSONWriter.bytes(.object(changed))))
            let parts = genuine.split(separator: ".")
            return "\(parts[0]).\(otherPayload).\(parts[2])"
        }
    }

    static func rs256(payload: String, kid: String, with key: _RSA.Signing.PrivateKey) -> String {
        let header = base64URL(Data(JSONWriter.bytes(["alg": "RS256", "typ": "JWT", "kid": .string(kid)])))
        let input = Data("\(header).\(payload)".utf8)
        let signature = (try? key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation) ?? Data()
        return "\(header).\(payload).\(base64URL(signature))"
    }

    /// Base64url without padding.
    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
