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
