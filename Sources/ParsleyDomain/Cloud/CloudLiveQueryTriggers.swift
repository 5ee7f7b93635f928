public import Logging
public import ParsleyCore

/// What `beforeConnect` receives: the connecting client and the keys it presented.
public struct LiveQueryConnectRequest: CloudRequest {
    public let caller: CloudCaller
    /// The client's id, as `connected` will name it.
    public let clientId: String
    /// The session token the client connected with (already validated).
    public let sessionToken: String?
    public let log: Logger
}

/// What `beforeSubscribe` receives; it may change the query (`where`, `keys`, `watch`) or throw to refuse.
public struct LiveQuerySubscribeRequest: CloudRequest {
    public let caller: CloudCaller
    public let className: String
    public let requestId: Int
    public var whereValue: JSONValue
    public var keys: [String]?
    public var watch: [String]?
    public let log: Logger
}

/// What `afterLiveQueryEvent` receives for one event to one subscriber; it may change `object` (and `original`)
/// or set `sendEvent` false to drop the event.
public struct LiveQueryEventRequest: CloudRequest {
    public let caller: CloudCaller
    public let className: String
    /// `create`, `enter`, `update`, `leave` or `delete`.
    public let event: String
    public var object: [String: JSONValue]
    public var original: [String: JSONValue]?
    public var sendEvent = true
    public let log: Logger
}

/// The LiveQuery triggers of an app's cloud code.
public struct LiveQueryTriggers: Sendable {
    public typealias BeforeConnect = @Sendable (LiveQueryConnectRequest) async throws -> Void
    public typealias BeforeSubscribe = @Sendable (inout LiveQuerySubscribeRequest) async throws -> Void
    public typealias AfterEvent = @Sendable (inout LiveQueryEventRequest) async throws -> Void

    var beforeConnect: BeforeConnect?
    var beforeSubscribe: [String: BeforeSubscribe] = [:]
    var afterEvent: [String: AfterEvent] = [:]
}

extension CloudCode {
    /// `Parse.Cloud.beforeConnect`: runs when a LiveQuery client connects; throw to refuse the connection (the client
    /// gets an `error` with the thrown code, 141 by default, and `reconnect: false`).
    public mutating func beforeConnect(_ handler: @escaping LiveQueryTriggers.BeforeConnect) {
        liveQueryTriggers.beforeConnect = handler
    }

    /// `Parse.Cloud.beforeSubscribe`: runs before a subscription to the class is made (or replaced by `update`); may
    /// change `req.whereValue`, `req.keys` and `req.watch`, or throw to refuse it.
    public mutating func beforeSubscribe(_ className: String, _ handler: @escaping LiveQueryTriggers.BeforeSubscribe) {
        liveQueryTriggers.beforeSubscribe[className] = handler
    }

    /// `Parse.Cloud.afterLiveQueryEvent`: runs for each event about to reach a subscriber of the class; may change
    /// `req.object`/`req.original` or set `req.sendEvent = false`. The permission checks have already run: what it
    /// adds is sent as it is, but protected fields and internal fields are removed again afterwards.
    public mutating func afterLiveQueryEvent(_ className: String, _ handler: @escaping LiveQueryTriggers.AfterEvent) {
        liveQueryTriggers.afterEvent[className] = handler
    }

    /// Whether any LiveQuery trigger is registered.
    var hasLiveQueryTriggers: Bool {
        liveQueryTriggers.beforeConnect != nil || !liveQueryTriggers.beforeSubscribe.isEmpty || !liveQueryTriggers.afterEvent.isEmpty
    }
}
