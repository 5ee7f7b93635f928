import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import ParsleyCore
import _CryptoExtras

/// Google OAuth2 access tokens for FCM, from the service account's signed assertion (the JWT-bearer grant of
/// RFC 7523). A token is kept until a minute before it expires; while one is being fetched, every other sender waits
/// for that same exchange instead of starting its own.
actor FCMAccessTokens {
    /// Why no token could be had; `transient` when the token endpoint was unreachable or overloaded.
    struct Failure: Error {
        var reason: String
        var transient: Bool
        /// Set when the token endpoint could not be reached or refused the service account (counted and logged).
        var kind: PushTransportFailureKind? = nil
    }

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// A token is dropped this long (ms) before Google says it expires.
    static let expiryMargin: Int64 = 60_000

    private enum State {
        case empty
        case valid(token: String, expiresAt: ParseDate)
        case fetching(waiters: [CheckedContinuation<String, any Error>])
    }

    private var state = State.empty
    private let account: FCMServiceAccount
    private let tokenURI: String
    private let key: _RSA.Signing.PrivateKey
    private let client: HTTPClient
    private let now: @Sendable () -> ParseDate

    init(account: FCMServiceAccount, key: _RSA.Signing.PrivateKey, tokenURI: String, client: HTTPClient, now: @escaping @Sendable () -> ParseDate) {
        self.key = key
        self.account = account
        self.tokenURI = tokenURI
        self.client = client
        self.now = now
    }

    /// A valid access token: the cached one, the one being fetched, or a new one.
    func token() async throws -> String {
        switch state {
        case .valid(let token, let expiresAt) where now() < expiresAt:
            return token
        case .fetching:
            return try await withCheckedThrowingContinuation { continuation in
                if case .fetching(let waiters) = state { state = .fetching(waiters: waiters + [continuation]) }
            }
        case .valid, .empty:
            state = .fetching(waiters: [])
            let result: Result<(token: String, lifetime: Int64), any Error>
            do { result = .success(try await exchange()) } catch { result = .failure(error) }
            guard case .fetching(let waiters) = state else { preconditionFailure("only the fetching sender ends a fetch") }
            switch result {
            case .success(let fetched):
                let expiresAt = ParseDate(milliseconds: now().milliseconds + fetched.lifetime * 1000 - Self.expiryMargin)
                state = .valid(token: fetched.token, expiresAt: expiresAt)
                for waiter in waiters { waiter.resume(returning: fetched.token) }
                return fetched.token
            case .failure(let error):
                state = .empty
                for waiter in waiters { waiter.resume(throwing: error) }
                throw error
            }
        }
    }

    /// Forgets `token` after FCM refused it (401), unless a newer one has replaced it already.
    func invalidate(_ token: String) {
        if case .valid(let current, _) = state, current == token { state = .empty }
    }

    /// One exchange at the token endpoint: the signed assertion for `{"access_token", "expires_in"}`.
    private nonisolated func exchange() async throws -> (token: String, lifetime: Int64) {
        let issuedAt = now().milliseconds / 1000
        var header: [String: JSONValue] = ["alg": "RS256", "typ": "JWT"]
        if let keyId = account.privateKeyId { header["kid"] = .string(keyId) }
        let claims: JSONValue = [
            "iss": .string(account.clientEmail), "scope": .string(Self.scope), "aud": .string(tokenURI), "iat": .int(issuedAt),
            "exp": .int(issuedAt + 3600),
        ]
        let assertion: String
        do {
            assertion = try PushJWT.rs256(header: .object(header), claims: claims, key: key)
        } catch {
            throw Failure(reason: "could not sign the OAuth2 assertion: \(error)", transient: false)
        }
        var request = HTTPClientRequest(url: tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion))
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: PushHTTP.requestTimeout)
        } catch {
            throw Failure(reason: "OAuth2 token endpoint unreachable: \(error)", transient: true, kind: .of(error))
        }
        let status = Int(response.status.code)
        let json = await PushHTTP.json(of: response)
        guard status == 200, let token = json?["access_token"]?.stringValue, !token.isEmpty else {
            // `{"error": "invalid_grant", "error_description": "..."}` for a revoked key or a wrong clock.
            let detail = [json?["error"]?.stringValue, json?["error_description"]?.stringValue].compactMap { $0 }.joined(separator: ": ")
            let transient = status == 429 || status >= 500
            // 400 `invalid_grant` is a refused service account as much as 401/403 are.
            let kind = PushTransportFailureKind.of(status: status) ?? (status == 400 ? .authRejected : nil)
            throw Failure(reason: "OAuth2 token endpoint answered \(status)\(detail.isEmpty ? "" : " (\(detail))")", transient: transient, kind: kind)
        }
        return (token, Int64(json?["expires_in"]?.integerValue ?? 3600))
    }
}
