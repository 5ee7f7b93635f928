public import Hummingbird
import HTTPTypes
import Logging
public import NIOCore
import NIOConcurrencyHelpers
import ParsleyCore
import ParsleyDomain

/// The request context of the server: Hummingbird's core context, the client's address, and what the pipeline learns
/// on the way in — the decoded Parse call (`ParseTransport`), who is asking (`Authenticate`, `ResolveSession`).
public struct ParsleyRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The Parse call as the transport decoded it (nil for `/files` and the pages under `/apps`, which read their own
    /// bodies).
    @CopyOnWrite var call: ParseCall? = nil
    /// Who is asking, once the authentication middleware ran (or the batch that a sub-request belongs to).
    @CopyOnWrite var auth: Auth? = nil
    /// Whether the session token was looked up already (a batch's sub-requests share their batch's).
    var sessionResolved = false
    /// A batch counts its sub-requests against the rate limits before any runs; they are not counted again.
    var rateLimitsCounted = false
    /// Set for a batch sub-request or an in-process call: the route leaves its answer (or error) here instead of
    /// encoding it.
    var capture: CapturedAnswer?
    /// The client's address: the TCP peer, or what the proxies `trustProxy` trusts say (`ParsleyResponder`).
    var clientAddress: String?
    /// A trusted proxy said the client used HTTPS (`X-Forwarded-Proto`).
    var forwardedHTTPS = false
    /// Set by `ParsleyResponder` for each request; `ResolveSession` fills it for the access log's user column.
    var sessionUser: SessionUser?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        clientAddress = remoteAddress?.ipAddress
    }

    /// A context for a request that did not come from a socket of its own (an in-process call).
    init(logger: Logger, remoteAddress: SocketAddress?) {
        coreContext = .init(source: LoggerSource(logger: logger))
        self.remoteAddress = remoteAddress
        clientAddress = remoteAddress?.ipAddress
    }

    struct LoggerSource: RequestContextSource {
        let logger: Logger
    }
}

/// What the transport decoded from a Parse API request: the effective method (after the JS SDK's `_method`), the path
/// below the mount, parameters (query string merged with a GET-via-POST body), the JSON body, the credentials from
/// headers or the body, and the cloud context.
struct ParseCall: Sendable {
    var method: ParseRequest.Method
    var segments: [String]
    var params: [String: JSONValue] = [:]
    var body: JSONValue?
    var keyOrders = JSONKeyOrders()
    var credentials = Credentials()
    var cloudContext: [String: JSONValue]?
    /// Absolute URL of the mount (`http://host:1337/parse`), for `Location` headers and file URLs.
    var mountURL: String
    /// `X-Parse-Request-Id` (idempotency; nil on batch sub-requests).
    var requestId: String?
    /// The request's headers, for cloud code's `req.headers` (only copied when cloud code wants them).
    var headers: [String: String] = [:]
}

/// Keys and tokens a request presents, from its headers or (JS SDK) its body.
struct Credentials: Sendable {
    var applicationId: String?
    var masterKey: String?
    var restKey: String?
    var clientKey: String?
    var javascriptKey: String?
    var windowsKey: String?
    var sessionToken: String?
    var installationId: String?
    /// The embedded dashboard's session cookie and CSRF token.
    var cookie: String?
    var csrf: String?
    /// Parse Server's `X-Parse-Maintenance-Key`.
    var maintenanceKey: String? = nil
}

/// Where a batch sub-request or an in-process call receives its answer.
final class CapturedAnswer: Sendable {
    private let box = NIOLockedValueBox<Result<ParseResponse, any Error>?>(nil)

    func set(_ result: Result<ParseResponse, any Error>) { box.withLockedValue { $0 = result } }

    /// The answer, or the error that took its place (`RouteNotFound` when nothing answered).
    func get() throws -> ParseResponse {
        guard let result = box.withLockedValue({ $0 }) else { throw RouteNotFound() }
        return try result.get()
    }
}

/// An optional value kept behind one reference and copied only when written while shared. Hummingbird hands the request
/// context to every middleware by value; the decoded call and the caller's `Auth` are large, so a copy of the context
/// is a few retains instead of a copy of every field (a profile of get-by-id had the context's copies and destroys at
/// 2%). Nil costs no allocation.
@propertyWrapper
struct CopyOnWrite<Wrapped: Sendable>: Sendable {
    // Mutated only while uniquely referenced (`_modify` below), so sharing it between copies is safe.
    private final class Box: @unchecked Sendable {
        var value: Wrapped
        init(_ value: Wrapped) { self.value = value }
    }
    private var box: Box?

    init(wrappedValue: Wrapped?) { box = wrappedValue.map(Box.init) }

    var wrappedValue: Wrapped? {
        get { box?.value }
        set {
            guard let newValue else { return box = nil }
            if box != nil, isKnownUniquelyReferenced(&box) { box?.value = newValue } else { box = Box(newValue) }
        }
        _modify {
            var value = box?.value
            box = nil
            defer { box = value.map(Box.init) }
            yield &value
        }
    }
}

/// The objectId of the user whose session token a request carried, from `ResolveSession` to the access log (the
/// dashboard's log table). One per request, shared by the copies of its context.
final class SessionUser: Sendable {
    private let box = NIOLockedValueBox<String?>(nil)
    var id: String? {
        get { box.withLockedValue { $0 } }
        set { box.withLockedValue { $0 = newValue } }
    }
}
