import Crypto
import Foundation
import ParsleyCore
import _CryptoExtras

/// Compact signed JSON Web Tokens, the two kinds push needs: ES256 for APNs provider tokens and RS256 for the
/// assertion Google's OAuth2 token endpoint exchanges for an access token. Header and claims are written with
/// `JSONWriter` (keys sorted), so equal inputs give equal tokens.
enum PushJWT {
    /// `header.claims` in base64url: the bytes the signature covers.
    static func signingInput(header: JSONValue, claims: JSONValue) -> String {
        base64URL(JSONWriter.bytes(header)) + "." + base64URL(JSONWriter.bytes(claims))
    }

    /// An ES256 token: the signature is the raw `r || s` (64 bytes), not DER, as RFC 7518 requires.
    static func es256(header: JSONValue, claims: JSONValue, key: P256.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// An RS256 token: RSASSA-PKCS1-v1_5 over SHA-256.
    static func rs256(header: JSONValue, claims: JSONValue, key: _RSA.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// Base64 with the URL alphabet (`-`, `_`) and no `=` padding.
    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
