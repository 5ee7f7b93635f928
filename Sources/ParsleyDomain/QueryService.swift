public import ParsleyCore
public import ParsleyStorage

/// Code that runs around a find: `beforeFind` may change the query, refuse it or answer it with objects of its own,
/// `afterFind` may change the results. Filled by cloud code (`CloudRuntime.queryHooks`).
public struct QueryHooks: Sendable {
    /// What a `beforeFind` decided: the query to run, or (`objects` set) the objects that answer the find without
    /// querying the database (as in Parse Server 8.3+).
    public struct BeforeFindOutcome: Sendable {
        public var find: FindOptions
        public var objects: [[String: JSONValue]]?

        public init(find: FindOptions, objects: [[String: JSONValue]]? = nil) {
            self.find = find
            self.objects = objects
        }
    }

    public typealias BeforeFind =
        @Sendable (_ className: String, _ find: FindOptions, _ isGet: Bool, _ auth: Auth) async throws -> BeforeFindOutcome
    public typealias AfterFind =
        @Sendable (
            _ className: String, _ objects: [[String: JSONValue]], _ find: FindOptions, _ auth: Auth
        ) async throws -> [[String: JSONValue]]

    public var beforeFind: @Sendable (_ className: String) -> BeforeFind? = { _ in nil }
    public var afterFind: @Sendable (_ className: String) -> AfterFind? = { _ in nil }

    public init() {}
}

/// Finds, gets and counts Parse objects, resolving `include` with one query per class and path level.
public struct QueryService: Sendable {
    public let store: SQLStore
    public let schemas: SchemaService
    public let options: ParseServerOptions
    /// Cloud code's `beforeFind`/`afterFind`, run for the finds and gets of clients and cloud code (`triggers: true`),
    /// never for the server's own lookups.
    public let hooks: QueryHooks

    public init(store: SQLStore, schemas: SchemaService, options: ParseServerOptions, hooks: QueryHooks = QueryHooks()) {
        self.store = store
        self.schemas = schemas
        self.options = options
        self.hooks = hooks
    }

    public struct Page: Sendable {
        public var results: [[String: JSONValue]]
        public var count: Int?
    }

    /// `GET /classes/:className` with its parameters; `triggers` runs the class's `beforeFind` and `afterFind`.
    public func find(_ className: String, _ find: FindOptions, auth: Auth, triggers: Bool = false) async throws -> Page {
        try requireExplainAllowed(find.explain, auth: auth)
        guard triggers else { return try await self.find(className, find, auth: auth, operation: .find) }
        var find = find
        var answered: [[String: JSONValue]]?
        if let before = hooks.beforeFind(className) {
            let outcome = try await before(className, find, false, auth)
            find = outcome.find
            answered = outcome.objects
        }
        let countOnly = find.limit == 0 && find.count
        var page: Page
        if let answered, let refilter = Self.refilter(answered, find, auth: auth, isGet: false) {
            page = try await self.find(className, refilter, auth: auth, operation: .find)
        } else if let answered {
            // The trigger's objects answer the find; the database is not queried. `count` is their number.
            page = Page(results: countOnly ? [] : answered, count: find.count ? answered.count : nil)
        } else {
            page = try await self.find(className, find, auth: auth, operation: .find)
        }
        // `afterFind` sees the objects a find returns, not a count.
        if let after = hooks.afterFind(className), !countOnly {
            page.results = try await after(className, page.results, find, auth)
        }
        return page
    }

    /// `explain` without the master key (nor the read-only one; the maintenance key is not the master here): refused
    /// unless `allowPublicExplain`, before any trigger runs, as in Parse Server 9.
    public func requireExplainAllowed(_ explain: Bool, auth: Auth) throws {
        guard explain, !auth.isMaster || auth.isMaintenance, !options.allowPublicExplain else { return }
        throw ParseError(.invalidQuery, "Using the explain query parameter requires the master key")
    }

    /// For a caller without the master key, the objects a `beforeFind` answered that name an `objectId` are read again
    /// from the database with the caller's rights (ACLs, class-level permissions, protected fields) and the find's
    /// options, as Parse Server 8.3+ does; objects without one (never saved) are answered as they are (nil).
    static func refilter(_ objects: [[String: JSONValue]], _ find: FindOptions, auth: Auth, isGet: Bool) -> FindOptions? {
        guard !auth.isMaster else { return nil }
        let ids = objects.compactMap { $0["objectId"]?.stringValue }
        guard let first = ids.first else { return nil }
        var f = find
        f.whereValue = isGet ? ["objectId": .string(first)] : ["objectId": ["$in": .array(ids.map(JSONValue.string))]]
        return f
    }

    /// A find, or the find behind a get (`operation` `.get`).
    func find(_ className: String, _ find: FindOptions, auth: Auth, operation: ClassLevelPermissions.Operation) async throws -> Page {
        do {
            return try await unskewed { try await findOnce(className, find, auth: auth, operation: operation) }
        } catch  where SchemaService.isStale(error) {
            // A table or column another node dropped a moment ago: the schemas as the database holds them, then again.
            try await schemas.compareVersions()
            return try await findOnce(className, find, auth: auth, operation: operation)
        }
    }

    private func findOnce(_ className: String, _ find: FindOptions, auth: Auth, operation: ClassLevelPermissions.Operation) async throws -> Page {
        if !auth.isMaster { try Permissions.requireMasterOnlyAccess(operation, className) }
        guard Naming.isValidClassName(className) else { throw ParseError.invalidClassName(className) }
        // Re-read when the cache lacks the class or a field the query names (another node may have just made them).
        guard var schema = try await schemas.current(className, for: find) else {
            if !auth.isMaster, !options.allowClientClassCreation, !Naming.systemClasses.contains(className) {
                throw ParseError(.operationForbidden, "This user is not allowed to access non-existent class: \(className)")
            }
            return Page(results: [], count: find.count ? 0 : nil)
        }
        var redirected: String?
        if let key = find.redirectClassNameForKey {
            guard case .relation(let target)? = schema.fields[key], let targetSchema = schemas.schema(target) else {
                return Page(results: [], count: find.count ? 0 : nil)
            }
            // Objects of the relation's target class; the where clause names the owner with $relatedTo.
            schema = targetSchema
            redirected = target
        }
        var parser = QueryParser(internalFields: Self.internalFields(auth), now: .now)
        parser.schemas = schemas.all()
        let predicate = try parser.parse(find.whereValue, className: schema.className)
        var order: [SortKey] = []
        for key in find.order {
            let descending = key.hasPrefix("-")
            let name = descending ? String(key.dropFirst()) : key
            if name == "$score" {
                // Relevance always sorts best first (Mongo's textScore sort), whether or not "-" is given.
                order.append(SortKey(path: FieldPath(field: "$score"), descending: true))
                continue
            }
            let path = try QueryParser(internalFields: Self.internalFields(auth), now: .now).fieldPath(name)
            order.append(SortKey(path: path, descending: descending))
        }
        return try await execute(schema, predicate: predicate, order: order, redirected: redirected, find, auth: auth)
    }

    /// A find once its class, `where` and `order` are known: permissions, the statement, includes, the answer's shape.
    private func execute(
        _ schema: ClassSchema, predicate: QueryNode, order: [SortKey], redirected: String?, _ find: FindOptions, auth: Auth
    ) async throws -> Page {
        let all = schemas.all()
        var limit = find.limit ?? options.defaultLimit
        if let maxLimit = options.maxLimit { limit = min(limit, maxLimit) }
        let (topKeys, includeFromKeys) = Self.splitKeys(find.keys)
        let includes = find.include + includeFromKeys
        try options.requestComplexity.checkWhere(find.whereValue, auth: auth)
        try options.requestComplexity.checkIncludes(Self.expandIncludeAll(includes.map(Self.components), schema: schema), auth: auth)
        var access = try permissions.authorizeRead(
            schema, predicate: predicate, whereValue: find.whereValue, order: order, fetches: limit > 0, counts: find.count, auth: auth)
        var spec = FindSpec(
            schema: schema, predicate: access.predicate, order: order, limit: limit, skip: find.skip,
            keys: access.columns(topKeys.map { Set($0).union(includes.map { String($0.split(separator: ".")[0]) }) }),
            readPrincipals: auth.principals,
            schemas: all)
        spec.withTextScore = topKeys?.contains("$score") == true
        var results: [[String: JSONValue]] = []
        if limit > 0 {
            results = access.strip(try await run { try await store.find(spec) })
        }
        var count: Int?
        if find.count {
            spec.order = []
            spec.estimateCountsFrom = options.estimatedCountThreshold > 0 ? options.estimatedCountThreshold : nil
            count = try await run { try await store.count(spec) }
        }
        if !includes.isEmpty {
            let restriction = IncludeKeys(
                keys: find.keys.map { $0.map(Self.components) }, excludeKeys: find.excludeKeys.map(Self.components))
            try await include(&results, schema: schema, paths: includes.map(Self.components), keys: restriction, auth: auth, depth: 0)
        }
        let shaping = Shaping(schema: schema, keys: topKeys.map(Set.init), exclude: Set(find.excludeKeys))
        if !shaping.isIdentity { results = results.map(shaping.apply) }
        if let redirected {
            results = results.map {
                var o = $0; o["className"] = .string(redirected); return o
            }
        }
        return Page(results: results, count: count)
    }

    /// `GET /classes/:className/:objectId`; `triggers` runs the class's `beforeFind` (with `isGet`; what it adds to
    /// `where` must hold too) and `afterFind`.
    public func get(_ className: String, objectId: String, _ find: FindOptions, auth: Auth, triggers: Bool = false) async throws -> [String:
        JSONValue]
    {
        if !auth.isMaster { try Permissions.requireMasterOnlyAccess(.get, className) }
        guard Naming.isValidClassName(className) else { throw ParseError.invalidClassName(className) }
        guard let schema = try await schemas.current(className) else { throw ParseError.objectNotFound() }
        if find.keys == nil, find.include.isEmpty, find.redirectClassNameForKey == nil,
            !triggers || (hooks.beforeFind(className) == nil && hooks.afterFind(className) == nil)
        {
            let object = try await unskewed { [schemas] in
                try await pointRead(schemas.schema(className) ?? schema, objectId: objectId, find, auth: auth)
            }
            guard let object else { throw ParseError.objectNotFound() }
            return object
        }
        var f = Self.byId(find, objectId)
        var answered: [[String: JSONValue]]?
        if triggers, let before = hooks.beforeFind(className) {
            let outcome = try await before(className, f, true, auth)
            f = outcome.find
            answered = outcome.objects
            let byId: JSONValue = ["objectId": .string(objectId)]
            if f.whereValue != byId { f.whereValue = ["$and": [byId, f.whereValue ?? [:]]] }
            f.limit = 1
        }
        // Objects from `beforeFind` answer the get (the first one), read again for a client (`refilter`).
        var results: [[String: JSONValue]]
        if let answered, let refilter = Self.refilter(answered, f, auth: auth, isGet: true) {
            results = try await self.find(className, refilter, auth: auth, operation: .get).results
        } else if let answered {
            results = answered
        } else {
            results = try await self.find(className, f, auth: auth, operation: .get).results
        }
        if triggers, let after = hooks.afterFind(className) { results = try await after(className, results, f, auth) }
        guard let object = results.first else { throw ParseError.objectNotFound() }
        return object
    }

    /// A get that names no keys or includes and runs no find trigger: the find of one id without parsing a `where`
    /// or re-checking the schema for the fields a query names (it names only `objectId`); the same permissions,
    /// statement and answer as the find it stands for.
    private func pointRead(_ schema: ClassSchema, objectId: String, _ find: FindOptions, auth: Auth) async throws -> [String: JSONValue]? {
        let f = Self.byId(find, objectId)
        let predicate = QueryNode.field(FieldPath(field: "objectId"), .equals(.string(objectId)))
        do {
            return try await execute(schema, predicate: predicate, order: [], redirected: nil, f, auth: auth).results.first
        } catch  where SchemaService.isStale(error) {
            try await schemas.compareVersions()
            return try await self.find(schema.className, f, auth: auth, operation: .get).results.first
        }
    }

    /// Runs a read again when a schema changed while it ran. A read takes the class's schema first and its rows after,
    /// and a write that adds a field publishes the schema before its own transaction: a read whose schema came before
    /// that and whose rows after would show the write's other fields without the new one. When no schema changed from
    /// the start of the read to its end, every row it saw was written under a schema it had.
    func unskewed<T>(_ read: () async throws -> T) async throws -> T {
        for _ in 0..<2 {
            let stamp = schemas.cacheStamp()
            let result = try await read()
            if schemas.cacheStamp() == stamp { return result }
        }
        return try await read()
    }

    /// A get's options as the find of one id: `where` names the id; no order, skip or count; one object.
    static func byId(_ find: FindOptions, _ objectId: String) -> FindOptions {
        var f = find
        f.whereValue = ["objectId": .string(objectId)]
        f.limit = 1
        f.skip = 0
        f.count = false
        f.order = []
        return f
    }

    func run<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch StoreError.timeout {
            throw ParseError(.invalidQuery, "Query took too long and was cancelled (an expensive $regex or a scan past the statement timeout)")
        } catch StoreError.invalidRegex {
            throw ParseError(.invalidQuery, "Invalid regular expression in $regex")
        } catch StoreError.tooComplex {
            throw ParseError(.invalidQuery, "The query is too complex for the database")
        }
    }

    /// The internal fields a caller's `where` and `order` may name: none for clients, fewer for the read-only master key.
    static func internalFields(_ auth: Auth) -> Set<String> {
        guard auth.isMaster else { return [] }
        return auth.isReadOnly ? QueryParser.readOnlyMasterInternalFields : QueryParser.masterInternalFields
    }

    static func components(_ path: String) -> [String] { path.splitASCII(UInt8(ascii: ".")) }

    /// Include paths with `includeAll`'s `*` as the class's pointer and array fields (what `include` resolves for it).
    static func expandIncludeAll(_ paths: [[String]], schema: ClassSchema) -> [[String]] {
        guard paths.contains(where: { $0.first == "*" }) else { return paths }
        var out = paths.filter { $0.first != "*" }
        for (name, type) in schema.fields.sorted(by: { $0.key < $1.key }) {
            switch type {
            case .pointer, .array: out.append([name])
            default: break
            }
        }
        return out
    }

    /// `keys`/`excludeKeys` as dotted paths relative to the objects being included at one level
    /// (`keys=post.title` restricts the included `post` objects to `title`).
    struct IncludeKeys {
        var keys: [[String]]?
        var excludeKeys: [[String]]

        /// The restriction for the objects included through `field`.
        func below(_ field: String) -> IncludeKeys {
            let sub = keys.map { paths in paths.filter { $0.count > 1 && $0[0] == field }.map { Array($0.dropFirst()) } }
            return IncludeKeys(
                keys: sub?.isEmpty == false ? sub : nil,
                excludeKeys: excludeKeys.filter { $0.count > 1 && $0[0] == field }.map { Array($0.dropFirst()) })
        }

        /// Top-level names kept at this level (nil: all).
        var topKeys: Set<String>? { keys.map { Set($0.compactMap(\.first)) } }
        /// Names removed at this level.
        var topExcluded: Set<String> { Set(excludeKeys.filter { $0.count == 1 }.map { $0[0] }) }
    }

    /// `keys=a,b.c` -> top-level keys `a,b` and an implied `include=b`.
    static func splitKeys(_ keys: [String]?) -> ([String]?, [String]) {
        guard let keys else { return (nil, []) }
        var top: [String] = []
        var includes: [String] = []
        for k in keys {
            let parts = k.splitASCII(UInt8(ascii: "."))
            guard let first = parts.first else { continue }
            top.append(String(first))
            if parts.count > 1 { includes.append(parts.dropLast().joined(separator: ".")) }
        }
        return (top, includes)
    }

    /// Relation placeholders, file URLs, `keys`/`excludeKeys` trimming.
    func shape(_ object: [String: JSONValue], schema: ClassSchema, keys: Set<String>?, exclude: Set<String>) -> [String: JSONValue] {
        Shaping(schema: schema, keys: keys, exclude: exclude).apply(object)
    }

    /// What `shape` does to each object of a page, worked out once for the page: the relation fields to show (as
    /// `{"__type":"Relation"}`) and the keys to drop. Most pages need neither, and their objects are left as they are.
    struct Shaping {
        let relations: [(name: String, value: JSONValue)]
        let drop: [String]

        init(schema: ClassSchema, keys: Set<String>?, exclude: Set<String>) {
            relations = schema.fields.compactMap { name, type in
                guard case .relation(let target) = type, keys?.contains(name) ?? true else { return nil }
                return (name, ["__type": "Relation", "className": .string(target)])
            }
            drop = exclude.filter { !["objectId", "createdAt", "updatedAt", "ACL"].contains($0) }
        }

        var isIdentity: Bool { relations.isEmpty && drop.isEmpty }

        func apply(_ object: [String: JSONValue]) -> [String: JSONValue] {
            if isIdentity { return object }
            var o = object
            for (name, value) in relations { o[name] = value }
            for key in drop { o[key] = nil }
            return o
        }
    }

    /// Replaces pointers along each include path with the objects they name (readable ones only).
    func include(
        _ objects: inout [[String: JSONValue]], schema: ClassSchema, paths: [[String]], keys: IncludeKeys, auth: Auth, depth: Int
    ) async throws {
        guard depth < 8, !objects.isEmpty else { return }
        var byFirst: [String: [[String]]] = [:]
        for path in Self.expandIncludeAll(paths, schema: schema) {
            guard let first = path.first else { continue }
            byFirst[first, default: []].append(Array(path.dropFirst()))
        }
        for (field, rest) in byFirst.sorted(by: { $0.key < $1.key }) {
            var wanted: [String: Set<String>] = [:]
            for object in objects {
                for p in Self.pointers(in: object[field]) { wanted[p.className, default: []].insert(p.objectId) }
            }
            var fetched: [Pointer: [String: JSONValue]] = [:]
            let subKeys = keys.below(field)
            let sub = rest.filter { !$0.isEmpty }
            let selected = subKeys.topKeys.map { $0.union(sub.map { $0[0] }) }
            for (className, ids) in wanted.sorted(by: { $0.key < $1.key }) {
                // Internal classes are never resolved for clients (their pointers are dropped like unreadable ones).
                guard let targetSchema = try await schemas.current(className), auth.isMaster || !Permissions.masterOnlyClasses.contains(className)
                else { continue }
                var access = try permissions.authorizeInclude(
                    targetSchema, predicate: .field(FieldPath(field: "objectId"), .isIn(ids.sorted().map { .string($0) })), auth: auth)
                let spec = FindSpec(
                    schema: targetSchema, predicate: access.predicate,
                    limit: ids.count, keys: access.columns(selected), readPrincipals: auth.principals, schemas: schemas.all())
                var found = access.strip(try await store.find(spec))
                if !sub.isEmpty { try await include(&found, schema: targetSchema, paths: sub, keys: subKeys, auth: auth, depth: depth + 1) }
                let shaping = Shaping(schema: targetSchema, keys: subKeys.topKeys, exclude: subKeys.topExcluded)
                for var o in found {
                    guard let id = o["objectId"]?.stringValue else { continue }
                    o = shaping.apply(o)
                    o["__type"] = "Object"
                    o["className"] = .string(className)
                    fetched[Pointer(className: className, objectId: id)] = o
                }
            }
            for i in objects.indices {
                guard let value = objects[i][field] else { continue }
                if let p = Pointer(json: value), value.parseType == "Pointer" {
                    objects[i][field] = fetched[p].map(JSONValue.object)
                } else if case .array(let items) = value {
                    objects[i][field] = .array(
                        items.compactMap { item in
                            guard let p = Pointer(json: item), item.parseType == "Pointer" else { return item }
                            return fetched[p].map(JSONValue.object)
                        })
                }
            }
        }
    }

    static func pointers(in value: JSONValue?) -> [Pointer] {
        guard let value else { return [] }
        if value.parseType == "Pointer", let p = Pointer(json: value) { return [p] }
        if case .array(let items) = value { return items.compactMap { $0.parseType == "Pointer" ? Pointer(json: $0) : nil } }
        return []
    }

    /// `count` alone (`triggers`: the class's `beforeFind` runs, as for a find with `count`).
    public func count(_ className: String, where whereValue: JSONValue?, auth: Auth, triggers: Bool = false) async throws -> Int {
        var f = FindOptions()
        f.whereValue = whereValue
        f.limit = 0
        f.count = true
        return try await find(className, f, auth: auth, triggers: triggers).count ?? 0
    }
}
