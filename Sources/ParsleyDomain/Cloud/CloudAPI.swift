public import ParsleyCore

/// Parse from inside cloud code, through the same services as REST (same ACLs, class-level permissions and
/// triggers), not over HTTP: with the caller's rights, or the master's (`asMaster`).
public struct CloudAPI: Sendable {
    let runtime: CloudRuntime
    /// Whose rights the calls use.
    public let auth: Auth
    /// The request context the calls' triggers see (`RequestInfo`); nil: the current one (the calling trigger's or
    /// function's request).
    let request: RequestInfo?

    init(runtime: CloudRuntime, auth: Auth, request: RequestInfo? = nil) {
        self.runtime = runtime
        self.auth = auth
        self.request = request
    }

    /// The same calls with the master key (and, as the master key's own calls, no client address, headers or
    /// context for their triggers).
    public var asMaster: CloudAPI {
        var master = Auth.master
        master.runsTriggers = auth.runsTriggers
        return CloudAPI(runtime: runtime, auth: master, request: RequestInfo())
    }

    /// Runs a call in this API's request context.
    private func scoped<T: Sendable>(_ call: () async throws -> T) async throws -> T {
        guard let request else { return try await call() }
        return try await RequestInfo.$current.withValue(request) { try await call() }
    }

    /// The same calls without the classes' triggers: no `beforeSave`/`afterSave`/`beforeDelete`/`afterDelete`,
    /// `beforeFind`/`afterFind` (a trigger saving its own class without running itself again). ACLs and class-level
    /// permissions still apply.
    public var withoutTriggers: CloudAPI {
        var quiet = auth
        quiet.runsTriggers = false
        return CloudAPI(runtime: runtime, auth: quiet, request: request)
    }

    /// One object by id (`include`/`keys` as in REST); 101 when it does not exist or the caller may not read it.
    public func get(_ className: String, _ objectId: String, _ params: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
        try await scoped {
            try await runtime.attached().queries.get(
                className, objectId: objectId, FindOptions(params: params, isGet: true), auth: auth, triggers: auth.runsTriggers)
        }
    }

    /// A query with REST's parameters: `where` (the full query language), `order`, `limit`, `skip`, `keys`, `include`.
    public func find(_ className: String, _ params: [String: JSONValue] = [:]) async throws -> [[String: JSONValue]] {
        try await scoped {
            try await runtime.attached().queries.find(className, FindOptions(params: params), auth: auth, triggers: auth.runsTriggers).results
        }
    }

    /// How many objects match `where`.
    public func count(_ className: String, where whereValue: JSONValue? = nil) async throws -> Int {
        try await scoped { try await runtime.attached().queries.count(className, where: whereValue, auth: auth, triggers: auth.runsTriggers) }
    }

    /// Creates an object (its class's `beforeSave` and `afterSave` run); returns `objectId` and `createdAt`.
    public func create(_ className: String, _ fields: [String: JSONValue]) async throws -> [String: JSONValue] {
        try await scoped { try await runtime.attached().objects.create(className, CreateObject(fields), auth: auth) }
    }

    /// Updates an object with values or operations (`{"__op":"Increment","amount":1}`).
    public func update(_ className: String, _ objectId: String, _ fields: [String: JSONValue]) async throws -> [String: JSONValue] {
        try await scoped { try await runtime.attached().objects.update(className, objectId: objectId, UpdateObject(fields), auth: auth) }
    }

    /// Deletes an object (its class's `beforeDelete` and `afterDelete` run).
    public func delete(_ className: String, _ objectId: String) async throws {
        try await scoped { try await runtime.attached().objects.delete(className, objectId: objectId, auth: auth) }
    }

    /// Queues a push (Parse's `Parse.Push.send`, always with the master's rights): `where` (a query on `_Installation`)
    /// or `channels`, and `data`, `push_time`, `expiration_time`/`expiration_interval` as `POST /push` takes them.
    /// Returns the `_PushStatus` objectId.
    @discardableResult
    public func push(_ body: [String: JSONValue]) async throws -> String {
        // REST's pushes are checked at the edge; this one is checked here, as a client's body would be.
        _ = try runtime.screened(.object(body))
        let push = try runtime.attached().push
        try push.requireConfigured()
        return try await push.send(try SendPush(decoding: .object(body)), source: "cloud")
    }

    /// Queues a push to the installations matching `where` (pointers to `_User`, `$inQuery` and the rest of the
    /// query language work as in REST).
    @discardableResult
    public func push(where whereValue: [String: JSONValue], data: [String: JSONValue]) async throws -> String {
        try await push(["where": .object(whereValue), "data": .object(data)])
    }

    /// Sends a mail through the server's email adapter (Parse's `Parse.Cloud.sendEmail`): `text`, and `html` beside it
    /// when given. Waits for the adapter (SMTP's answer), so a failure reaches the caller. - Throws: 142 for a
    /// recipient or subject with a line break or without an `@`, or the adapter's error.
    public func sendEmail(to: String, subject: String, text: String, html: String? = nil) async throws {
        guard to.contains("@"), !(to + subject).contains(where: \.isNewline) else {
            throw ParseError(.validationError, "sendEmail needs one recipient address and a subject without line breaks")
        }
        try await runtime.attached().mail.send(EmailMessage(to: to, subject: subject, text: text, html: html))
    }

    /// Calls another cloud function with the same rights.
    public func run(_ function: String, _ params: [String: JSONValue] = [:]) async throws -> JSONValue {
        try await scoped { try await runtime.run(CallFunction(functionName: function, params: params), auth: auth) }
    }
}
