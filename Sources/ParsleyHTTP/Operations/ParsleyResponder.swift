public import Hummingbird
import ParsleyDomain
import HTTPTypes
import Foundation
import Logging
import NIOCore
import NIOConcurrencyHelpers
import ParsleyCore
import Synchronization

/// Where the server is in its life, as `/health` reports it (Parse Server's states).
public final class Readiness: Sendable {
    public enum State: String, Sendable {
        case initialized, starting, ok
    }
    private let box: NIOLockedValueBox<State>
    public init(_ state: State = .ok) { box = NIOLockedValueBox(state) }
    public var state: State {
        get { box.withLockedValue { $0 } }
        set { box.withLockedValue { $0 = newValue } }
    }
}

/// What the operations layer does around every request; all off or empty by default.
public struct OperationsOptions: Sendable {
    /// One log line per request at `info` (method, path, status, duration, request id, client address).
    public var accessLog = true
    public var metrics: ParsleyMetrics?
    public var readiness = Readiness(.ok)

    public init(accessLog: Bool = true, metrics: ParsleyMetrics? = nil, readiness: Readiness = Readiness(.ok)) {
        self.accessLog = accessLog
        self.metrics = metrics
        self.readiness = readiness
    }
}

/// Wraps `ParseTransport` with what operators need: the request id (`X-Request-Id`, honoured or generated,
/// echoed in the answer and on every log line of the request), `/health` with readiness and a database probe,
/// metrics and the access log. (Rate limits are counted in `ParseTransport`, once the request's real method is known.)
public struct ParsleyResponder: HTTPResponder {
    public typealias Context = ParsleyRequestContext

    let transport: ParseTransport
    let operations: OperationsOptions
    let databaseCheck = HealthCheck()

    public init(transport: ParseTransport, operations: OperationsOptions) {
        self.transport = transport
        self.operations = operations
    }

    static let requestIdHeader = HTTPField.Name("X-Request-Id")!
    static let retryAfter = HTTPField.Name("Retry-After")!

    public func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        let requestId = Self.requestId(request.headers[Self.requestIdHeader])
        var logger = context.logger
        logger[metadataKey: "request_id"] = .string(requestId)
        var inner = context
        inner.logger = logger
        let sessionUser = SessionUser()
        inner.sessionUser = sessionUser
        let forwarded = transport.options.security.trustProxy != .none
        var request = request
        if forwarded { Self.applyTrustProxy(transport.options.security.trustProxy, &request, &inner) }
        let path = request.uri.path
        let segments = relativeSegments(path)
        var response: Response
        if segments == ["health"] {
            response = await health()
        } else if transport.options.dashboard.enabled, DashboardResponder.owns(path) {
            response = await DashboardResponder(
                api: transport.api, sessions: transport.dashboardSessions, counters: transport.counters, history: transport.history
            ).respond(
                to: request, context: inner)
        } else {
            response = try await transport.respond(to: request, context: inner)
        }
        response.headers[Self.requestIdHeader] = requestId
        if transport.cors.configured, response.headers[.accessControlAllowOrigin] != nil {
            transport.cors.apply(to: &response.headers, origin: request.headers[.origin])
        }
        let elapsed = ContinuousClock.now - start
        transport.counters.count(status: response.status.code, duration: elapsed)
        operations.metrics?.record(method: request.method.rawValue, route: Self.route(segments), status: response.status.code, duration: elapsed)
        let user = sessionUser.id
        if operations.accessLog, logger.logLevel <= .info {
            AccessLog.log(
                AccessRecord(
                    method: request.method.rawValue, path: path, status: response.status.code, duration: elapsed, requestId: requestId,
                    ip: forwarded ? .text(inner.clientAddress ?? "-") : AccessRecord.Client(context.remoteAddress), user: user),
                logger: logger)
        }
        return response
    }

    // (Both literals are valid field names; the fallbacks are never used.)
    static let forwardedFor = HTTPField.Name("X-Forwarded-For") ?? .via
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto") ?? .via

    /// `trustProxy`: the client's address from `X-Forwarded-For` as far as the hops are trusted, and HTTPS when a trusted
    /// peer says so in `X-Forwarded-Proto` (its first entry); the request then reads as one with the `https` scheme.
    static func applyTrustProxy(_ trust: TrustProxy, _ request: inout Request, _ context: inout Context) {
        let peer = context.remoteAddress?.ipAddress
        context.clientAddress = trust.clientAddress(peer: peer, forwardedFor: request.headers[values: forwardedFor])
        guard trust.trustsForwardedProtocol(peer: peer), let proto = request.headers[forwardedProto] else { return }
        let first = proto.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard first == "https" else { return }
        context.forwardedHTTPS = true
        var head = request.head
        head.scheme = "https"
        request = Request(head: head, body: request.body)
    }

    /// The path below the mount, split; nil outside it.
    func relativeSegments(_ path: String) -> [String]? {
        ParseTransport.segments(path, below: transport.mountPrefix)
    }

    /// 200 `{"status":"ok"}` once ready and the database answers a ping (`ParseServices.pingDatabase`; an answer is
    /// trusted for a second, so a load balancer probing hard costs no database round trips); otherwise 503 with the
    /// state (`Retry-After: 1`) or `{"status":"error"}`.
    func health() async -> Response {
        let state = operations.readiness.state
        guard state == .ok else {
            var r = ParseTransport.json(503, ["status": .string(state.rawValue)])
            r.headers[Self.retryAfter] = "1"
            return r
        }
        do {
            if !databaseCheck.recentlyPassed {
                try await transport.api.services.pingDatabase()
                databaseCheck.passed()
            }
            return Response(status: .ok, headers: ParseTransport.baseHeaders, body: .init(byteBuffer: Self.healthyBody))
        } catch {
            databaseCheck.failed()
            var r = ParseTransport.json(503, ["status": "error"])
            r.headers[Self.retryAfter] = "1"
            return r
        }
    }

    static let healthyBody = ByteBuffer(string: #"{"status":"ok"}"#)

    /// The client's id when it is short and printable, else a new random one.
    static func requestId(_ given: String?) -> String {
        if let given, (1...128).contains(given.utf8.count), given.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) { return given }
        // 16 hex digits: a random value drawn once per process, stepped by an odd constant per request (unique within
        // the process, unlikely to repeat across nodes), without a system call on every request.
        var bits = requestIdSeed &+ requestIdCounter.add(1, ordering: .relaxed).newValue &* 0x9E37_79B9_7F4A_7C15
        let hex = LogText.hexDigits
        var out = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 {
            out[i] = hex[Int(bits & 0xF)]
            bits >>= 4
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let requestIdSeed = UInt64.random(in: .min ... .max)
    private static let requestIdCounter = Atomic<UInt64>(0)

    /// A low-cardinality route label: `classes/:className/:objectId`, `users/me`, `functions/:name`, ...
    static func route(_ segments: [String]?) -> String {
        guard let segments else { return "other" }
        guard let first = segments.first else { return "root" }
        let keep: Set<String> = ["me", "login", "logout"]
        var parts = [first]
        for (i, s) in segments.dropFirst().enumerated() {
            if keep.contains(s) {
                parts.append(s)
            } else {
                switch (first, i) {
                case ("classes", 0), ("schemas", 0), ("purge", 0), ("aggregate", 0): parts.append(":className")
                case ("classes", 1): parts.append(":objectId")
                case ("functions", 0), ("jobs", 0), ("events", 0), ("files", _): parts.append(":name")
                default: parts.append(":id")
                }
            }
            if parts.count >= 4 { break }
        }
        let known: Set<String> = [
            "classes", "users", "login", "logout", "sessions", "roles", "schemas", "batch", "config", "installations", "files", "functions",
            "jobs", "events", "health", "serverInfo", "purge", "aggregate", "requestPasswordReset", "verificationEmailRequest",
            "verifyPassword", "loginAs", "upgradeToRevocableSession", "apps", "push", "hooks", "graphql", "graphql-config", "scriptlog", "security",
            "challenge",
        ]
        return known.contains(first) ? parts.joined(separator: "/") : "unknown"
    }
}

/// When the database last answered `/health`'s ping: an answer is trusted for `freshFor`; a failure is not kept.
final class HealthCheck: Sendable {
    let freshFor: Duration
    private let start = ContinuousClock.now
    /// Nanoseconds after `start` of the last answer; -1: none, or the last ping failed.
    private let lastPassed = Atomic<Int64>(-1)

    init(freshFor: Duration = .seconds(1)) { self.freshFor = freshFor }

    private var now: Int64 {
        let (s, atto) = (ContinuousClock.now - start).components
        return s * 1_000_000_000 + atto / 1_000_000_000
    }

    var recentlyPassed: Bool {
        let last = lastPassed.load(ordering: .relaxed)
        guard last >= 0 else { return false }
        let (s, atto) = freshFor.components
        return now - last < s * 1_000_000_000 + atto / 1_000_000_000
    }

    func passed() { lastPassed.store(now, ordering: .relaxed) }
    func failed() { lastPassed.store(-1, ordering: .relaxed) }
}
