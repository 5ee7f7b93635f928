import Logging
public import ParsleyCore
import ParsleyStorage
import Synchronization

/// Runs an app's `CloudCode` inside the server: functions on request, `beforeSave`/`beforeDelete` as the write
/// pipeline's before-hooks, and `afterSave`/`afterDelete` from the committed change events of this process
/// (`runAfterTriggers`, a background service), so a slow or failing after-trigger never slows or fails a write.
public final class CloudRuntime: Sendable {
    public let code: CloudCode
    let logger = Logger(label: "parsley.cloud")
    /// Parse Server's `logLevels`: the levels of the lines triggers and functions log (`CloudLogLevels`).
    let logLevels: CloudLogLevels

    /// The services cloud code calls, set once they are built (they hold this runtime's hooks).
    struct Services: Sendable {
        var objects: ObjectService
        var queries: QueryService
        var roles: RoleService
        var push: PushService
        var mail: any EmailAdapter
    }
    private let services = Mutex<Services?>(nil)
    /// This process's committed writes, subscribed when the services are built (none is missed).
    private let afterEvents = Mutex<AsyncMapSequence<AsyncStream<ChangeMessage>, ChangeFeed.Item>?>(nil)
    /// Job runs waiting for `runJobs`.
    let jobQueue = JobQueue()
    private let afterFailures = Atomic<Int>(0)
    private let afterRuns = Atomic<Int>(0)

    /// Functions and triggers registered as webhooks (`/hooks`); they take precedence over Swift handlers.
    public let webhooks: Webhooks

    public init(
        code: CloudCode, webhookKey: String? = nil, webhookTimeout: Duration = .seconds(10), webhookTransport: any WebhookTransport,
        logLevels: CloudLogLevels = CloudLogLevels()
    ) {
        self.code = code
        self.logLevels = logLevels
        self.webhooks = Webhooks(key: webhookKey, timeout: webhookTimeout, transport: webhookTransport)
    }

    /// Whether requests should keep their headers for cloud code (Swift handlers, or webhooks registered now).
    public var wantsRequestHeaders: Bool { !code.isEmpty || !webhooks.isEmpty }

    /// After-triggers that threw (for metrics and tests), and those that ran.
    public var afterTriggerFailures: Int { afterFailures.load(ordering: .relaxed) }
    public var afterTriggersRun: Int { afterRuns.load(ordering: .relaxed) }

    func attach(objects: ObjectService, queries: QueryService, roles: RoleService, push: PushService, mail: any EmailAdapter) {
        services.withLock { $0 = Services(objects: objects, queries: queries, roles: roles, push: push, mail: mail) }
        // Subscribed always (a webhook after-trigger may be registered later); no event flows while events are off.
        let stream = objects.changes.subscribe()
        afterEvents.withLock { $0 = stream }
    }

    func attached() throws -> Services {
        guard let s = services.withLock({ $0 }) else { throw ParseError(.internalServerError, "cloud code is not attached to the services") }
        return s
    }

    /// The before-hooks the write pipeline calls: a class has one when a webhook or a Swift handler is registered.
    var writeHooks: WriteHooks {
        var hooks = WriteHooks()
        hooks.beforeSave = { [self] className in
            guard webhooks.trigger(.beforeSave, className) != nil || code.trigger(.beforeSave, className) != nil else { return nil }
            return { [self] className, objectId, body, original, auth in
                try await logged(.beforeSave, className, auth: auth) {
                    try await beforeSave(className, objectId: objectId, body: body, original: original, auth: auth)
                }
            }
        }
        hooks.beforeDelete = { [self] className in
            guard webhooks.trigger(.beforeDelete, className) != nil || code.trigger(.beforeDelete, className) != nil else { return nil }
            return { [self] className, objectId, original, auth in
                try await logged(.beforeDelete, className, auth: auth) {
                    try await beforeDelete(className, objectId: objectId, original: original, auth: auth)
                }
            }
        }
        hooks.carriesRequest = { [self] in code.hasAfterTriggers || webhooks.hasAfterTriggers }
        return hooks
    }

    // MARK: Requests

    /// The caller as cloud code sees it: the user's object (read as its owner reads it), or none with the master key.
    func caller(_ auth: Auth) async throws -> CloudCaller {
        var user: [String: JSONValue]?
        if !auth.isMaster, let userId = auth.userId {
            user = try? await attached().queries.get("_User", objectId: userId, FindOptions(), auth: auth)
            user?["className"] = "_User"
            if let token = auth.sessionToken { user?["sessionToken"] = .string(token) }
        }
        let request = RequestInfo.current
        return CloudCaller(
            master: auth.isMaster && !auth.isMaintenance, user: user, installationId: auth.installationId, ip: request.ip, headers: request.headers,
            context: request.context, isReadOnly: auth.isMaster && auth.isReadOnly)
    }

    /// Runs a handler; what it throws becomes the Parse error it answers (`parseError`).
    static func answering<T>(_ handler: () async throws -> T) async throws -> T {
        let outcome: Result<T, ParseError>
        do { outcome = .success(try await handler()) } catch { outcome = .failure(parseError(error)) }
        return try outcome.get()
    }

    /// What a handler's error answers: a Parse error as it is, anything else as 141 with its text.
    static func parseError(_ error: any Error, default code: ParseError.Code = .scriptFailed) -> ParseError {
        if let e = error as? ParseError { return e }
        let text = "\(error)"
        return ParseError(code, text.isEmpty ? "Script failed." : text)
    }

    /// What every webhook call carries about the caller (Parse Server's webhook body): `master`, `user` when signed
    /// in, `installationId` when known, `headers`, `ip`, `context`.
    static func webhookBody(_ caller: CloudCaller) -> [String: JSONValue] {
        var body: [String: JSONValue] = [
            "master": .bool(caller.master), "headers": .object(caller.headers.mapValues(JSONValue.string)), "context": .object(caller.context),
        ]
        if let user = caller.user { body["user"] = .object(user) }
        if let installationId = caller.installationId { body["installationId"] = .string(installationId) }
        if let ip = caller.ip { body["ip"] = .string(ip) }
        return body
    }

    // MARK: Functions

    /// `POST /functions/:name`: 141 `Invalid function: "<name>"` for an unknown one; validators answer 142. The result
    /// is checked as a client's body is (`screened`): 105 for a refused keyword.
    public func run(_ call: CallFunction, auth: Auth) async throws -> JSONValue {
        try await run(call, auth: auth, response: FunctionResponse())
    }

    /// `run`, with the HTTP status and headers the function set on `response` (`req.response`, Parse Server 9.1).
    public func run(_ call: CallFunction, auth: Auth, response: FunctionResponse) async throws -> JSONValue {
        let name = call.functionName
        guard webhooks.function(name) != nil || code.functions[name] != nil else { throw ParseError(.scriptFailed, "Invalid function: \"\(name)\"") }
        return try await loggedFunction(name, auth: auth) { try await runFunction(call, auth: auth, response: response) }
    }

    private func runFunction(_ call: CallFunction, auth: Auth, response: FunctionResponse) async throws -> JSONValue {
        let name = call.functionName
        if let hook = webhooks.function(name) {
            let caller = try await caller(auth)
            var body = Self.webhookBody(caller)
            body["functionName"] = .string(name)
            body["params"] = .object(call.params)
            return try screened(try Webhooks.unwrap(try await webhooks.call(hook, body)))
        }
        guard let entry = code.functions[name] else { throw ParseError(.scriptFailed, "Invalid function: \"\(name)\"") }
        let caller = try await caller(auth)
        var params = call.params
        if let validator = entry.validator {
            params = try await validate(validator, params, caller: caller, auth: auth)
            if validator.skipWithMasterKey && caller.master { return .null }
        }
        let request = FunctionRequest(
            functionName: name, params: params, caller: caller, log: logger, parse: CloudAPI(runtime: self, auth: auth), response: response)
        return try screened(try await Self.answering { try await entry.handler(request) })
    }

    func validate(_ validator: CloudValidator, _ values: [String: JSONValue], caller: CloudCaller, auth: Auth) async throws -> [String: JSONValue] {
        let roles = { [self] () async throws -> [String] in
            guard let userId = caller.userId else { return [] }
            return try await attached().roles.roleNames(forUser: userId)
        }
        do {
            return try await validator.check(values, caller: caller, roles: roles)
        } catch {
            throw Self.parseError(error, default: .validationError)
        }
    }

    // MARK: Before-triggers

    func beforeSave(_ className: String, objectId: String?, body: JSONValue, original: [String: JSONValue]?, auth: Auth) async throws -> JSONValue {
        let caller = try await caller(auth)
        let original = original.map { triggerView($0, className, auth: auth) }
        let object = CloudObject(className: className, objectId: objectId, stored: original ?? [:], changes: body.objectValue ?? [:])
        if let hook = webhooks.trigger(.beforeSave, className) {
            var fields: [String: JSONValue] = ["object": .object(object.json)]
            if let original { fields["original"] = .object(CloudObject(className: className, objectId: objectId, stored: original).json) }
            // `success` is the object to store: it replaces the write's data (Parse Server's rule); anything else changes nothing.
            guard case .object(var saved) = try await callTriggerHook(hook, .beforeSave, caller: caller, fields) else { return body }
            for key in ["className", "objectId", "createdAt", "updatedAt"] { saved[key] = nil }
            return .object(saved)
        }
        guard let entry = code.trigger(.beforeSave, className) else { return body }
        if let validator = entry.validator {
            let filled = try await validate(validator, object.json, caller: caller, auth: auth)
            // Only the validator's own fields take its defaults (the rest of `object.json` is the object as it is).
            for key in validator.fields.keys where object[key] == nil { if let value = filled[key] { object[key] = value } }
            if validator.skipWithMasterKey && caller.master { return .object(object.changes) }
        }
        let request = TriggerRequest(
            triggerName: .beforeSave, object: object, original: original.map { CloudObject(className: className, objectId: objectId, stored: $0) },
            caller: caller, log: logger, parse: CloudAPI(runtime: self, auth: auth))
        try await Self.answering { try await entry.handler(request) }
        return .object(object.changes)
    }

    func beforeDelete(_ className: String, objectId: String, original: [String: JSONValue], auth: Auth) async throws {
        let caller = try await caller(auth)
        let object = CloudObject(className: className, objectId: objectId, stored: triggerView(original, className, auth: auth))
        if let hook = webhooks.trigger(.beforeDelete, className) {
            _ = try await callTriggerHook(hook, .beforeDelete, caller: caller, ["object": .object(object.json)])
            return
        }
        guard let entry = code.trigger(.beforeDelete, className) else { return }
        if let validator = entry.validator {
            _ = try await validate(validator, object.json, caller: caller, auth: auth)
            if validator.skipWithMasterKey && caller.master { return }
        }
        let request = TriggerRequest(
            triggerName: .beforeDelete, object: object, original: nil, caller: caller, log: logger, parse: CloudAPI(runtime: self, auth: auth))
        try await Self.answering { try await entry.handler(request) }
    }

    /// An object as triggers see it (`ObjectService.triggerView`: without the caller's protected fields unless
    /// `protectedFieldsTriggerExempt`).
    func triggerView(
        _ object: [String: JSONValue], _ className: String, auth: Auth, unlessChangedFrom original: [String: JSONValue]? = nil
    ) -> [String: JSONValue] {
        guard let objects = try? attached().objects else { return object }
        return objects.triggerView(object, className: className, auth: auth, unlessChangedFrom: original)
    }

    // MARK: After-triggers

    /// Lanes after-triggers run in: one object's triggers always in the same lane, so in commit order.
    static let afterLanes = 16
    /// After-triggers waiting per lane before more are dropped (and counted as failed).
    static let laneBuffer = 2_000

    /// Runs `afterSave`/`afterDelete` for this process's committed writes until the task is cancelled: several at
    /// once, each object's in commit order. Failures are logged and counted; they never reach the client.
    public func runAfterTriggers() async {
        guard let events = afterEvents.withLock({ $0 }) else { return }
        let origin = (try? attached())?.objects.changes.origin
        let lanes = (0..<Self.afterLanes).map { _ in AsyncStream<ChangeEvent>.makeStream(bufferingPolicy: .bufferingOldest(Self.laneBuffer)) }
        await withDiscardingTaskGroup { group in
            for (stream, _) in lanes {
                group.addTask {
                    for await event in stream { await self.runAfter(event) }
                }
            }
            for await item in events {
                guard case .event(let event) = item, event.origin == origin, event.runsTriggers else { continue }
                let name: TriggerName = event.operation == .delete ? .afterDelete : .afterSave
                guard webhooks.trigger(name, event.className) != nil || code.trigger(name, event.className) != nil else { continue }
                var hasher = Hasher()
                hasher.combine(event.objectId)
                let lane = lanes[Int(UInt(bitPattern: hasher.finalize()) % UInt(Self.afterLanes))].1
                if case .dropped = lane.yield(event) {
                    afterFailures.add(1, ordering: .relaxed)
                    logger.error(
                        "after-trigger dropped: too many waiting", metadata: ["className": "\(event.className)", "objectId": "\(event.objectId)"])
                }
            }
            for (_, continuation) in lanes { continuation.finish() }
        }
    }

    private func runAfter(_ event: ChangeEvent) async {
        let name: TriggerName = event.operation == .delete ? .afterDelete : .afterSave
        let hook = webhooks.trigger(name, event.className)
        let entry = code.trigger(name, event.className)
        afterRuns.add(1, ordering: .relaxed)
        // The request that made the change, as far as the event carries it (after-triggers run after the commit, on the
        // change feed's task).
        let request = RequestInfo(ip: event.ip, headers: event.headers ?? [:], context: event.context ?? [:])
        do {
            try await RequestInfo.$current.withValue(request) { try await runAfter(name, hook: hook, entry: entry, event) }
        } catch {
            afterFailures.add(1, ordering: .relaxed)
            logger.warning(
                "\(name.rawValue) failed", metadata: ["className": "\(event.className)", "objectId": "\(event.objectId)", "error": "\(error)"])
        }
    }

    private func runAfter(_ name: TriggerName, hook: Webhooks.Hook?, entry: CloudCode.TriggerEntry?, _ event: ChangeEvent) async throws {
        var auth = Auth(isMaster: event.isMaster, userId: event.userId, installationId: event.installationId)
        if let userId = event.userId, !event.isMaster { auth.roles = (try? await attached().roles.roleNames(forUser: userId)) ?? [] }
        try await logged(name, event.className, auth: auth) { try await runAfter(name, hook: hook, entry: entry, event, auth: auth) }
    }

    private func runAfter(_ name: TriggerName, hook: Webhooks.Hook?, entry: CloudCode.TriggerEntry?, _ event: ChangeEvent, auth: Auth) async throws {
        let caller = try await caller(auth)
        // `protectedFieldsTriggerExempt`: the original as the caller reads it; the saved object too, but for what the write set.
        let stored =
            name == .afterDelete
            ? triggerView(event.original ?? [:], event.className, auth: auth)
            : triggerView(event.object ?? [:], event.className, auth: auth, unlessChangedFrom: event.original ?? [:])
        let object = CloudObject(className: event.className, objectId: event.objectId, stored: stored)
        let original =
            name == .afterDelete
            ? nil
            : event.original.map {
                CloudObject(className: event.className, objectId: event.objectId, stored: triggerView($0, event.className, auth: auth))
            }
        if let hook {
            var fields: [String: JSONValue] = ["object": .object(object.json)]
            if let original { fields["original"] = .object(original.json) }
            // The answer is ignored; a transport failure is retried (after-triggers only).
            _ = try await callTriggerHook(hook, name, caller: caller, fields)
            return
        }
        guard let entry else { return }
        if let validator = entry.validator {
            _ = try await validate(validator, object.json, caller: caller, auth: auth)
            if validator.skipWithMasterKey && caller.master { return }
        }
        try await entry.handler(
            TriggerRequest(
                triggerName: name, object: object, original: original, caller: caller, log: logger, parse: CloudAPI(runtime: self, auth: auth)))
    }
}
