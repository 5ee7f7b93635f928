public import ParsleyCore
public import ParsleyStorage

/// Enforces class-level permissions (§9.2) and protected fields (§9.3) for every read and write. ACLs are
/// enforced separately, inside the SQL of each statement; a request must pass both. The master key bypasses
/// all of it. Pointer permissions become `QueryNode` predicates, so SQL does the filtering.
public struct Permissions: Sendable {
    public let store: SQLStore
    public let schemas: SchemaService

    public init(store: SQLStore, schemas: SchemaService) {
        self.store = store
        self.schemas = schemas
    }

    /// The effective CLP of a class (open when none is stored), with the server-level protected fields (Parse Server's
    /// `protectedFields` option) added to the class's own, entity by entity, as Parse Server's schema controller does.
    public func classLevelPermissions(_ className: String) -> ClassLevelPermissions {
        var clp = ClassLevelPermissions(stored: schemas.schema(className)?.classLevelPermissions)
        if let extra = schemas.serverProtectedFields[className] { clp.merge(protectedFields: extra) }
        return clp
    }

    /// Checks `op` on `className`; nil when allowed outright, else the pointer-permission predicate the
    /// objects must also satisfy. - Throws: 119 / 101 when the CLP forbids the operation.
    public func authorize(
        _ op: ClassLevelPermissions.Operation, _ className: String, auth: Auth, isUpdate: Bool = false, clp: ClassLevelPermissions? = nil
    ) throws(ParseError) -> QueryNode? {
        if auth.isMaster { return nil }
        try Self.requireMasterOnlyAccess(op, className)
        let clp = clp ?? classLevelPermissions(className)
        switch clp.decide(op, className: className, userId: auth.userId, roles: auth.roles, isUpdate: isUpdate) {
        case .allowed: return nil
        case .denied(let error): throw error
        case .pointerRestricted(let fields): return pointerPredicate(className, fields: fields, userId: auth.userId)
        }
    }

    /// Parse Server's internal classes: no client may read or write them, whatever their CLP (the master key may).
    public static let masterOnlyClasses: Set<String> = [
        "_JobStatus", "_PushStatus", "_Hooks", "_GlobalConfig", "_JobSchedule", "_Audience", "_Idempotency", "_GraphQLConfig",
    ]

    /// 119 `Clients aren't allowed to perform the <op> operation on the <class> collection.` for the internal
    /// classes, and for finding (also in sub-queries and counts) or deleting installations.
    static func requireMasterOnlyAccess(_ op: ClassLevelPermissions.Operation, _ className: String) throws(ParseError) {
        let name = op == .count ? "find" : op == .addField ? "update" : op.rawValue
        if masterOnlyClasses.contains(className) {
            throw ParseError.sanitized(.operationForbidden, "Clients aren't allowed to perform the \(name) operation on the \(className) collection.")
        }
        if className == "_Installation", op == .delete || op == .find || op == .count {
            throw ParseError.sanitized(.operationForbidden, "Clients aren't allowed to perform the \(name) operation on the installation collection.")
        }
    }

    /// Fields of system classes that only the object's own user (or the master key) ever sees, whatever the CLP:
    /// a user's `authData` (an anonymous user's id is its login). They are also refused in queries, so they
    /// cannot be probed.
    static func alwaysProtected(_ className: String) -> Set<String> {
        className == "_User" ? ["authData"] : []
    }

    /// Fields that are themselves a way in (a session's token, a user's `authData`: an anonymous id, provider tokens):
    /// the read-only master key never reads them nor queries on them, so read access never becomes a log-in.
    static func credentials(_ className: String) -> Set<String> {
        switch className {
        case "_User": return ["authData"]
        case "_Session": return ["sessionToken"]
        default: return []
        }
    }

    /// What the read-only master key may read of `className`: everything but its credentials (nil: not read-only).
    static func readOnlyMasterAccess(_ className: String, predicate: QueryNode, order: [SortKey], auth: Auth) throws(ParseError) -> ReadAccess? {
        guard auth.isMaster, auth.isReadOnly else { return nil }
        var access = ReadAccess(predicate: predicate, className: className, userId: nil, isMaster: false)
        access.hidden = credentials(className)
        try denyProtected(access.hidden, in: predicate.referencedFields.union(order.map(\.path.field)), className: className)
        return access
    }

    /// Clients read only their own sessions (Parse Server adds `user = caller` to every `_Session` read); nil
    /// for other classes. Anonymous callers read none.
    static func ownRowsOnly(_ className: String, auth: Auth) -> QueryNode? {
        guard className == "_Session", !auth.isMaster else { return nil }
        guard let userId = auth.userId else { return .or([]) }
        return .field(FieldPath(field: "user"), .equals(Pointer(className: "_User", objectId: userId).json))
    }

    /// At least one of `fields` points to the user: `{f: userPointer}` for pointers, `{f: {$all: [userPointer]}}`
    /// for arrays. Anonymous callers match nothing.
    func pointerPredicate(_ className: String, fields: [String], userId: String?) -> QueryNode {
        guard let userId else { return .or([]) }
        let user: JSONValue = Pointer(className: "_User", objectId: userId).json
        let schema = schemas.schema(className)
        var nodes: [QueryNode] = []
        for field in fields {
            switch schema?.fields[field] {
            case .pointer?, .object?: nodes.append(.field(FieldPath(field: field), .equals(user)))
            case .array?: nodes.append(.field(FieldPath(field: field), .containsAll([user])))
            default: continue
            }
        }
        return nodes.count == 1 ? nodes[0] : .or(nodes)
    }

    // MARK: Reads

    /// What one read may see: the predicate with pointer permissions and secured sub-queries, the columns to
    /// fetch, and the protected fields to strip from each object.
    public struct ReadAccess: Sendable {
        public var predicate: QueryNode
        var className: String
        var userId: String?
        var isMaster: Bool
        var hidden: Set<String> = []
        var userFieldRules: [(field: String, hidden: Set<String>)] = []
        /// Fields fetched only to evaluate `userField:` rules, removed before answering.
        var temporaryKeys: Set<String> = []
        /// `protectedFieldsOwnerExempt`: a user reading their own `_User` is exempt from protected fields.
        var ownerExempt = true

        /// The columns to select: `keys` plus the pointer fields `userField:` rules need.
        public mutating func columns(_ keys: Set<String>?) -> Set<String>? {
            guard var keys, !isMaster, !hidden.isEmpty else { return keys }
            for rule in userFieldRules where !keys.contains(rule.field) {
                keys.insert(rule.field)
                temporaryKeys.insert(rule.field)
            }
            return keys
        }

        /// Removes protected fields (Parse Server's `filterSensitiveData`): the caller's hidden set, narrowed by
        /// each `userField:` rule whose field points to the caller. A user reading their own `_User` is exempt.
        /// A user's own `authData.mfa` reads as its status only (`hidingSecondFactor`).
        public func strip(_ objects: [[String: JSONValue]]) -> [[String: JSONValue]] {
            guard !isMaster, !hidden.isEmpty || !temporaryKeys.isEmpty || className == "_User" else { return objects }
            return objects.map { object in
                var o = object
                if className == "_User", let userId, object["objectId"]?.stringValue == userId {
                    o = Permissions.hidingSecondFactor(o)
                    if ownerExempt { return o }
                }
                var h = hidden
                if let userId {
                    for rule in userFieldRules where Self.points(object[rule.field], to: userId) { h.formIntersection(rule.hidden) }
                }
                for key in h.union(temporaryKeys) { o[key] = nil }
                return o
            }
        }

        static func points(_ value: JSONValue?, to userId: String) -> Bool {
            func isUser(_ v: JSONValue) -> Bool {
                v["objectId"]?.stringValue == userId && (v["className"]?.stringValue ?? "_User") == "_User"
            }
            switch value {
            case .array(let items)?: return items.contains(where: isUser)
            case let v?: return isUser(v)
            case nil: return false
            }
        }
    }

    /// Authorizes a find, get or count on `schema` and secures its sub-queries.
    /// - Parameters:
    ///   - whereValue: the raw `where` (a query of exactly `{"objectId": "<id>"}` is a `get`).
    ///   - fetches: whether objects are read (limit > 0); `counts`: whether a count is asked.
    /// - Throws: 119/101 from the CLP; 119 when the where or the order names a protected field.
    public func authorizeRead(
        _ schema: ClassSchema, predicate: QueryNode, whereValue: JSONValue?, order: [SortKey], fetches: Bool, counts: Bool, auth: Auth
    ) throws(ParseError) -> ReadAccess {
        if let readOnly = try Self.readOnlyMasterAccess(schema.className, predicate: predicate, order: order, auth: auth) { return readOnly }
        var access = ReadAccess(predicate: predicate, className: schema.className, userId: auth.userId, isMaster: auth.isMaster)
        access.ownerExempt = schemas.protectedFieldsOwnerExempt
        if auth.isMaster { return access }
        let isGet = whereValue?.objectValue.map { $0.count == 1 && $0["objectId"]?.stringValue != nil } ?? false
        try Self.requireMasterOnlyAccess(isGet && fetches ? .get : .find, schema.className)
        if schema.className == "_Session", auth.userId == nil { throw ParseError(.invalidSessionToken, "Invalid session token") }
        let clp = classLevelPermissions(schema.className)
        var constraints: [QueryNode] = Self.ownRowsOnly(schema.className, auth: auth).map { [$0] } ?? []
        if fetches {
            if let c = try authorize(isGet ? .get : .find, schema.className, auth: auth, clp: clp) { constraints.append(c) }
        }
        if counts, let c = try authorize(.count, schema.className, auth: auth, clp: clp) { constraints.append(c) }
        // A user querying their own `_User` record by id sees it whole (Parse Server's `addProtectedFields`), unless
        // `protectedFieldsOwnerExempt` is false.
        let ownById = schema.className == "_User" && auth.userId != nil && whereValue?["objectId"]?.stringValue == auth.userId
        if !(ownById && schemas.protectedFieldsOwnerExempt) {
            access.hidden = clp.protectedFields(userId: auth.userId, roles: auth.roles).union(Self.alwaysProtected(schema.className))
            access.userFieldRules = clp.userFieldRules
        }
        if !access.hidden.isEmpty {
            try Self.denyProtected(access.hidden, in: predicate.referencedFields.union(order.map(\.path.field)), className: schema.className)
        }
        access.predicate = try secureSubqueries(predicate, auth: auth)
        if !constraints.isEmpty { access.predicate = .and([access.predicate] + constraints) }
        return access
    }

    /// Authorizes fetching included objects of `schema` (checked as `get`).
    public func authorizeInclude(_ schema: ClassSchema, predicate: QueryNode, auth: Auth) throws(ParseError) -> ReadAccess {
        if let readOnly = try Self.readOnlyMasterAccess(schema.className, predicate: predicate, order: [], auth: auth) { return readOnly }
        var access = ReadAccess(predicate: predicate, className: schema.className, userId: auth.userId, isMaster: auth.isMaster)
        access.ownerExempt = schemas.protectedFieldsOwnerExempt
        if auth.isMaster { return access }
        let clp = classLevelPermissions(schema.className)
        if let c = try authorize(.get, schema.className, auth: auth, clp: clp) { access.predicate = .and([access.predicate, c]) }
        if let own = Self.ownRowsOnly(schema.className, auth: auth) { access.predicate = .and([access.predicate, own]) }
        access.hidden = clp.protectedFields(userId: auth.userId, roles: auth.roles).union(Self.alwaysProtected(schema.className))
        access.userFieldRules = clp.userFieldRules
        return access
    }

    static func denyProtected(_ hidden: Set<String>, in fields: Set<String>, className: String) throws(ParseError) {
        guard !hidden.isEmpty else { return }
        if let field = fields.sorted().first(where: hidden.contains) {
            throw ParseError.sanitized(.operationForbidden, "This user is not allowed to query \(field) on class \(className)")
        }
    }

    /// Applies the `find` CLP, pointer permissions and protected fields to every `$inQuery`, `$notInQuery`,
    /// `$select` and `$dontSelect` sub-query (they read their class like a find does).
    func secureSubqueries(_ node: QueryNode, auth: Auth) throws(ParseError) -> QueryNode {
        switch node {
        case .all, .relatedTo: return node
        case .and(let nodes): return .and(try nodes.map { (n: QueryNode) throws(ParseError) -> QueryNode in try secureSubqueries(n, auth: auth) })
        case .or(let nodes): return .or(try nodes.map { (n: QueryNode) throws(ParseError) -> QueryNode in try secureSubqueries(n, auth: auth) })
        case .nor(let nodes): return .nor(try nodes.map { (n: QueryNode) throws(ParseError) -> QueryNode in try secureSubqueries(n, auth: auth) })
        case .field(let path, let condition):
            switch condition {
            case .inQuery(let sub): return .field(path, .inQuery(try secure(sub, key: nil, auth: auth)))
            case .notInQuery(let sub): return .field(path, .notInQuery(try secure(sub, key: nil, auth: auth)))
            case .select(let sub, let key): return .field(path, .select(try secure(sub, key: key, auth: auth), key: key))
            case .dontSelect(let sub, let key): return .field(path, .dontSelect(try secure(sub, key: key, auth: auth), key: key))
            default: return node
            }
        }
    }

    func secure(_ sub: SubQuery, key: String?, auth: Auth) throws(ParseError) -> SubQuery {
        guard schemas.schema(sub.className) != nil else { return sub }
        let clp = classLevelPermissions(sub.className)
        var constraint = try authorize(.find, sub.className, auth: auth, clp: clp)
        if let own = Self.ownRowsOnly(sub.className, auth: auth) { constraint = constraint.map { .and([$0, own]) } ?? own }
        let hidden = clp.protectedFields(userId: auth.userId, roles: auth.roles).union(Self.alwaysProtected(sub.className))
        if !hidden.isEmpty {
            var fields = sub.predicate.referencedFields
            if let key, let top = key.splitASCII(UInt8(ascii: ".")).first { fields.insert(top) }
            try Self.denyProtected(hidden, in: fields, className: sub.className)
        }
        var predicate = try secureSubqueries(sub.predicate, auth: auth)
        if let constraint { predicate = .and([predicate, constraint]) }
        return SubQuery(className: sub.className, predicate: predicate)
    }

    // MARK: Writes

    /// `create`, plus `addField` when the body introduces fields the class does not have yet.
    public func authorizeCreate(_ className: String, body: JSONValue, auth: Auth) throws(ParseError) {
        if auth.isMaster { return }
        let clp = classLevelPermissions(className)
        _ = try authorize(.create, className, auth: auth, clp: clp)
        if clp.rules[.addField] != .everyone, addsFields(className, body: body, isCreate: true) {
            _ = try authorize(.addField, className, auth: auth, clp: clp)
        }
    }

    /// `update`'s rules (and `addField`'s for new fields) without the read: throws when the caller may not update the
    /// class at all, else returns what the stored object must match (pointer permissions; empty when nothing), which
    /// `requireMatch` checks or the UPDATE's own `WHERE` carries (`SQLWriter.updateStatement(matching:)`).
    public func updateConstraints(_ className: String, body: JSONValue, auth: Auth) throws(ParseError) -> [QueryNode] {
        if auth.isMaster { return [] }
        let clp = classLevelPermissions(className)
        var constraints: [QueryNode] = []
        if let c = try authorize(.update, className, auth: auth, clp: clp) { constraints.append(c) }
        if clp.rules[.addField] != .everyone, addsFields(className, body: body, isCreate: false),
            let c = try authorize(.addField, className, auth: auth, isUpdate: true, clp: clp)
        {
            constraints.append(c)
        }
        return constraints
    }

    /// `delete`'s rules without the read: throws when the caller may not delete from the class at all, else returns
    /// what the stored object must match (pointer permissions; nil when nothing), which `requireMatch` checks or the
    /// DELETE's own `WHERE` carries (`SQLWriter.delete(matching:)`).
    public func deleteConstraint(_ className: String, auth: Auth) throws(ParseError) -> QueryNode? {
        if auth.isMaster { return nil }
        return try authorize(.delete, className, auth: auth)
    }

    /// Pointer permissions checked against the stored object: one that does not match is `101 Object not found.`
    func requireMatch(_ className: String, objectId: String, _ constraints: [QueryNode]) async throws {
        guard !constraints.isEmpty, let schema = schemas.schema(className) else { return }
        let predicate = QueryNode.and([.field(FieldPath(field: "objectId"), .equals(.string(objectId)))] + constraints)
        let spec = FindSpec(schema: schema, predicate: predicate, limit: 1, readPrincipals: nil, schemas: schemas.all())
        if try await store.count(spec) == 0 { throw ParseError.objectNotFound() }
    }

    /// Whether a write body sets a field the class's schema does not have (Null and Delete add nothing).
    func addsFields(_ className: String, body: JSONValue, isCreate: Bool) -> Bool {
        var body = body
        // A client's own objectId (`allowCustomObjectId`) is no field; the rest of the body still counts.
        if isCreate, case .object(var fields) = body, fields.removeValue(forKey: "objectId") != nil { body = .object(fields) }
        guard let schema = schemas.schema(className), let patch = try? WriteParser(isCreate: isCreate).parse(body),
            let types = try? ObjectService.requiredTypes(patch)
        else { return false }
        return types.keys.contains { schema.fields[$0] == nil }
    }
}

extension ObjectService {
    /// The CLP checks of this service's writes.
    public var permissions: Permissions { Permissions(store: store, schemas: schemas) }
}

extension QueryService {
    /// The CLP and protected-field checks of this service's reads.
    public var permissions: Permissions { Permissions(store: store, schemas: schemas) }
}
