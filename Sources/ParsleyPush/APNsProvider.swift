public import AsyncHTTPClient
import Foundation
public import Logging
public import NIOCore
import NIOHTTP1
public import ParsleyCore
public import ParsleyDomain

/// Sends to Apple devices through APNs: HTTP/2 `POST /3/device/{token}` with an ES256 provider token.
///
/// Several configurations (one per bundle id, or one per key) share the provider; a message goes to the one whose
/// topic is its `appIdentifier`, else to one without a topic (which then uses the `appIdentifier`). A message with no
/// `appIdentifier` goes to the first configuration that has a topic. A message whose app has no configuration fails
/// without being sent: sending it under another app's topic would get its token reported dead.
public final class APNsProvider: PushProvider {
    /// The `deviceType`s APNs delivers to.
    public static let appleDeviceTypes: Set<String> = ["ios", "osx", "tvos", "watchos", "visionos"]

    public let name: String
    public let deviceTypes: Set<String>
    let routes: [(configuration: APNsConfiguration, token: APNsProviderToken)]
    private let client: HTTPClient
    private let ownsClient: Bool
    private let logger: Logger
    private let now: @Sendable () -> ParseDate
    /// Failures to reach APNs: counted, and logged once per kind and minute.
    let failures: PushTransportFailures

    /// Reads each configuration's key. Without `httpClient`, creates one (HTTP/2 by ALPN, trusting the
    /// configurations' `caFile`s too) that `shutdown()` closes, with `connectTimeout` (10 s when nil). `now` replaces the wall clock (tests).
    public init(
        configurations: [APNsConfiguration], name: String = "ios", deviceTypes: Set<String> = APNsProvider.appleDeviceTypes,
        httpClient: HTTPClient? = nil, connectTimeout: TimeAmount? = nil, logger: Logger = Logger(label: "parsley.push.apns"),
        now: (@Sendable () -> ParseDate)? = nil
    ) throws {
        precondition(!configurations.isEmpty, "APNsProvider needs at least one configuration")
        routes = try configurations.map { configuration in
            let token = try APNsProviderToken(privateKeyPEM: configuration.privateKeyPEM, keyId: configuration.keyId, teamId: configuration.teamId)
            return (configuration, token)
        }
        self.name = name
        self.deviceTypes = deviceTypes
        client = try httpClient ?? PushHTTP.makeClient(caFiles: configurations.compactMap(\.caFile), connectTimeout: connectTimeout)
        ownsClient = httpClient == nil
        self.logger = logger
        self.now = now ?? PushHTTP.now
        failures = PushTransportFailures(provider: name, service: "APNs", logger: logger)
    }

    public var transportFailures: [String: Int] { failures.counts }

    public var summary: String {
        "APNs " + routes.map(\.configuration.summary).joined(separator: "; ")
    }

    public func serves(deviceType: String) -> Bool { deviceTypes.contains(deviceType) }

    public func serves(_ message: PushMessage) -> Bool { serves(deviceType: message.deviceType) }

    public func shutdown() async throws { try await PushHTTP.shutdown(client, owned: ownsClient) }

    public func send(_ message: PushMessage) async -> PushOutcome {
        // Tokens are hexadecimal; anything else would also change the request path.
        guard !message.deviceToken.isEmpty, message.deviceToken.allSatisfy(\.isHexDigit) else {
            return .invalidToken(reason: "BadDeviceToken")
        }
        guard let (route, topic) = route(for: message.appIdentifier) else {
            let reason = "no APNs configuration for appIdentifier \(message.appIdentifier ?? "(none)")"
            logger.debug("push not sent", metadata: ["reason": .string(reason)])
            return .failed(reason: reason, transient: false)
        }
        let notification = APNsNotification(message: message, topic: topic)
        var outcome = await post(notification, to: message.deviceToken, with: route.token, at: route.configuration.baseURL)
        // A token APNs calls expired (a clock jump, a suspended process) is replaced once.
        if case .expiredProviderToken(let jwt) = outcome {
            route.token.discard(jwt)
            outcome = await post(notification, to: message.deviceToken, with: route.token, at: route.configuration.baseURL)
        }
        switch outcome {
        case .done(let result): return result
        case .expiredProviderToken:
            failures.record(.authRejected, url: route.configuration.baseURL, detail: "HTTP 403 ExpiredProviderToken (twice)")
            return .failed(reason: "ExpiredProviderToken", transient: false)
        }
    }

    /// The configuration for an app, and the topic to send under.
    func route(for appIdentifier: String?) -> ((configuration: APNsConfiguration, token: APNsProviderToken), String)? {
        if let app = appIdentifier, !app.isEmpty {
            if let route = routes.first(where: { $0.configuration.topic == app }) ?? routes.first(where: { $0.configuration.topic == nil }) {
                return (route, app)
            }
            return nil
        }
        guard let route = routes.first(where: { $0.configuration.topic != nil }), let topic = route.configuration.topic else { return nil }
        return (route, topic)
    }

    enum Attempt {
        case done(PushOutcome)
        case expiredProviderToken(String)
    }

    private func post(_ notification: APNsNotification, to deviceToken: String, with token: APNsProviderToken, at baseURL: String) async -> Attempt {
        let jwt: String
        do {
            jwt = try token.jwt(now: now())
        } catch {
            return .done(.failed(reason: "could not sign the APNs provider token: \(error)", transient: false))
        }
        var request = HTTPClientRequest(url: baseURL + "/3/device/" + deviceToken)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer " + jwt)
        request.headers.add(name: "content-type", value: "application/json")
        for (name, value) in notification.headers.sorted(by: { $0.key < $1.key }) { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: JSONWriter.bytes(notification.body)))
        do {
            let response = try await client.execute(request, timeout: PushHTTP.requestTimeout)
            let status = Int(response.status.code)
            let retryAfter = PushHTTP.retryAfter(response.headers, now: now())
            // Read even when not needed, so the stream or connection is left clean for the next request.
            let reason = await PushHTTP.json(of: response)?["reason"]?.stringValue
            if status == 403, reason == "ExpiredProviderToken" { return .expiredProviderToken(jwt) }
            if let kind = PushTransportFailureKind.of(status: status) {
                failures.record(kind, url: baseURL, detail: "HTTP \(status)" + (reason.map { " \($0)" } ?? ""))
            }
            let outcome = Self.outcome(status: status, reason: reason, retryAfter: retryAfter)
            if outcome != .sent { logger.debug("APNs did not take a push", metadata: ["status": "\(status)", "reason": "\(reason ?? "")"]) }
            return .done(outcome)
        } catch {
            failures.record(PushTransportFailureKind.of(error), url: baseURL, detail: "\(error)")
            logger.debug("APNs request failed", metadata: ["error": "\(error)"])
            return .done(.failed(reason: "APNs unreachable: \(error)", transient: true))
        }
    }

    /// The reasons APNs gives for a token that will never work again.
    static let deadTokenReasons: Set<String> = ["BadDeviceToken", "Unregistered", "DeviceTokenNotForTopic"]

    /// What an APNs answer means: 200 sent; 410, or 400 with a dead-token reason, an invalid token; 429 and 5xx worth
    /// retrying; any other answer a permanent failure named by its `reason`.
    static func outcome(status: Int, reason: String?, retryAfter: Duration?) -> PushOutcome {
        switch status {
        case 200: return .sent
        case 410: return .invalidToken(reason: reason ?? "Unregistered")
        case 400 where reason.map(deadTokenReasons.contains) == true: return .invalidToken(reason: reason ?? "BadDeviceToken")
        case 429, 500...599: return .failed(reason: reason ?? "HTTP \(status)", transient: true, retryAfter: retryAfter)
        default: return .failed(reason: reason ?? "HTTP \(status)", transient: false)
        }
    }
}
