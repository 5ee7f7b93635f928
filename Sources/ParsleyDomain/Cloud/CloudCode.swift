public import ParsleyCore

/// An app's cloud code in Swift: functions, object triggers and jobs, registered before the server starts and
/// handed to it (`Parsley.main(cloud:)` in the ParsleyServer library, or `ParseServices(options:database:cloud:adapters:)`).
///
///     var cloud = CloudCode()
///     cloud.define("hello") { req in "Hello \(req.param("name", as: String.self) ?? "world")" }
///     cloud.beforeSave("Post") { req in
///         guard req.object["title", as: String.self]?.isEmpty == false else { throw ParseError(.scriptFailed, "a title please") }
///     }
///
/// A handler that throws a `ParseError` answers its code and message; any other error answers 141 with its text.
public struct CloudCode: Sendable {
    public typealias Function = @Sendable (FunctionRequest) async throws -> JSONValue
    public typealias Trigger = @Sendable (TriggerRequest) async throws -> Void

    struct FunctionEntry: Sendable {
        var handler: Function
        var validator: CloudValidator?
    }

    struct TriggerEntry: Sendable {
        var handler: Trigger
        var validator: CloudValidator?
    }

    struct TriggerKey: Hashable, Sendable {
        var className: String
        var name: TriggerName
    }

    private(set) var functions: [String: FunctionEntry] = [:]
    private(set) var triggers: [TriggerKey: TriggerEntry] = [:]
    /// Jobs by name (`job(_:_:)`, CloudJobs.swift).
    var jobs: [String: Job] = [:]
    /// Find triggers by class (CloudFindTriggers.swift).
    var beforeFinds: [String: BeforeFindAnswering] = [:]
    var afterFinds: [String: AfterFind] = [:]
    /// File triggers (CloudFileTriggers.swift).
    var fileTriggers: [TriggerName: FileTrigger] = [:]
    /// LiveQuery triggers (CloudLiveQueryTriggers.swift).
    var liveQueryTriggers = LiveQueryTriggers()

    /// The names of the registered jobs.
    public var jobNames: [String] { jobs.keys.sorted() }
    /// The names of the functions `define` registered, sorted (GraphQL's `CloudCodeFunction` enum).
    public var functionNames: [String] { functions.keys.sorted() }

    public init() {}

    /// `Parse.Cloud.define`: `POST /functions/<name>` answers `{"result": <what the handler returns>}`.
    public mutating func define<Result: CloudEncodable>(
        _ name: String, validator: CloudValidator? = nil, _ handler: @escaping @Sendable (FunctionRequest) async throws -> Result
    ) {
        functions[name] = FunctionEntry(handler: { try await handler($0).cloudJSON }, validator: validator)
    }

    /// `beforeSave`: runs before every create and update of the class (REST, batch, cloud code's own saves); may change
    /// `req.object` (what is stored and echoed) or throw to refuse the write.
    public mutating func beforeSave(_ className: String, validator: CloudValidator? = nil, _ handler: @escaping Trigger) {
        register(.beforeSave, className, validator, handler)
    }

    /// `afterSave`: runs after the write committed, with the saved object; never changes the answer, and its failures
    /// are logged and counted.
    public mutating func afterSave(_ className: String, validator: CloudValidator? = nil, _ handler: @escaping Trigger) {
        register(.afterSave, className, validator, handler)
    }

    /// `beforeDelete`: runs before a delete with the stored object; throw to refuse it.
    public mutating func beforeDelete(_ className: String, validator: CloudValidator? = nil, _ handler: @escaping Trigger) {
        register(.beforeDelete, className, validator, handler)
    }

    /// `afterDelete`: runs after the delete committed, with the deleted object.
    public mutating func afterDelete(_ className: String, validator: CloudValidator? = nil, _ handler: @escaping Trigger) {
        register(.afterDelete, className, validator, handler)
    }

    /// Parse Server's limits: `_Session` takes no save or delete triggers (only `afterLogout`, with the log-in
    /// triggers), `_PushStatus` only `afterSave`. A forbidden registration stops the start with the reason.
    private mutating func register(_ name: TriggerName, _ className: String, _ validator: CloudValidator?, _ handler: @escaping Trigger) {
        if className == "_Session" {
            preconditionFailure("Only the afterLogout trigger is allowed for the _Session class.")
        }
        if className == "_PushStatus", name != .afterSave {
            preconditionFailure("Only afterSave is allowed on _PushStatus")
        }
        triggers[TriggerKey(className: className, name: name)] = TriggerEntry(handler: handler, validator: validator)
    }

    /// Registers without the save/delete limits (the log-in triggers on `_User` and `_Session`).
    mutating func setTrigger(_ name: TriggerName, _ className: String, _ validator: CloudValidator?, _ handler: @escaping Trigger) {
        triggers[TriggerKey(className: className, name: name)] = TriggerEntry(handler: handler, validator: validator)
    }

    func trigger(_ name: TriggerName, _ className: String) -> TriggerEntry? {
        triggers.isEmpty ? nil : triggers[TriggerKey(className: className, name: name)]
    }

    /// The functions with a validator `rateLimit`, by name.
    public var functionRateLimits: [String: CloudValidator.RateLimit] {
        functions.compactMapValues { $0.validator?.rateLimit }
    }

    /// A trigger validator's `rateLimit` as Parse Server applies it: on the class's route (`/classes/<name>` and under it,
    /// `/users` for `_User`, `/login` for `beforeLogin`) for the methods that run the trigger.
    public struct RateLimitRoute: Sendable, Equatable {
        public var path: String
        public var methods: Set<String>
        public var limit: CloudValidator.RateLimit
        /// Whether the paths under `path` count too (a class's objects; not `/login`).
        public var includesSubpaths = true
    }

    public var triggerRateLimits: [RateLimitRoute] {
        triggers.compactMap { key, entry -> RateLimitRoute? in
            guard let limit = entry.validator?.rateLimit else { return nil }
            let route =
                key.className == "_User"
                ? "/users" : key.className == "_Installation" ? "/installations" : key.className == "_Role" ? "/roles" : "/classes/\(key.className)"
            switch key.name {
            case .beforeSave: return RateLimitRoute(path: route, methods: ["POST", "PUT"], limit: limit)
            case .beforeDelete: return RateLimitRoute(path: route, methods: ["DELETE"], limit: limit)
            case .beforeLogin: return RateLimitRoute(path: "/login", methods: ["POST"], limit: limit, includesSubpaths: false)
            default: return nil
            }
        }.sorted { ($0.path, $0.methods.sorted().joined()) < ($1.path, $1.methods.sorted().joined()) }
    }

    /// Whether nothing is registered.
    public var isEmpty: Bool {
        functions.isEmpty && triggers.isEmpty && jobs.isEmpty && beforeFinds.isEmpty && afterFinds.isEmpty && fileTriggers.isEmpty
    }

    /// Whether any `afterSave`/`afterDelete` is registered (they run from change events, which must then be on).
    var hasAfterTriggers: Bool { triggers.keys.contains { $0.name.isAfter } }

    /// Classes with a trigger of this kind.
    func classes(with name: TriggerName) -> [String] { triggers.keys.filter { $0.name == name }.map(\.className) }
}

/// What a cloud function may return: encoded as Parse JSON in `{"result": ...}`.
public protocol CloudEncodable: Sendable {
    var cloudJSON: JSONValue { get }
}

extension JSONValue: CloudEncodable { public var cloudJSON: JSONValue { self } }
extension String: CloudEncodable { public var cloudJSON: JSONValue { .string(self) } }
extension Int: CloudEncodable { public var cloudJSON: JSONValue { .int(Int64(self)) } }
extension Double: CloudEncodable { public var cloudJSON: JSONValue { .double(self) } }
extension Bool: CloudEncodable { public var cloudJSON: JSONValue { .bool(self) } }
extension ParseDate: CloudEncodable { public var cloudJSON: JSONValue { ["__type": "Date", "iso": .string(iso)] } }
extension Pointer: CloudEncodable {
    public var cloudJSON: JSONValue { ["__type": "Pointer", "className": .string(className), "objectId": .string(objectId)] }
}
extension Array: CloudEncodable where Element: CloudEncodable { public var cloudJSON: JSONValue { .array(map(\.cloudJSON)) } }
extension Dictionary: CloudEncodable where Key == String, Value: CloudEncodable {
    public var cloudJSON: JSONValue { .object(mapValues(\.cloudJSON)) }
}
extension Optional: CloudEncodable where Wrapped: CloudEncodable { public var cloudJSON: JSONValue { self?.cloudJSON ?? .null } }
