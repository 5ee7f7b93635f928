public import AsyncHTTPClient
public import Logging
public import NIOCore
import NIOHTTP1
public import ParsleyCore
public import ParsleyDomain
import _CryptoExtras

/// Sends through Firebase Cloud Messaging's HTTP v1 API with a service account: an OAuth2 access token (shared by
/// all sends, renewed before it expires) and one `messages:send` request per device.
public final class FCMProvider: PushProvider {
    public let name: String
    public let configuration: FCMConfiguration
    private let tokens: FCMAccessTokens
    private let client: HTTPClient
    private let ownsClient: Bool
    private let logger: Logger
    private let now: @Sendable () -> ParseDate
    /// Failures to reach FCM or its token endpoint: counted, and logged once per kind and minute.
    let failures: PushTransportFailures

    /// Reads the service account's RSA key. Without `httpClient`, creates one (trusting `caFile` too) that
    /// `shutdown()` closes, with `connectTimeout` (10 s when nil). `now` replaces the wall clock (tests).
    public init(
        configuration: FCMConfiguration, name: String = "android", httpClient: HTTPClient? = nil,
        connectTimeout: TimeAmount? = nil, logger: Logger = Logger(label: "parsley.push.fcm"),
        now: (@Sendable () -> ParseDate)? = nil
    ) throws {
        let now = now ?? PushHTTP.now
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: configuration.serviceAccount.privateKeyPEM)
        let client = try httpClient ?? PushHTTP.makeClient(caFiles: configuration.caFile.map { [$0] } ?? [], connectTimeout: connectTimeout)
        tokens = FCMAccessTokens(account: configuration.serviceAccount, key: key, tokenURI: configuration.effectiveTokenURI, client: client, now: now)
        self.name = name
        self.configuration = configuration
        self.client = client
        ownsClient = httpClient == nil
        self.logger = logger
        self.now = now
        failures = PushTransportFailures(provider: name, service: "FCM", logger: logger)
    }

    public var transportFailures: [String: Int] { failures.counts }

    public var summary: String { configuration.summary }

    /// Android installations. (Installations of other types whose `pushType` is `fcm` or `gcm`: see `serves(_:)`.)
    public func serves(deviceType: String) -> Bool { deviceType == "android" }

    /// Android installations, and any other whose `pushType` is `fcm` or `gcm` (apps using the Firebase SDK).
    public func serves(_ message: PushMessage) -> Bool {
        serves(deviceType: message.deviceType) || message.pushType.map { ["fcm", "gcm"].contains($0.lowercased()) } == true
    }

    public func shutdown() async throws { try await PushHTTP.shutdown(client, owned: ownsClient) }

    public func send(_ message: PushMessage) async -> PushOutcome {
        let body = ByteBuffer(bytes: JSONWriter.bytes(FCMMessage.body(message)))
        var outcome = await post(body)
        // A refused access token (revoked, or expired early) is replaced once.
        if case .unauthenticated(let token) = outcome {
            await tokens.invalidate(token)
            outcome = await post(body)
        }
        switch outcome {
        case .done(let result): return result
        case .unauthenticated:
            failures.record(.authRejected, url: configuration.endpoint, detail: "HTTP 401 (twice)")
            return .failed(reason: "UNAUTHENTICATED", transient: false)
        }
    }

    enum Attempt {
        case done(PushOutcome)
        case unauthenticated(String)
    }

    private func post(_ body: ByteBuffer) async -> Attempt {
        let token: String
        do {
            token = try await tokens.token()
        } catch let failure as FCMAccessTokens.Failure {
            if let kind = failure.kind { failures.record(kind, url: configuration.effectiveTokenURI, detail: failure.reason) }
            return .done(.failed(reason: failure.reason, transient: failure.transient))
        } catch {
            return .done(.failed(reason: "no FCM access token: \(error)", transient: true))
        }
        var request = HTTPClientRequest(url: configuration.sendURL)
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer " + token)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(body)
        do {
            let response = try await client.execute(request, timeout: PushHTTP.requestTimeout)
            let status = Int(response.status.code)
            // Read even when not needed, so the stream or connection is left clean for the next request.
            let error = await PushHTTP.json(of: response)?["error"]
            if status == 401 { return .unauthenticated(token) }
            if let kind = PushTransportFailureKind.of(status: status) {
                failures.record(kind, url: configuration.endpoint, detail: "HTTP \(status)" + (error?["status"]?.stringValue.map { " \($0)" } ?? ""))
            }
            let outcome = Self.outcome(status: status, error: error, retryAfter: PushHTTP.retryAfter(response.headers, now: now()))
            if outcome != .sent { logger.debug("FCM did not take a push", metadata: ["status": "\(status)"]) }
            return .done(outcome)
        } catch {
            failures.record(PushTransportFailureKind.of(error), url: configuration.endpoint, detail: "\(error)")
            logger.debug("FCM request failed", metadata: ["error": "\(error)"])
            return .done(.failed(reason: "FCM unreachable: \(error)", transient: true))
        }
    }

    /// What an FCM answer means, from its status and Google's error object
    /// (`{"code", "message", "status", "details": [{"@type": "...FcmError", "errorCode"}]}`): 404 or `UNREGISTERED`
    /// an invalid token, as is `INVALID_ARGUMENT` about the token; 429 and 5xx worth retrying; the rest permanent.
    static func outcome(status: Int, error: JSONValue?, retryAfter: Duration?) -> PushOutcome {
        if status == 200 { return .sent }
        let errorCode = error?["details"]?.arrayValue?.lazy.compactMap { $0["errorCode"]?.stringValue }.first
        let errorStatus = error?["status"]?.stringValue
        let code = errorCode ?? errorStatus ?? "HTTP \(status)"
        let reason = error?["message"]?.stringValue.map { "\(code): \($0)" } ?? code
        if status == 404 || errorCode == "UNREGISTERED" || errorStatus == "UNREGISTERED" { return .invalidToken(reason: code) }
        if code == "INVALID_ARGUMENT", isAboutToken(error) { return .invalidToken(reason: reason) }
        if status == 429 || status >= 500 { return .failed(reason: reason, transient: true, retryAfter: retryAfter) }
        return .failed(reason: reason, transient: false)
    }

    /// Whether an `INVALID_ARGUMENT` is about the registration token (a `BadRequest` field violation on
    /// `message.token`, or Google's message saying so) rather than the payload.
    static func isAboutToken(_ error: JSONValue?) -> Bool {
        let violations = error?["details"]?.arrayValue?.flatMap { $0["fieldViolations"]?.arrayValue ?? [] } ?? []
        if violations.contains(where: { $0["field"]?.stringValue == "message.token" }) { return true }
        return error?["message"]?.stringValue?.lowercased().contains("registration token") == true
    }
}
