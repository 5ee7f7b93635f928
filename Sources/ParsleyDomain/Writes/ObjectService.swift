public import ParsleyCore
public import ParsleyStorage

/// The write pipeline: every object write, system classes included, goes through `create`, `update` or
/// `delete`: authorize -> load the original (outside the write transaction) -> before-hooks -> validate against
/// the schema -> write in one transaction (so `Increment` and array operations are atomic) -> commit -> a
/// `ChangeEvent` to every after-commit consumer (`changes`). Rolled-back writes emit nothing; inside a
/// transactional batch the events follow the batch's commit, in order.
public struct ObjectService: Sendable {
    public let store: SQLStore
    public let schemas: SchemaService
    public let options: ParseServerOptions
    /// Committed writes, from this process and the others on the database.
    public let changes: ChangeFeed
    /// Before-hooks (cloud code's `beforeSave`, `beforeDelete`, Swift or webhooks).
    public let hooks: WriteHooks
    /// The configured file store, for the check that the files a write references exist.
    public let fileStore: any FileStore
    /// The files that check found (shared with `ParseServices.files`, whose deletes forget them).
    public let knownFiles = KnownFiles()

    /// `publishing` names the classes whose writes become change events even when `options.changeEvents` is off.
    public init(
        store: SQLStore, schemas: SchemaService, options: ParseServerOptions, fileStore: any FileStore, hooks: WriteHooks = WriteHooks(),
        publishing: @escaping @Sendable (String) -> Bool = { _ in false }
    ) {
        self.store = store
        self.schemas = schemas
        self.options = options
        self.fileStore = fileStore
        self.hooks = hooks
        self.changes = ChangeFeed(channel: store.database.changeChannel, enabled: options.changeEvents, classes: publishing)
    }

    /// The stored object (without internal fields) outside any write transaction, when something will need it.
    /// With `principals`, only an object they may write is returned.
    func original(_ className: String, _ objectId: String, principals: [String]? = nil) async throws -> [String: JSONValue]? {
        guard changes.publishes(className) || hooks.beforeSave(className) != nil || hooks.beforeDelete(className) != nil,
            let schema = schemas.schema(className)
        else { return nil }
        return try await store.database.read { [store] db in
            try await store.writer(db).fetch(className: className, schema: schema, objectId: objectId, writePrincipals: principals)
        }
    }

    func event(
        _ className: String, _ operation: ChangeEvent.Operation, _ objectId: String, original: [String: JSONValue]?,
        object: [String: JSONValue]?, auth: Auth, request: RequestInfo, time: ParseDate
    ) -> ChangeEvent {
        // Internal columns (`_hashed_password`, `_failed_login_count`, tokens) never leave the write.
        func visible(_ o: [String: JSONValue]?) -> [String: JSONValue]? { o?.filter { !$0.key.hasPrefix("_") } }
        var event = ChangeEvent(
            className: className, operation: operation, objectId: objectId, original: visible(original), object: visible(object), userId: auth.userId,
            isMaster: auth.isMaster && !auth.isMaintenance, installationId: auth.installationId, requestId: request.requestId, time: time)
        event.origin = changes.origin
        event.runsTriggers = auth.runsTriggers
        if hooks.carriesRequest() {
            event.context = request.context
            event.ip = request.ip
            event.headers = request.headers
        }
        return event
    }

    /// The body after the class's `beforeSave` (if any), and the fields it set or changed. The body as it came
    /// (from a client, cloud code or a server's own service) and the hook's answer both get a client body's checks
    /// (the keyword denylist, no NUL: `KeywordDenylist.screen`) before anything is stored.
    func beforeSave(
        _ className: String, _ objectId: String?, _ body: JSONValue, original: [String: JSONValue]?, auth: Auth
    ) async throws -> (JSONValue, [String]) {
        let denylist = options.security.keywordDenylist
        try denylist.screen(body)
        guard auth.runsTriggers, let hook = hooks.beforeSave(className) else { return (body, []) }
        let changed = try await hook(className, objectId, body, original, auth)
        try denylist.screen(changed)
        return (changed, Self.changedByHook(body, changed))
    }

    /// Fields a before-hook set or changed (Parse echoes them to the client).
    static func changedByHook(_ before: JSONValue, _ after: JSONValue) -> [String] {
        let (old, new) = (before.objectValue ?? [:], after.objectValue ?? [:])
        return new.compactMap { key, value in old[key] == value || key.hasPrefix("_") ? nil : key }
    }

    /// The echo of fields a before-hook changed: their stored value, or an operation's result when one is echoed.
    static func echoHookChanges(_ keys: [String], body: JSONValue, into echoed: inout [String: JSONValue]) {
        for key in keys where echoed[key] == nil {
            guard let value = body.objectValue?[key] else { continue }
            if value.objectValue?["__op"] != nil { continue }
            echoed[key] = value
        }
    }

    /// A `_User` body with `email` and `username` lower-cased when the options say so (`convertEmailToLowercase`,
    /// `convertUsernameToLowercase`), whoever writes it.
    func lowercasingUser(_ body: JSONValue) -> JSONValue {
        guard case .object(var fields) = body else { return body }
        options.accounts.lowercase(&fields)
        return .object(fields)
    }

    /// Classes whose special rules (passwords, sessions) come with the security issue; until then only
    /// the master key may write them through `/classes`.
    static let guardedClasses: Set<String> = ["_User", "_Session", "_Role", "_Installation"]

    /// What a class's own rules (users, sessions) add to a generic write.
    public struct Internal: Sendable {
        /// Use this id instead of generating one.
        public var objectId: String?
        /// Internal columns written alongside the body (`_hashed_password`).
        public var values: [String: JSONValue] = [:]
        /// Internal number columns incremented atomically (`_failed_login_count`); their new values are returned.
        public var increments: [String: Int64] = [:]
        /// Update only while this field still holds this value (nil: no value; a single-use token, a job schedule's last run),
        /// checked under the row's lock;
        /// otherwise the update answers 101 and changes nothing.
        public var condition: (field: String, value: JSONValue?)?
        /// The ACL when the body has none.
        public var defaultACL: ACL?
        /// The class's rules already ran, so its guard does not apply.
        public var trusted = false
        public init(
            objectId: String? = nil, values: [String: JSONValue] = [:], increments: [String: Int64] = [:], defaultACL: ACL? = nil,
            condition: (field: String, value: JSONValue?)? = nil, trusted: Bool = false
        ) {
            self.condition = condition
            self.objectId = objectId
            self.values = values
            self.increments = increments
            self.defaultACL = defaultACL
            self.trusted = trusted
        }
    }

    func checkWritable(_ className: String, _ op: ClassLevelPermissions.Operation, auth: Auth, trusted: Bool = false) throws(ParseError) {
        if !auth.isMaster { try Permissions.requireMasterOnlyAccess(op, className) }
        guard Naming.isValidClassName(className) else { throw ParseError.invalidClassName(className) }
        if Self.guardedClasses.contains(className), !auth.isMaster, !trusted {
            throw ParseError.sanitized(.operationForbidden, "Clients aren't allowed to perform the write operation on the \(className) collection.")
        }
    }

    /// Field types a patch needs in the schema; dotted paths need their top field to be an Object.
    static func requiredTypes(_ patch: ObjectPatch) throws(ParseError) -> [String: FieldType] {
        var types: [String: FieldType] = [:]
        for (path, op) in patch.operations {
            let type: FieldType?
            if path.subpath.isEmpty { type = try op.impliedType() } else { type = .object }
            guard let type else { continue }
            if let previous = types[path.field], previous != type {
                throw SchemaService.mismatch(path.field, expected: previous, got: type)
            }
            types[path.field] = type
        }
        return types
    }

    /// `POST /classes/:className`: returns `objectId`, `createdAt` and the results of any operations.
    public func create(_ className: String, _ object: CreateObject, auth: Auth, rules: Internal = Internal()) async throws -> [String: JSONValue] {
        try checkWritable(className, .create, auth: auth, trusted: rules.trusted)
        // The class's permissions as the database holds them, even if another node created or changed it just now.
        _ = try await schemas.current(className)
        try permissions.authorizeCreate(className, body: object.json, auth: auth)
        let (hooked, hookChanged) = try await beforeSave(className, nil, object.json, original: nil, auth: auth)
        let body = className == "_User" ? lowercasingUser(hooked) : hooked
        try await FileService(options: options, store: fileStore, known: knownFiles).checkReferences(in: body, auth: auth)  // Files/FileService.swift
        let (objectId, fields) = try newObjectId(body, given: rules.objectId)
        let patch = try WriteParser(isCreate: true).parse(fields)
        var required = try Self.requiredTypes(patch)
        for (name, value) in rules.values { if let t = try ParseValue.inferType(value) { required[name] = t } }
        let schema = try await schemas.ensure(
            className, fields: required, auth: auth, allowClassCreation: options.allowClientClassCreation || rules.trusted)
        var values: [String: JSONValue] = rules.values
        var echoed: [String: JSONValue] = [:]
        var relations: [(String, [Pointer])] = []
        for (path, op) in patch.operations {
            if case .relation(let add, _) = op {
                relations.append((path.field, add))
                continue
            }
            guard let value = op.valueOnEmpty else { continue }
            if path.subpath.isEmpty {
                values[path.field] = value
            } else {
                values[path.field] = Self.setting(values[path.field], path.subpath, to: value)
            }
            if op.echoesResult { echoed[path.field] = values[path.field] }
        }
        try schema.fillDefaults(patch, values: &values, echoed: &echoed)  // required / defaultValue (§10.5)
        let now = ParseDate.now
        let acl = try patch.acl ?? rules.defaultACL ?? Self.classDefaultACL(schema, auth: auth)
        if relations.isEmpty, !changes.publishes(className) {
            // The INSERT is the whole write: one statement, its own transaction.
            let insert = SQLWriter.insertStatement(
                store.dialect, className: className, schema: schema, objectId: objectId, createdAt: now, values: values, acl: acl)
            try await Self.mappingDuplicateId { try await store.database.writeStatement(insert) }
        } else {
            try await insertInTransaction(
                className, schema: schema, objectId: objectId, now: now, values: values, acl: acl, relations: relations, auth: auth)
        }
        Self.echoHookChanges(hookChanged, body: body, into: &echoed)
        echoed["objectId"] = .string(objectId)
        echoed["createdAt"] = .string(now.iso)
        return withoutProtectedFields(echoed, className: className, objectId: objectId, auth: auth)
    }

    /// A create with relations to add or a change event to publish: the INSERT and the rest in one transaction.
    private func insertInTransaction(
        _ className: String, schema: ClassSchema, objectId: String, now: ParseDate, values: [String: JSONValue], acl: ACL?,
        relations: [(String, [Pointer])], auth: Auth
    ) async throws {
        let request = RequestInfo.current  // read before the transaction, whose body may run on another task
        try await store.transaction { [store, values, relations, changes] transaction in
            let writer = store.writer(transaction)
            try await Self.mappingDuplicateId {
                try await writer.insert(className: className, schema: schema, objectId: objectId, createdAt: now, values: values, acl: acl)
            }
            for (field, pointers) in relations {
                try await writer.addRelation(owner: className, field: field, owningId: objectId, related: pointers.map(\.objectId))
            }
            if changes.publishes(className) {
                let saved = try await writer.fetch(className: className, schema: schema, objectId: objectId, writePrincipals: nil)
                try await changes.publish(
                    event(className, .create, objectId, original: nil, object: saved, auth: auth, request: request, time: now), in: transaction)
            }
        }
    }

    /// `protectedFieldsSaveResponseExempt: false` (Parse Server 9): a save's answer leaves out the fields the caller may
    /// not read, as a find would (a user saving their own `_User` as `protectedFieldsOwnerExempt` says).
    func withoutProtectedFields(_ response: [String: JSONValue], className: String, objectId: String, auth: Auth) -> [String: JSONValue] {
        guard !options.protectedFieldsSaveResponseExempt, !auth.isMaster else { return response }
        if className == "_User", objectId == auth.userId, options.protectedFieldsOwnerExempt { return response }
        var r = response
        for field in permissions.classLevelPermissions(className).protectedFields(userId: auth.userId, roles: auth.roles) {
            r[field] = nil
        }
        return r
    }

    /// What cloud-code triggers see of a stored object (`protectedFieldsTriggerExempt`, Parse Server 9): unless the
    /// option is on or the caller has the master key, the fields the caller may not read are left out, as Parse
    /// Server fetches a trigger's original with the caller's rights. `unlessChangedFrom`: a field whose value differs
    /// from that original (the write set it) stays.
    func triggerView(
        _ object: [String: JSONValue], className: String, auth: Auth, unlessChangedFrom original: [String: JSONValue]? = nil
    ) -> [String: JSONValue] {
        guard !options.protectedFieldsTriggerExempt, !auth.isMaster else { return object }
        if className == "_User", object["objectId"]?.stringValue == auth.userId, auth.userId != nil, options.protectedFieldsOwnerExempt {
            return object
        }
        var o = object
        for field in permissions.classLevelPermissions(className).protectedFields(userId: auth.userId, roles: auth.roles) {
            if let original, o[field] != original[field] { continue }
            o[field] = nil
        }
        return o
    }

    /// The `ACL` of the class's class-level permissions (Parse Server 8+), for an object created without one;
    /// `currentUser` is the creating user (dropped for the master key or nobody).
    static func classDefaultACL(_ schema: ClassSchema, auth: Auth) throws(ParseError) -> ACL? {
        let clp = ClassLevelPermissions(stored: schema.classLevelPermissions)
        guard let json = clp.creationACL(userId: auth.isMaster ? nil : auth.userId) else { return nil }
        return try ACL(json: json)
    }

    /// `PUT /classes/:className/:objectId`: returns `updatedAt` and the new values of Increment/Add/AddUnique/Remove fields.
    public func update(_ className: String, objectId: String, _ object: UpdateObject, auth: Auth, rules: Internal = Internal()) async throws
        -> [String: JSONValue]
    {
        try checkWritable(className, .update, auth: auth, trusted: rules.trusted)
        // The class's permissions as the database holds them, even if another node created or changed it just now.
        _ = try await schemas.current(className)
        // Pointer permissions: what the stored object must match. With hooks or change events they are checked
        // first (a beforeSave never sees an object the caller may not write), and so with File values (a caller
        // kept out learns nothing of the files). The body's File names are collected once, here, when no hook can
        // change the body.
        let constraints = try permissions.updateConstraints(className, body: object.json, auth: auth)
        let hasHooks = hooks.beforeSave(className) != nil || changes.publishes(className)
        let sentFiles = hasHooks || auth.isMaster ? nil : FileService.fileNames(in: object.json)
        let checksFirst = !constraints.isEmpty && (hasHooks || sentFiles?.isEmpty == false)
        if checksFirst { try await permissions.requireMatch(className, objectId: objectId, constraints) }
        guard let stored = schemas.schema(className) else { throw ParseError.objectNotFound() }
        let original = try await original(className, objectId)
        let (hooked, hookChanged) = try await beforeSave(className, objectId, object.json, original: original, auth: auth)
        let body = className == "_User" ? lowercasingUser(hooked) : hooked
        try await FileService(options: options, store: fileStore, known: knownFiles).checkReferences(in: body, auth: auth, names: sentFiles)
        let patch = try WriteParser(isCreate: false).parse(body)
        var required = try Self.requiredTypes(patch)
        for (name, value) in rules.values { if let t = try ParseValue.inferType(value) { required[name] = t } }
        for name in rules.increments.keys { required[name] = .number }
        let needsRead = rules.condition != nil || Self.readsStored(patch)
        // The write is one UPDATE statement when it needs no read of the object, adds no relation and publishes no
        // event. Then, as Parse Server does, that UPDATE carries the pointer permissions, unless the body adds fields
        // to the class (the schema must not change for a caller kept out). Otherwise they are checked now, before
        // the schema changes. This is the one place that decides.
        let oneStatement = !needsRead && !Self.changesRelations(patch) && !changes.publishes(className)
        var matching: QueryNode? = nil
        if !constraints.isEmpty, !checksFirst {
            if oneStatement, !required.keys.contains(where: { stored.fields[$0] == nil }) {
                matching = .and(constraints)
            } else {
                try await permissions.requireMatch(className, objectId: objectId, constraints)
            }
        }
        let schema = try await schemas.ensure(
            className, fields: required, auth: auth, allowClassCreation: options.allowClientClassCreation)
        try schema.checkRequired(updating: patch)  // required fields (§10.5)
        let now = ParseDate.now
        let principals = auth.principals
        let result: [String: JSONValue]?
        let plan = needsRead ? nil : try Self.updatePlan(patch, schema: schema, current: [:], rules: rules)
        if oneStatement, let plan {
            // The UPDATE is the whole write: one statement, its own transaction.
            let update = try SQLWriter.updateStatement(
                store.dialect, className: className, schema: schema, objectId: objectId, updatedAt: now, assignments: plan.assignments,
                writePrincipals: principals, matching: matching, schemas: schemas.all())
            result = update.result(try await store.database.writeStatement(update.statement)).map { plan.echoed.merging($0) { $1 } }
        } else {
            result = try await updateInTransaction(
                className, objectId: objectId, patch: patch, schema: schema, rules: rules, plan: plan, original: original, now: now,
                auth: auth)
        }
        guard var response = result else { throw ParseError.objectNotFound() }
        Self.echoHookChanges(hookChanged, body: body, into: &response)
        response["updatedAt"] = .string(now.iso)
        return withoutProtectedFields(response, className: className, objectId: objectId, auth: auth)
    }

    /// `DELETE /classes/:className/:objectId`.
    public func delete(_ className: String, objectId: String, auth: Auth, trusted: Bool = false) async throws {
        try checkWritable(className, .delete, auth: auth, trusted: trusted)
        // The class's permissions as the database holds them, even if another node created or changed it just now.
        _ = try await schemas.current(className)
        // Pointer permissions: checked first when a beforeDelete runs (it never sees an object the caller may not
        // delete); otherwise the DELETE itself carries them, as Parse Server's delete query does.
        let constraint = try permissions.deleteConstraint(className, auth: auth)
        guard let schema = schemas.schema(className) else { throw ParseError.objectNotFound() }
        let beforeDelete = auth.runsTriggers ? hooks.beforeDelete(className) : nil
        if beforeDelete != nil, let constraint { try await permissions.requireMatch(className, objectId: objectId, [constraint]) }
        let matching = beforeDelete == nil ? constraint : nil
        let classes = matching == nil ? [:] : schemas.all()
        let original = try await original(className, objectId, principals: beforeDelete == nil ? nil : auth.principals)
        if let hook = beforeDelete {
            // Parse loads the object with the caller's rights first: one they cannot delete is not found.
            guard let original else { throw ParseError.objectNotFound() }
            try await hook(className, objectId, original, auth)
        }
        let principals = auth.principals
        let now = ParseDate.now
        let relationFields = schema.fields.compactMap { name, type -> String? in
            if case .relation = type { return name }
            return nil
        }
        let request = RequestInfo.current  // read before the transaction, whose body may run on another task
        let deleted = try await store.transaction { [store, changes] transaction in
            let writer = store.writer(transaction)
            guard
                try await writer.delete(
                    className: className, schema: schema, objectId: objectId, writePrincipals: principals, matching: matching, schemas: classes)
            else { return false }
            if changes.publishes(className) {
                try await changes.publish(
                    event(className, .delete, objectId, original: original, object: nil, auth: auth, request: request, time: now), in: transaction)
            }
            for field in relationFields {
                try await writer.deleteRelations(owner: className, field: field, owningId: objectId)
            }
            return true
        }
        if !deleted { throw ParseError.objectNotFound() }
    }

    /// `DELETE /purge/:className` (master key): deletes every object of the class outside the pipeline, without
    /// before-hooks or change events, as Parse Server's purge does. A class without a schema is left alone.
    public func purge(_ className: String) async throws {
        guard Naming.isValidClassName(className) else { throw ParseError.invalidClassName(className) }
        guard schemas.schema(className) != nil else { return }
        try await store.purge(className: className)
    }

    // MARK: Nested values

    static func value(at path: [String], in value: JSONValue?) -> JSONValue? {
        var current = value
        for key in path {
            guard case .object(let o)? = current else { return nil }
            current = o[key]
        }
        return current
    }

    static func setting(_ base: JSONValue?, _ path: [String], to newValue: JSONValue?) -> JSONValue {
        var object = base?.objectValue ?? [:]
        guard let key = path.first else { return newValue ?? .null }
        if path.count == 1 {
            object[key] = newValue
        } else {
            object[key] = setting(object[key], Array(path.dropFirst()), to: newValue)
        }
        return .object(object)
    }

    static func add(_ current: JSONValue?, _ amount: JSONValue) throws(ParseError) -> JSONValue {
        switch (current ?? .int(0), amount) {
        case (.int(let a), .int(let b)):
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? .double(Double(a) + Double(b)) : .int(sum)
        case (.null, _): return amount
        case (let a, let b):
            guard let x = a.numberValue, let y = b.numberValue else { throw ParseError(.invalidJSON, "Cannot increment a non-number") }
            return .double(x + y)
        }
    }
}

extension ParseDate {
    /// The current time, to the millisecond.
    public static var now: ParseDate {
        let d = ContinuousClockEpoch.millisecondsSince1970()
        return ParseDate(milliseconds: d)
    }
}
