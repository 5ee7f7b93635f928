import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
public import ParsleyCore
import Synchronization
import _CryptoExtras

/// A real FCM HTTP v1 stand-in on 127.0.0.1, with Google's OAuth2 token endpoint beside it.
///
/// `POST /token` takes the JWT-bearer grant, checks the assertion (RS256 against the service account's public key,
/// `iss`, `aud`, `scope`) and hands out an access token; `POST /v1/projects/{id}/messages:send` checks the bearer
/// token and the project, records the message, and answers per registration token as the test scripted it.
public final class FakeFCM: Sendable {
    public enum Answer: Sendable, Equatable {
        case ok
        case unregistered
        case quotaExceeded(retryAfter: Int?)
        case invalidRegistration
        case unavailable
    }

    public let account: PushTestKeys.ServiceAccount
    public let port: Int
    /// How long the token endpoint takes to answer (so concurrent senders meet while an exchange is under way).
    public let tokenDelay: Duration
    private let script = AnswerScript<Answer>(fallback: .ok)
    private let recorded = Mutex<[JSONValue]>([])
    private let issued = Mutex<(count: Int, valid: Set<String>)>((0, []))

    private init(account: PushTestKeys.ServiceAccount, port: Int, tokenDelay: Duration) {
        self.account = account
        self.port = port
        self.tokenDelay = tokenDelay
    }

    /// The FCM base URL (`android.endpoint`).
    public var url: String { "http://127.0.0.1:\(port)" }
    /// The token endpoint (`token_uri`).
    public var tokenURI: String { url + "/token" }
    /// The `message` objects received with a valid token, in order.
    public var messages: [JSONValue] { recorded.withLock { $0 } }
    /// How many access tokens the token endpoint handed out.
    public var tokenExchanges: Int { issued.withLock { $0.count } }

    /// Answers sends to `token` with `answers` in turn, the last one from then on.
    public func answer(_ token: String, with answers: Answer...) { script.set(token, answers) }

    /// Makes every access token handed out so far invalid, as a revoked key would.
    public func revokeAccessTokens() { issued.withLock { $0.valid.removeAll() } }

    /// Runs a fake FCM for `account` beside `body`.
    public static func with(
        account: PushTestKeys.ServiceAccount = PushTestKeys.serviceAccount, tokenDelay: Duration = .milliseconds(100),
        _ body: (FakeFCM) async throws -> Void
    ) async throws {
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        let box = Mutex<FakeFCM?>(nil)
        let router = Router()
        router.post("**") { request, _ -> Response in
            guard let fake = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            let bytes = try await request.body.collect(upTo: 1 << 20)
            return try await fake.handle(path: request.uri.path, authorization: request.headers[.authorization], body: bytes)
        }
        var logger = Logger(label: "fake-fcm")
        // Stopping by cancellation makes Hummingbird log the cancelled connections as errors: not news here.
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { return }
            let fake = FakeFCM(account: account, port: port, tokenDelay: tokenDelay)
            box.withLock { $0 = fake }
            let outcome: Result<Void, any Error>
            do { outcome = .success(try await body(fake)) } catch { outcome = .failure(error) }
            group.cancelAll()
            try outcome.get()
        }
    }

    private func handle(path: String, authorization: String?, body: ByteBuffer) async throws -> Response {
        if path == "/token" { return try await exchange(form: String(buffer: body)) }
        guard path == "/v1/projects/\(account.projectId)/messages:send" else {
            return Self.error(404, "NOT_FOUND", "Requested entity was not found.", errorCode: nil)
        }
        let token = authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let token, issued.withLock({ $0.valid.contains(token) }) else {
            return Self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", errorCode: nil)
        }
        guard let message = (try? JSONParser.parse(body.readableBytesView))?["message"], let target = message["token"]?.stringValue else {
            return Self.error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.", errorCode: "INVALID_ARGUMENT")
        }
        recorded.withLock { $0.append(message) }
        let answer = script.next(for: target)
        switch answer {
        case .ok:
            let number = recorded.withLock { $0.count }
            return Self.json(200, ["name": .string("projects/\(account.projectId)/messages/\(number)")])
        case .unregistered:
            return Self.error(404, "NOT_FOUND", "Requested entity was not found.", errorCode: "UNREGISTERED")
        case .quotaExceeded(let retryAfter):
            var response = Self.error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for sending messages.", errorCode: "QUOTA_EXCEEDED")
            if let retryAfter { response.headers[HTTPField.Name("retry-after")!] = String(retryAfter) }
            return response
        case .invalidRegistration:
            var response = Self.error(
                400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", errorCode: "INVALID_ARGUMENT")
            response.body = .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(Self.invalidTokenError)))
            return response
        case .unavailable:
            return Self.error(503, "UNAVAILABLE", "The service is currently unavailable.", errorCode: "UNAVAILABLE")
        }
    }

    /// The JWT-bearer grant: a valid assertion gets a new access token.
    private func exchange(form: String) async throws -> Response {
        try await Task.sleep(for: tokenDelay)
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = fields["assertion"],
            let jwt = PushTestKeys.decodeJWT(assertion), jwt.header["alg"] == "RS256",
            jwt.claims["iss"]?.stringValue == account.clientEmail, jwt.claims["aud"]?.stringValue == tokenURI,
            jwt.claims["scope"]?.stringValue?.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.messaging") == true,
            let issuedAt = jwt.claims["iat"]?.integerValue, jwt.claims["exp"]?.integerValue == issuedAt + 3600,
            account.publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: jwt.signature), for: jwt.signingInput, padding: .insecurePKCS1v1_5)
        else {
            return Self.json(400, ["error": "invalid_grant", "error_description": "Invalid JWT Signature."])
        }
        let token = issued.withLock { issued -> String in
            issued.count += 1
            let token = "ya29.fake-\(issued.count)-\(UUID().uuidString)"
            issued.valid.insert(token)
            return token
        }
        return Self.json(200, ["access_token": .string(token), "expires_in": 3599, "token_type": "Bearer"])
    }

    /// Google's error shape, with an `FcmError` detail when `errorCode` is given.
    private static func error(_ code: Int, _ status: String, _ message: String, errorCode: String?) -> Response {
        var error: [String: JSONValue] = ["code": .int(Int64(code)), "message": .string(message), "status": .string(status)]
        if let errorCode {
            error["details"] = [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": .string(errorCode)]]
        }
        return json(code, ["error": .object(error)])
    }

    /// What FCM answers for a malformed registration token.
    private static let invalidTokenError: JSONValue = [
        "error": [
            "code": 400, "message": "The registration token is not a valid FCM registration token", "status": "INVALID_ARGUMENT",
            "details": [
                ["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"],
                [
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [["field": "message.token", "description": "Invalid registration token"]],
                ],
            ],
        ]
    ]

    private static func json(_ code: Int, _ value: JSONValue) -> Response {
        Response(
            status: .init(code: code), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(value))))
    }
}
