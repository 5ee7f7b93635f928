import AsyncHTTPClient
import Logging
import NIOSSL
import ParsleyCore
import Synchronization

/// Why a push could not get through to APNs or FCM (or FCM's OAuth2 token endpoint): the `kind` label of
/// `parsley_push_transport_failures_total` and of the warning line.
public enum PushTransportFailureKind: String, Sendable, CaseIterable {
    case connectionRefused = "connection_refused"
    case dns
    case tls
    case timeout
    case connectionClosed = "connection_closed"
    /// 401 or 403: the provider token, service account or key was refused.
    case authRejected = "auth_rejected"
    /// 429.
    case throttled
    /// 500 to 599.
    case serverError = "http_5xx"
    /// Any other error of the connection.
    case other

    /// The kind of a failed request (the HTTP client's, NIO's or TLS's error).
    static func of(_ error: any Error) -> PushTransportFailureKind {
        if let e = error as? HTTPClientError {
            if [.connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded].contains(e) { return .timeout }
            if e == .remoteConnectionClosed { return .connectionClosed }
        }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError { return .tls }
        // NIO's connect errors (NIOConnectionError, IOError) are told apart by what they say.
        let text = (String(describing: error) + " " + String(reflecting: error)).lowercased()
        if text.contains("refused") { return .connectionRefused }
        if text.contains("dns") || text.contains("name resolution") || text.contains("nodename") { return .dns }
        if text.contains("ssl") || text.contains("tls") || text.contains("certificate") || text.contains("handshake") { return .tls }
        if text.contains("timeout") || text.contains("timed out") { return .timeout }
        if text.contains("closed") || text.contains("reset") || text.contains("broken pipe") { return .connectionClosed }
        return .other
    }

    /// The kind of an HTTP answer that is a failure of the service rather than of one message; nil for the others.
    static func of(status: Int) -> PushTransportFailureKind? {
        switch status {
        case 401, 403: return .authRejected
        case 429: return .throttled
        case 500...599: return .serverError
        default: return nil
        }
    }
}

/// A provider's failures to reach its service: every one counted by kind (for the metrics), and logged as one
/// warning per kind at most once per `interval`, saying how many more there were since the previous line. The line
/// names the provider, the service, the kind and the host; never a token, a key or a device.
public final class PushTransportFailures: Sendable {
    public static let defaultInterval: Duration = .seconds(60)

    let provider: String
    let service: String
    let interval: Duration
    private let logger: Logger

    private struct Kind {
        var total = 0
        var lastLine: ContinuousClock.Instant?
        var sinceLastLine = 0
    }
    private let kinds = Mutex<[PushTransportFailureKind: Kind]>([:])

    init(provider: String, service: String, logger: Logger, interval: Duration = defaultInterval) {
        self.provider = provider
        self.service = service
        self.logger = logger
        self.interval = interval
    }

    /// Failures since the start by kind (`connection_refused`: 3).
    public var counts: [String: Int] {
        kinds.withLock { kinds in Dictionary(uniqueKeysWithValues: kinds.map { ($0.key.rawValue, $0.value.total) }) }
    }

    /// Counts one failure of `url`'s host; logs it unless a line about this kind was logged within `interval`.
    func record(_ kind: PushTransportFailureKind, url: String, detail: String? = nil) {
        let now = ContinuousClock.now
        let repeats: Int? = kinds.withLock { kinds in
            var entry = kinds[kind] ?? Kind()
            defer { kinds[kind] = entry }
            entry.total += 1
            if let last = entry.lastLine, now - last < interval {
                entry.sinceLastLine += 1
                return nil
            }
            let repeats = entry.sinceLastLine
            entry.lastLine = now
            entry.sinceLastLine = 0
            return repeats
        }
        guard let repeats else { return }
        var metadata: Logger.Metadata = [
            "provider": .string(provider), "service": .string(service), "kind": .string(kind.rawValue), "host": .string(Self.host(of: url)),
            "repeats": .string(String(repeats)),
        ]
        if let detail { metadata["error"] = .string(String(detail.prefix(300))) }
        logger.warning("push transport failure: \(service) (\(provider)) cannot be reached or refuses the sender", metadata: metadata)
    }

    /// `host:port` of a URL (no user, password, path or query).
    static func host(of url: String) -> String {
        // The password goes first, so that one holding `/` or `@` cannot be left as the "host".
        var rest = Substring(RedactedURL.string(url))
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        return String(rest)
    }
}
