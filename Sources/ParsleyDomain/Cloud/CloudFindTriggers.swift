public import Logging
public import ParsleyCore
import Synchronization

/// The query a `beforeFind` sees and may change (Parse's `request.query`): its conditions, limit, skip, order,
/// keys and includes.
public final class CloudQuery: Sendable {
    public let className: String
    private let state: Mutex<FindOptions>

    init(className: String, _ find: FindOptions) {
        self.className = className
        self.state = Mutex(find)
    }

    var options: FindOptions { state.withLock { $0 } }

    /// The `where` conditions (Parse's query language).
    public var conditions: [String: JSONValue] {
        get { state.withLock { $0.whereValue?.objectValue ?? [:] } }
        set { state.withLock { $0.whereValue = .object(newValue) } }
    }
    /// Adds `key == value` (or any condition: `["$gt": 5]`) to the conditions.
    public func whereKey(_ key: String, _ condition: JSONValue) { conditions[key] = condition }
    public var limit: Int? {
        get { state.withLock { $0.limit } }
        set { state.withLock { $0.limit = newValue } }
    }
    public var skip: Int {
        get { state.withLock { $0.skip } }
        set { state.withLock { $0.skip = newValue } }
    }
    public var order: [String] {
        get { state.withLock { $0.order } }
        set { state.withLock { $0.order = newValue } }
    }
    /// The fields returned (nil: all).
    public var keys: [String]? {
        get { state.withLock { $0.keys } }
        set { state.withLock { $0.keys = newValue } }
    }
    public var excludeKeys: [String] {
        get { state.withLock { $0.excludeKeys } }
        set { state.withLock { $0.excludeKeys = newValue } }
    }
    public var include: [String] {
        get { state.withLock { $0.include } }
        set { state.withLock { $0.include = newValue } }
    }
}

/// What a `beforeFind` receives: the query (change it in place), whether it counts, whether it is a get.
public struct BeforeFindRequest: Sendable {
    public let query: CloudQuery
    public let count: Bool
    public let isGet: Bool
    public let caller: CloudCaller
    public let log: Logger
    public let parse: CloudAPI
}

/// What an `afterFind` receives: the objects found; it returns the objects to answer.
public struct AfterFindRequest: Sendable {
    public let className: String
    public let objects: [[String: JSONValue]]
    public let caller: CloudCaller
    public let log: Logger
    public let parse: CloudAPI
}

extension CloudCode {
    public typealias BeforeFind = @Sendable (BeforeFindRequest) async throws -> Void
    /// A `beforeFind` that may answer the find itself: the objects it returns are the results, and the database is not
    /// queried (nil: the query runs, as changed). As in Parse Server 8.3+, where `beforeFind` may return objects.
    public typealias BeforeFindAnswering = @Sendable (BeforeFindRequest) async throws -> [[String: JSONValue]]?
    public typealias AfterFind = @Sendable (AfterFindRequest) async throws -> [[String: JSONValue]]

    /// `beforeFind`: runs before every find, get and count of the class by a client or cloud code (never the server's
    /// own lookups); may change `req.query` or throw to refuse (141, or the thrown Parse error).
    public mutating func beforeFind(_ className: String, _ handler: @escaping BeforeFind) {
        beforeFinds[className] = { request in
            try await handler(request)
            return nil
        }
    }

    /// `beforeFind` that may return the objects answering the find (a cache, an outside search, `[]` to answer nothing
    /// without an error); they are answered as returned (ACLs and class-level permissions are the trigger's to apply),
    /// `afterFind` still runs on them, `count` is their number. Returning nil runs the query.
    public mutating func beforeFindAnswering(_ className: String, _ handler: @escaping BeforeFindAnswering) {
        beforeFinds[className] = handler
    }

    /// `afterFind`: gets the objects a find or get found and returns those to answer (filtered, changed).
    public mutating func afterFind(_ className: String, _ handler: @escaping AfterFind) {
        afterFinds[className] = handler
    }
}

extension CloudRuntime {
    /// The find hooks the query service calls.
    var queryHooks: QueryHooks {
        var hooks = QueryHooks()
        hooks.beforeFind = { [self] className in
            if let hook = webhooks.trigger(.beforeFind, className) {
                return { [self] className, find, isGet, auth in
                    try await logged(.beforeFind, className, auth: auth) {
                        try await beforeFindWebhook(hook, className, find, isGet: isGet, auth: auth)
                    }
                }
            }
            guard let handler = code.beforeFinds[className] else { return nil }
            return { [self] className, find, isGet, auth in
                try await logged(.beforeFind, className, auth: auth) {
                    let query = CloudQuery(className: className, find)
                    let request = BeforeFindRequest(
                        query: query, count: find.count, isGet: isGet, caller: try await caller(auth), log: logger,
                        parse: CloudAPI(runtime: self, auth: auth))
                    let objects = try await Self.answering { try await handler(request) }
                    _ = try screened(query.options.whereValue ?? .null)
                    return QueryHooks.BeforeFindOutcome(find: query.options, objects: try objects.map { Self.answered(try screened($0), className) })
                }
            }
        }
        hooks.afterFind = { [self] className in
            if let hook = webhooks.trigger(.afterFind, className) {
                return { [self] className, objects, _, auth in
                    try await logged(.afterFind, className, auth: auth) { try await afterFindWebhook(hook, className, objects, auth: auth) }
                }
            }
            guard let handler = code.afterFinds[className] else { return nil }
            return { [self] className, objects, _, auth in
                try await logged(.afterFind, className, auth: auth) {
                    let request = AfterFindRequest(
                        className: className, objects: objects, caller: try await caller(auth), log: logger,
                        parse: CloudAPI(runtime: self, auth: auth))
                    return try screened(try await Self.answering { try await handler(request) })
                }
            }
        }
        return hooks
    }
}

extension CloudRuntime {
    /// Objects a `beforeFind` answers with, as a find answers them (without their own class's `className`).
    static func answered(_ objects: [[String: JSONValue]], _ className: String) -> [[String: JSONValue]] {
        objects.map { object in
            var o = object
            if o["className"]?.stringValue == className { o["className"] = nil }
            if o["__type"] == "Object" { o["__type"] = nil }
            return o
        }
    }
}

extension BeforeFindRequest: CloudRequest {}
extension AfterFindRequest: CloudRequest {}
