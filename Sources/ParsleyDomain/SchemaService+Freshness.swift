import Synchronization
public import ParsleyCore
import ParsleyStorage

/// What `SchemaService` needs to re-read schemas without a thundering herd: coalesced reads of one class, and of
/// the version list, and when the version list was last compared.
final class SchemaFreshness: Sendable {
    /// Several processes write the database (PostgreSQL): the cache is compared with it every `CacheTrust.schemas`.
    let shared: Bool
    let classes = FreshReads<String, (ClassSchema, Int64)?>()
    let versions = FreshReads<Int, Bool>()
    /// When the last completed comparison started.
    let compared = Mutex<ContinuousClock.Instant?>(nil)

    init(shared: Bool) {
        self.shared = shared
    }
}

/// The schema cache is never the last word when it does not know something: another node may have created the
/// class, added the field or changed the permissions a moment ago, and its announcement may be late or lost. So a
/// request that misses re-reads from the database before it answers (as Parse Server reloads its schema), and on a
/// database several processes share the cached versions are compared with the stored ones when they are older than
/// `CacheTrust.schemas`. Misses are coalesced (`FreshReads`): at most one read of a class runs and one waits,
/// whatever the number of requests, yet each request is answered from a read that started after it arrived.
extension SchemaService {
    /// The schema of `className` for a request arriving now: the cache (compared with the database when due), or
    /// when it does not know the class, what the database holds. nil: no such class.
    public func current(_ className: String) async throws -> ClassSchema? {
        try await refreshIfDue()
        if let schema = schema(className) { return schema }
        return try await reread(className)
    }

    /// The schema for a find: as `current`, re-read when the query names a field the cached schema lacks (in `where`,
    /// `order`, `keys`, `include`), and with the classes its sub-queries and relations name looked up the same way.
    public func current(_ className: String, for find: FindOptions) async throws -> ClassSchema? {
        guard var schema = try await current(className) else { return nil }
        var fields: Set<String> = []
        var classes: Set<String> = []
        Self.mentioned(find.whereValue, fields: &fields, classes: &classes)
        for key in find.order + (find.keys ?? []) + find.include {
            fields.insert(Self.topField(key.hasPrefix("-") ? String(key.dropFirst()) : key))
        }
        if let key = find.redirectClassNameForKey { fields.insert(key) }
        if fields.contains(where: { !Self.knows(schema, $0) }) {
            guard let fresh = try await reread(className) else { return nil }
            schema = fresh
        }
        if let key = find.redirectClassNameForKey, case .relation(let target)? = schema.fields[key] { classes.insert(target) }
        for name in classes.sorted() where name != className && self.schema(name) == nil {
            _ = try await reread(name)
        }
        return schema
    }

    /// Reads `className` from the database into the cache (coalesced with the reads other requests are waiting for).
    /// nil: the database has no such class.
    @discardableResult
    public func reread(_ className: String) async throws -> ClassSchema? {
        guard Naming.isValidClassName(className) else { return schema(className) }
        // Inside a transaction (a transactional batch) the read joins it: its own, not shared, not cached.
        if Transaction.current != nil { return try await readStored(className)?.0 }
        return try await freshness.classes.read(className) { [self] in
            let stamp = cacheStamp()
            let stored = try await readStored(className)
            install(className, stored, readSince: stamp)
            return stored
        }?.0
    }

    /// On a database several processes share: when the cache was last compared with the stored versions more than
    /// `CacheTrust.schemas` ago, compares it now (one statement; the classes that differ are read again, those gone
    /// are forgotten). Requests arriving meanwhile share the comparison.
    public func refreshIfDue() async throws {
        guard freshness.shared, Transaction.current == nil else { return }
        let now = ContinuousClock.now
        if let last = freshness.compared.withLock({ $0 }), now - last < CacheTrust.schemas { return }
        try await compareVersions(notBefore: now - CacheTrust.schemas)
    }

    /// Compares the cached versions with the database's now (by default in a read that starts after this call).
    public func compareVersions(notBefore: ContinuousClock.Instant = .now) async throws {
        guard freshness.shared, Transaction.current == nil else { return }
        _ = try await freshness.versions.read(0, notBefore: notBefore) { [self] in
            let started = ContinuousClock.now
            let stamp = cacheStamp()
            let stored = try await readVersions()
            let cached = cachedVersions()
            for name in cached.keys where stored[name] == nil { install(name, nil, readSince: stamp) }
            let changed = stored.filter { cached[$0.key] != $0.value }.keys.sorted()
            if changed.count > 16 {
                for (schema, version) in try await store.loadSchemas() { install(schema.className, (schema, version), readSince: stamp) }
            } else {
                for name in changed {
                    let stored = try await readStored(name)
                    install(name, stored, readSince: stamp)
                }
            }
            freshness.compared.withLock { last in
                if last.map({ $0 < started }) ?? true { last = started }
            }
            return true
        }
    }

    /// Whether a statement may have failed because this node's cached schema is stale: a table or column it names is
    /// gone (PostgreSQL's 42P01, 42703: another node dropped the class or field) or has another type than the cache
    /// says (42883, 42804, 22P02: the field was deleted and added again with another type).
    public static func isStale(_ error: any Error) -> Bool {
        guard case StoreError.database(let message) = error else { return false }
        return ["42P01", "42703", "42883", "42804", "22P02"].contains { message.hasPrefix($0) }
    }

    // MARK: Reading

    /// The stored schema of one class and its version (storage reads it outside any transaction).
    func readStored(_ className: String) async throws -> (ClassSchema, Int64)? { try await store.storedSchema(className) }

    /// The stored version of every class.
    func readVersions() async throws -> [String: Int64] { try await store.schemaVersions() }

    // MARK: What a query names

    static let builtinFields: Set<String> = ["objectId", "createdAt", "updatedAt", "ACL"]

    /// Whether `field` needs no schema entry or the schema has it (`$`-operators and internal `_` columns never count
    /// as misses).
    static func knows(_ schema: ClassSchema, _ field: String) -> Bool {
        field.isEmpty || field.hasPrefix("$") || field.hasPrefix("_") || builtinFields.contains(field) || schema.fields[field] != nil
    }

    static func topField(_ path: String) -> String {
        path.prefixBeforeASCII(UInt8(ascii: "."))
    }

    /// The top-level fields a `where` names, and the classes its sub-queries and `$relatedTo` name.
    static func mentioned(_ value: JSONValue?, fields: inout Set<String>, classes: inout Set<String>) {
        guard case .object(let o)? = value else { return }
        for (key, condition) in o {
            switch key {
            case "$or", "$and", "$nor":
                for part in condition.arrayValue ?? [] { mentioned(part, fields: &fields, classes: &classes) }
            case "$relatedTo":
                if let name = condition["object"]?["className"]?.stringValue { classes.insert(name) }
            default:
                if !key.hasPrefix("$") { fields.insert(topField(key)) }
                guard case .object(let ops) = condition else { continue }
                for op in ["$inQuery", "$notInQuery"] {
                    if let name = ops[op]?["className"]?.stringValue { classes.insert(name) }
                }
                for op in ["$select", "$dontSelect"] {
                    if let name = ops[op]?["query"]?["className"]?.stringValue { classes.insert(name) }
                }
            }
        }
    }
}
