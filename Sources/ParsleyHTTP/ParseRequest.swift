public import ParsleyCore
public import ParsleyDomain

/// One Parse API call after transport decoding: the effective method (after `_method`), the path below the
/// mount, parameters (query string merged with a GET-via-POST body), the JSON body, and who is calling.
/// Batch sub-requests are built as `ParseRequest`s too, so they run the same handlers in-process.
public struct ParseRequest: Sendable {
    public enum Method: String, Sendable { case get = "GET", post = "POST", put = "PUT", delete = "DELETE" }

    public var method: Method
    /// Path segments below the mount path: `["classes", "GameScore", "abc"]`.
    public var path: [String]
    public var params: [String: JSONValue]
    public var body: JSONValue?
    public var auth: Auth
    /// Absolute URL of the mount (`http://host:1337/parse`), for `Location` headers.
    public var mountURL: String
    /// `X-Parse-Request-Id`, for idempotency (nil on batch sub-requests).
    public var requestId: String? = nil
    /// The order the body's object keys were written in (noted for `/schemas`, where index columns follow it).
    public var keyOrders = JSONKeyOrders()
    /// Request headers a handler reads itself (lower-cased names): the `/apps` pages' `x-requested-with` and
    /// `x-parse-page-param-locale`.
    public var headers: [String: String] = [:]

    public init(method: Method, path: [String], params: [String: JSONValue] = [:], body: JSONValue? = nil, auth: Auth, mountURL: String) {
        self.method = method
        self.path = path
        self.params = params
        self.body = body
        self.auth = auth
        self.mountURL = mountURL
    }

    /// The body as an object (empty when absent).
    public var bodyObject: JSONValue { body ?? .object([:]) }
}

/// A Parse API answer before transport encoding.
public struct ParseResponse: Sendable {
    public var status: Int
    public var body: JSONValue
    public var location: String?
    /// Set for a non-JSON answer (the HTML pages under `/apps`): `body` is then a `.string` sent as is.
    public var contentType: String? = nil
    /// Further headers (`X-Parse-Job-Status-Id`).
    public var headers: [String: String] = [:]
    /// Bytes sent as they are with `contentType` (a file of the pages folder), instead of `body`.
    public var rawBody: [UInt8]? = nil

    public init(status: Int = 200, body: JSONValue, location: String? = nil) {
        self.status = status
        self.body = body
        self.location = location
    }

    public static func ok(_ object: [String: JSONValue]) -> ParseResponse { ParseResponse(body: .object(object)) }
}

/// Errors answered outside the `{"code","error"}` scheme: bad application id or keys, master key required.
public struct AccessDenied: Error, Sendable {
    public var message: String
    /// Whether Parse Server 9 answers `Permission denied` instead (`createSanitizedHttpError`, with
    /// `enableSanitizedErrorResponse`).
    public var sanitizable = false
    public static let unauthorized = AccessDenied(message: "unauthorized")
    public static let masterKeyRequired = AccessDenied(message: "unauthorized: master key is required", sanitizable: true)

    /// The message a client reads.
    public func answered(sanitize: Bool) -> String { sanitize && sanitizable ? "Permission denied" : message }
}

extension ParseError {
    /// Parse Server's status for each code: 101 -> 404, 1 -> 500, everything else 400.
    public var httpStatus: Int {
        switch code {
        case .objectNotFound: return 404
        case .internalServerError: return 500
        default: return 400
        }
    }
}
