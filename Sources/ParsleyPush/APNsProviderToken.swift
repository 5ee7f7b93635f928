import Crypto
import ParsleyCore
import Synchronization

/// The ES256 provider token APNs wants in `authorization: bearer ...`, made from the team's `.p8` key.
///
/// Apple refuses tokens older than an hour and answers `TooManyProviderTokenUpdates` when a new one comes more often
/// than every twenty minutes, so one token is shared by every request and replaced after 50 minutes.
final class APNsProviderToken: Sendable {
    /// A token is replaced once it is this old (seconds).
    static let refreshAge: Int64 = 50 * 60

    private let key: P256.Signing.PrivateKey
    let keyId: String
    let teamId: String
    private let cached = Mutex<(jwt: String, issuedAt: Int64)?>(nil)

    /// Reads the key (PKCS#8 PEM, as Apple's `.p8` files hold it, or SEC1 `EC PRIVATE KEY`).
    init(privateKeyPEM: String, keyId: String, teamId: String) throws {
        key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        self.keyId = keyId
        self.teamId = teamId
    }

    /// The current token at `now`, signed anew when there is none, it is 50 minutes old, or the clock went back.
    func jwt(now: ParseDate) throws -> String {
        let seconds = now.milliseconds / 1000
        return try cached.withLock { cache in
            if let current = cache, seconds >= current.issuedAt, seconds - current.issuedAt < Self.refreshAge { return current.jwt }
            let jwt = try PushJWT.es256(
                header: ["alg": "ES256", "kid": .string(keyId)], claims: ["iss": .string(teamId), "iat": .int(seconds)], key: key)
            cache = (jwt, seconds)
            return jwt
        }
    }

    /// Forgets `jwt` after APNs called it expired, so the next request signs a new one (a newer token that another
    /// request already made is kept).
    func discard(_ jwt: String) {
        cached.withLock { cache in
            if cache?.jwt == jwt { cache = nil }
        }
    }
}
