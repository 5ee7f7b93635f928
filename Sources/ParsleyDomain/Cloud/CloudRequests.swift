import NIOConcurrencyHelpers
public import Logging
public import ParsleyCore

/// Who called and from where, as every cloud code request carries it.
public struct CloudCaller: Sendable {
    /// The request came with the master key.
    public var master: Bool
    /// The signed-in user (the `_User` object as its owner reads it), nil without a session or with the master key.
    public var user: [String: JSONValue]?
    public var installationId: String?
    public var ip: String?
    /// The request's headers (lower-case names).
    public var headers: [String: String]
    /// `X-Parse-Cloud-Context` or the body's `_context`; shared by a write's `beforeSave` and `afterSave`.
    public var context: [String: JSONValue]
    /// The request came with the read-only master key (`request.isReadOnly`, Parse Server 9.5); `master` is then true too.
    public var isReadOnly = false

    /// The user's id, when there is one.
    public var userId: String? { user?["objectId"]?.stringValue }
}

/// `POST /functions/:name`: what a function receives.
public struct FunctionRequest: Sendable {
    public let functionName: String
    /// The JSON body with the query string's parameters merged in.
    public let params: [String: JSONValue]
    public let caller: CloudCaller
    public let log: Logger
    /// Parse with the caller's rights (`parse.asMaster` for the master's).
    public let parse: CloudAPI
    /// The HTTP status and headers of the `/functions/:name` answer (Parse Server 9.1):
    /// `try req.response.status(201).set("X-Custom", "abc")`; the body is `{"result": ...}` as ever.
    public let response: FunctionResponse

    public init(
        functionName: String, params: [String: JSONValue], caller: CloudCaller, log: Logger, parse: CloudAPI,
        response: FunctionResponse = FunctionResponse()
    ) {
        self.functionName = functionName
        self.params = params
        self.caller = caller
        self.log = log
        self.parse = parse
        self.response = response
    }

    /// A parameter decoded as a Swift value: `req.param("name", as: String.self)`.
    public func param<T: ParseDecodable>(_ name: String, as type: T.Type) -> T? {
        params[name].flatMap(T.init(parseJSON:))
    }
}

/// What an object trigger receives (`beforeSave`, `afterSave`, `beforeDelete`, `afterDelete`).
public struct TriggerRequest: Sendable {
    public let triggerName: TriggerName
    /// The object being written (changes on top of the stored fields), or the saved or deleted object in `after*`.
    public let object: CloudObject
    /// The stored object before the write, for updates and deletes.
    public let original: CloudObject?
    public let caller: CloudCaller
    public let log: Logger
    public let parse: CloudAPI
}

/// Every cloud code request: who called, from where, with which context.
public protocol CloudRequest: Sendable {
    var caller: CloudCaller { get }
}

extension CloudRequest {
    public var master: Bool { caller.master }
    public var isReadOnly: Bool { caller.isReadOnly }
    public var user: [String: JSONValue]? { caller.user }
    public var installationId: String? { caller.installationId }
    public var headers: [String: String] { caller.headers }
    public var ip: String? { caller.ip }
    public var context: [String: JSONValue] { caller.context }
}

extension FunctionRequest: CloudRequest {}
extension TriggerRequest: CloudRequest {}

/// Parse's trigger names.
public enum TriggerName: String, Sendable, CaseIterable {
    case beforeSave, afterSave, beforeDelete, afterDelete
    case beforeFind, afterFind
    case beforeLogin, afterLogin, afterLogout
    case beforePasswordResetRequest

    var isAfter: Bool { self == .afterSave || self == .afterDelete }
}

/// What a cloud function sets on its HTTP answer: a status (100 to 599; default 200) and headers. Only the REST
/// `/functions/:name` answer carries them (not GraphQL's `callCloudCode`, nor `parse.run` from cloud code).
public final class FunctionResponse: Sendable {
    private let state = NIOLockedValueBox<(status: Int?, headers: [(String, String)])>((nil, []))

    public init() {}

    /// Sets the answer's status; 141 for a code outside 100...599.
    @discardableResult
    public func status(_ code: Int) throws(ParseError) -> FunctionResponse {
        guard (100...599).contains(code) else { throw ParseError(.scriptFailed, "Invalid status code: \(code)") }
        state.withLockedValue { $0.status = code }
        return self
    }

    /// Sets a header (replacing one of the same name, case-insensitively); 141 for a name that is not a header token
    /// or a value with a line break.
    @discardableResult
    public func set(_ name: String, _ value: String) throws(ParseError) -> FunctionResponse {
        let token = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        guard !name.isEmpty, name.allSatisfy(token.contains) else { throw ParseError(.scriptFailed, "Invalid header name: \(name)") }
        guard !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw ParseError(.scriptFailed, "Invalid header value for \(name)")
        }
        state.withLockedValue { s in
            s.headers.removeAll { $0.0.lowercased() == name.lowercased() }
            s.headers.append((name, value))
        }
        return self
    }

    /// The status set, if any.
    public var statusCode: Int? { state.withLockedValue { $0.status } }
    /// The headers set, in order.
    public var headers: [(name: String, value: String)] { state.withLockedValue { $0.headers.map { (name: $0.0, value: $0.1) } } }
}
