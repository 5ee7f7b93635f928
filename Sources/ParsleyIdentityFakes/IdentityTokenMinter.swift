public import Crypto
public import Foundation
public import ParsleyCore
public import _CryptoExtras

/// A signing key with its `kid`, as an identity provider publishes it in its JWKS: RSA (RS256) or P-256 (ES256).
public struct FakeSigningKey: Sendable {
    public enum Material: Sendable {
        case rsa(_RSA.Signing.PrivateKey)
        case p256(P256.Signing.PrivateKey)
    }
    public let kid: String
    public let material: Material

    public init(kid: String, material: Material) {
        self.kid = kid
        self.material = material
    }

    /// RSA 2048 generation takes a moment in debug builds: a few keys serve the whole test run.
    public static func make(kid: String) -> FakeSigningKey {
        // Only fails if BoringSSL cannot make a key at all.
        FakeSigningKey(kid: kid, material: .rsa(try! _RSA.Signing.PrivateKey(keySize: .bits2048)))
    }

    public static func makeP256(kid: String) -> FakeSigningKey {
        FakeSigningKey(kid: kid, material: .p256(P256.Signing.PrivateKey()))
    }

    /// `RS256` or `ES256`.
    public var algorithm: String {
        switch material {
        case .rsa: "RS256"
        case .p256: "ES256"
        }
    }

    /// The public key as PEM (the secret of the HS256 confusion attack).
    var publicPEM: String {
        switch material {
        case .rsa(let key): key.publicKey.pemRepresentation
        case .p256(let key): key.publicKey.pemRepresentation
        }
    }

    /// The public half as a JWK.
    public var jwk: JSONValue {
        func b64(_ data: Data) -> String { IdentityTokenMinter.base64URL(data) }
        switch material {
        case .rsa(let key):
            let primitives = try? key.publicKey.getKeyPrimitives()
            return [
                "kty": "RSA", "use": "sig", "alg": "RS256", "kid": .string(kid), "n": .string(b64(primitives?.modulus ?? Data())),
                "e": .string(b64(primitives?.publicExponent ?? Data())),
            ]
        case .p256(let key):
            let raw = key.publicKey.rawRepresentation
            return [
                "kty": "EC", "use": "sig", "alg": "ES256", "crv": "P-256", "kid": .string(kid), "x": .string(b64(Data(raw.prefix(32)))),
                "y": .string(b64(Data(raw.suffix(32)))),
            ]
        }
    }

    /// The JWS signature of `input` with this key.
    func sign(_ input: Data) -> Data {
        switch material {
        case .rsa(let key): (try? key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation) ?? Data()
        case .p256(let key): (try? key.signature(for: input).rawRepresentation) ?? Data()
        }
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
    /// The published `kid` with the other family's algorithm (ES256 for an RSA key, RS256 for a P-256 one), signed
    /// with an unpublished key of that family.
    case keyTypeConfusion
}

/// Makes compact JWTs (JWS, RS256) as an identity provider does, and forged ones.
public enum IdentityTokenMinter {
    /// Unpublished keys for `.unknownKid`, `.otherKey` and `.keyTypeConfusion`.
    static let strangerKey = FakeSigningKey.make(kid: "stranger")
    static let strangerP256 = FakeSigningKey.makeP256(kid: "stranger-ec")

    /// A token over `claims`, signed with `key` unless `forgery` says otherwise.
    public static func mint(_ claims: [String: JSONValue], key: FakeSigningKey, forgery: TokenForgery? = nil) -> String {
        let payload = base64URL(Data(JSONWriter.bytes(.object(claims))))
        switch forgery {
        case nil:
            return signed(payload: payload, kid: key.kid, with: key)
        case .algNone:
            let header = base64URL(Data(JSONWriter.bytes(["alg": "none", "typ": "JWT", "kid": .string(key.kid)])))
            return "\(header).\(payload)."
        case .hs256WithPublicKey:
            let header = base64URL(Data(JSONWriter.bytes(["alg": "HS256", "typ": "JWT", "kid": .string(key.kid)])))
            let secret = SymmetricKey(data: Data(key.publicPEM.utf8))
            let mac = HMAC<SHA256>.authenticationCode(for: Data("\(header).\(payload)".utf8), using: secret)
            return "\(header).\(payload).\(base64URL(Data(mac)))"
        case .unknownKid:
            return signed(payload: payload, kid: "unknown-\(UUID().uuidString)", with: stranger(like: key))
        case .otherKey:
            return signed(payload: payload, kid: key.kid, with: stranger(like: key))
        case .keyTypeConfusion:
            return signed(payload: payload, kid: key.kid, with: key.algorithm == "RS256" ? strangerP256 : strangerKey)
        case .tamperedClaims:
            let genuine = signed(payload: payload, kid: key.kid, with: key)
            var changed = claims
            changed["tampered"] = true
            let otherPayload = base64URL(Data(JSONWriter.bytes(.object(changed))))
            let parts = genuine.split(separator: ".")
            return "\(parts[0]).\(otherPayload).\(parts[2])"
        }
    }

    static func stranger(like key: FakeSigningKey) -> FakeSigningKey { key.algorithm == "RS256" ? strangerKey : strangerP256 }

    /// `payload` signed with `key`, its header naming `kid` and the key's algorithm.
    static func signed(payload: String, kid: String, with key: FakeSigningKey) -> String {
        let header = base64URL(Data(JSONWriter.bytes(["alg": .string(key.algorithm), "typ": "JWT", "kid": .string(kid)])))
        return "\(header).\(payload).\(base64URL(key.sign(Data("\(header).\(payload)".utf8))))"
    }

    /// Base64url without padding.
    public static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
