import JWTKit
import ParsleyCore

/// The verification keys of one JWKS, by `kid`, each bound to the one algorithm its key type allows: RSA keys verify
/// RS256 only, P-256 keys ES256 only. The algorithm a token names is never what picks the verification: a token whose
/// `alg` differs from its key's is refused before any signature is checked (no `none`, no HS256 keyed with a public
/// key, no RS/ES confusion).
struct JWKSKeySet: Sendable {
    struct Key: Sendable {
        /// `RS256` or `ES256`.
        let algorithm: String
        /// A collection holding this key alone, under its `kid`, without a default key (an unknown `kid` can never
        /// fall back to another key).
        let verifier: JWTKeyCollection
    }

    let keys: [String: Key]

    /// The usable signing keys of a JWKS document (`{"keys": [...]}`); keys for encryption, of other types or
    /// algorithms, without a `kid` or malformed are left out. - Throws: when the document is not a JWKS.
    static func parse(_ document: JSONValue) async throws -> JWKSKeySet {
        guard case .array(let list)? = document["keys"] else { throw JWKSError.malformed }
        var keys: [String: Key] = [:]
        for jwk in list {
            guard case .string(let kid)? = jwk["kid"], !kid.isEmpty, jwk["use"]?.stringValue ?? "sig" == "sig" else { continue }
            let declared = jwk["alg"]?.stringValue
            switch jwk["kty"]?.stringValue {
            case "RSA":
                guard declared == nil || declared == "RS256", case .string(let n)? = jwk["n"], case .string(let e)? = jwk["e"],
                    let key = try? Insecure.RSA.PublicKey(modulus: n, exponent: e)
                else { continue }
                let verifier = JWTKeyCollection()
                await verifier.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
                await verifier.clearDefault()
                keys[kid] = Key(algorithm: "RS256", verifier: verifier)
            case "EC":
                guard declared == nil || declared == "ES256", jwk["crv"]?.stringValue == "P-256", case .string(let x)? = jwk["x"],
                    case .string(let y)? = jwk["y"], let key = try? ES256PublicKey(parameters: (x, y))
                else { continue }
                let verifier = JWTKeyCollection()
                await verifier.add(ecdsa: key, kid: JWKIdentifier(string: kid))
                await verifier.clearDefault()
                keys[kid] = Key(algorithm: "ES256", verifier: verifier)
            default:
                continue
            }
        }
        return JWKSKeySet(keys: keys)
    }
}

enum JWKSError: Error, Sendable {
    /// The provider's answer was not a JWKS.
    case malformed
    /// The provider did not answer in time, or not with 200.
    case unreachable(String)
}
