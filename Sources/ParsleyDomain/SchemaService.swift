import Logging
import NIOConcurrencyHelpers
public import ParsleyCore
public import ParsleyStorage

/// The class schemas: stored in `_SCHEMA`, cached in memory. Changes go through the writer, and the cache
/// takes a change only after its transaction committed and only if it is newer than what it holds.
public final class SchemaService: Sendable {
    public let store: SQLStore
    private struct Cache {
        var versions: [String: Int64] = [:]
        /// Kept ready-made so reads are a lock and a copy-on-write reference, not a rebuild.
        var schemas: [String: ClassSchema] = [:]
        /// A counter of changes to the cache; `touched` holds when each class last changed, `floor` when all did
        /// (a read that started earlier must not overwrite them).
        var stamp: UInt64 = 0
        var touched: [String: UInt64] = [:]
        var floor: UInt64 = 0
    }
    private let cache = NIOLockedValueBox(Cache())
    /// Re-reads on a miss and the periodic version check (`SchemaService+Freshness`).
    let freshness: SchemaFreshness

    /// Parse Server's `protectedFields` option (with `userSensitiveFields` merged in): class → entity → fields, merged
    /// into each class's own protected fields (`Permissions.classLevelPermissions`).
    public let serverProtectedFields: [String: [String: [String]]]
    /// Parse Server 9's `protectedFieldsOwnerExempt`: a user reading their own `_User` sees every field (default true).
    public let protectedFieldsOwnerExempt: Bool

    public init(
        store: SQLStore, protectedFields: [String: [String: [String]]] = ParseServerOptions.defaultProtectedFields,
        protectedFieldsOwnerExempt: Bool = true
    ) {
        self.store = store
        self.serverProtectedFields = protectedFields
        self.protectedFieldsOwnerExempt = protectedFieldsOwnerExempt
        self.freshness = SchemaFreshness(shared: store.database is any ChangeBroadcasting)
    }

    public func reload() async throws {
        let all = try await store.loadSchemas()
        cache.withLockedValue { c in
            let stamp = c.stamp &+ 1
            c = Cache()
            c.stamp = stamp
            c.floor = stamp
            for (schema, version) in all {
                c.versions[schema.className] = version
                c.schemas[schema.className] = schema
            }
        }
    }

    /// The cache's change counter now (taken before a read whose result `install` may take).
    func cacheStamp() -> UInt64 {
        cache.withLockedValue { $0.stamp }
    }

    /// The cached version of every class.
    func cachedVersions() -> [String: Int64] {
        cache.withLockedValue { $0.versions }
    }

    /// Takes what the database held for a class (nil: no such class). Unlike `publish`, an older version replaces a
    /// newer one (a class dropped and created again on another node starts its versions anew), unless the cache
    /// changed that class after `stamp`, when the read began: then only a newer version replaces it.
    func install(_ className: String, _ stored: (ClassSchema, Int64)?, readSince stamp: UInt64) {
        cache.withLockedValue { c in
            if c.versions[className] == stored?.1 { return }
            if max(c.floor, c.touched[className] ?? 0) > stamp {
                guard let stored, let cached = c.versions[className], stored.1 > cached else { return }
            }
            c.stamp &+= 1
            c.touched[className] = c.stamp
            c.versions[className] = stored?.1
            c.schemas[className] = stored?.0
        }
    }

    public func schema(_ className: String) -> ClassSchema? {
        cache.withLockedValue { $0.schemas[className] }
    }

    public func all() -> [String: ClassSchema] {
        cache.withLockedValue { $0.schemas }
    }

    /// Takes a committed schema into the cache; true when it was newer than the cached one.
    @discardableResult
    func publish(_ schema: ClassSchema, version: Int64) -> Bool {
        cache.withLockedValue { c in
            if let current = c.versions[schema.className], current >= version { return false }
            c.stamp &+= 1
            c.touched[schema.className] = c.stamp
            c.versions[schema.className] = version
            c.schemas[schema.className] = schema
            return true
        }
    }

    /// Tells other server processes on the same database that a class's schema changed.
    func announce(_ className: String) async {
        await (store.database as? any ChangeBroadcasting)?.broadcast("schema:" + className)
    }

    func forget(_ className: String) {
        cache.withLockedValue { c in
            c.stamp &+= 1
            c.touched[className] = c.stamp
            c.versions[className] = nil
            c.schemas[className] = nil
        }
    }

    /// Makes sure `className` exists with `fields`, adding what is missing.
    /// - Throws: 111 when a field exists with another type; 119 when the class is missing and may not be created.
    @discardableResult
    public func ensure(_ className: String, fields: [String: FieldType], auth: Auth, allowClassCreation: Bool) async throws -> ClassSchema {
        var cached = schema(className)
        if let current = cached, fields.allSatisfy({ current.fields[$0.key] == $0.value }) {
            return current
        }
        // Another node may have created the class or changed a field's type: the database decides before an error.
        if cached == nil || fields.contains(where: { name, type in cached?.fields[name].map { $0 != type } ?? false }) {
            cached = try await reread(className)
            if let current = cached, fields.allSatisfy({ current.fields[$0.key] == $0.value }) { return current }
        }
        if let current = cached {
            for (name, type) in fields {
                if let existing = current.fields[name], existing != type { throw Self.mismatch(name, expected: existing, got: type) }
            }
        } else if !auth.isMaster, !allowClassCreation, !Naming.systemClasses.contains(className) {
            throw ParseError(.operationForbidden, "This user is not allowed to access non-existent class: \(className)")
        }
        let (schema, version) = try await store.database.write { [store] db in
            let writer = store.writer(db)
            let stored = try await writer.storedSchema(className)
            var schema = stored?.0 ?? ClassSchema(className: className)
            if stored == nil {
                try await writer.createTable(className)
                for (name, type) in schema.fields where ClassSchema.defaultFields[name] == nil {
                    try await writer.addColumn(className, field: name, type: type)
                }
            }
            var changed = stored == nil
            for (name, type) in fields.sorted(by: { $0.key < $1.key }) {
                if let existing = schema.fields[name] {
                    if existing != type { throw Self.mismatch(name, expected: existing, got: type) }
                    continue
                }
                try Self.checkGeoPoint(schema, adding: name, type)
                // SQLite column names ignore case: a 105 rather than a failed ALTER TABLE.
                if let other = schema.fields.keys.first(where: { $0.lowercased() == name.lowercased() }) {
                    throw ParseError(.invalidKeyName, "invalid field name: \(name) (the class has \(other); field names may not differ only in case)")
                }
                try await writer.addColumn(className, field: name, type: type)
                schema.fields[name] = type
                changed = true
            }
            if !changed, let stored { return stored }
            let version = try await writer.saveSchema(schema, previousVersion: stored?.1)
            return (schema, version)
        }
        if publish(schema, version: version) { await announce(className) }
        return schema
    }

    static func checkGeoPoint(_ schema: ClassSchema, adding name: String, _ type: FieldType) throws(ParseError) {
        if type == .geoPoint, let existing = schema.geoPointField, existing != name {
            throw ParseError(
                .incorrectType,
                "there can only be one geopoint field in a class")
        }
    }

    static func mismatch(_ field: String, expected: FieldType, got: FieldType) -> ParseError {
        ParseError(.incorrectType, "schema mismatch for \(field); expected \(expected.display) but got \(got.display)")
    }

    /// Changes several classes in one transaction (schema files): `body` gets each class's stored schema
    /// and returns the new one (nil: unchanged). All are saved, or on the first error none is.
    public func update(
        classes: [String], _ body: @escaping @Sendable (SQLWriter, String, ClassSchema?) async throws -> ClassSchema?
    ) async throws {
        let saved: [(ClassSchema, Int64)] = try await store.database.write { [store] db in
            let writer = store.writer(db)
            var saved: [(ClassSchema, Int64)] = []
            for className in classes {
                let stored = try await writer.storedSchema(className)
                guard let schema = try await body(writer, className, stored?.0) else { continue }
                saved.append((schema, try await writer.saveSchema(schema, previousVersion: stored?.1)))
            }
            return saved
        }
        for (schema, version) in saved where publish(schema, version: version) { await announce(schema.className) }
    }

    /// Replaces a class's schema wholesale inside a write (used by the schemas API).
    public func update(_ className: String, _ body: @escaping @Sendable (SQLWriter, ClassSchema?) async throws -> ClassSchema?) async throws
        -> ClassSchema?
    {
        let result: (ClassSchema, Int64)?? = try await store.database.write { [store] db in
            let writer = store.writer(db)
            let stored = try await writer.storedSchema(className)
            guard let schema = try await body(writer, stored?.0) else {
                try await writer.deleteSchema(className)
                return .some(nil)
            }
            let version = try await writer.saveSchema(schema, previousVersion: stored?.1)
            return (schema, version)
        }
        switch result {
        case .some(.some(let (schema, version))):
            if publish(schema, version: version) { await announce(className) }
            return schema
        default:
            forget(className)
            await announce(className)
            return nil
        }
    }
}
