public import ParsleyCore

/// Statements run inside a write transaction: DDL for schema evolution, and object writes.
public struct SQLWriter: Sendable {
    public let db: any SQLExecutor
    public let dialect: any SQLDialect

    // MARK: Schema

    /// The stored schema of a class and its version, read inside the transaction (authoritative).
    public func storedSchema(_ className: String) async throws -> (ClassSchema, Int64)? {
        if let lock = dialect.schemaLock(className) { try await db.query(lock) }
        var f = SQLFragment(unsafeSQL: "SELECT schema, version FROM \(dialect.table("_SCHEMA")) WHERE className = ")
        f.append(bind: .text(className))
        let rows = try await db.query(f)
        guard let row = rows.first, case .text(let text) = row[0], let json = try? JSONParser.parse(text),
            let schema = ClassSchema(json: json), case .integer(let version) = row[1]
        else { return nil }
        return (schema, version)
    }

    /// Writes a schema row with the next version number; returns that version.
    public func saveSchema(_ schema: ClassSchema, previousVersion: Int64?) async throws -> Int64 {
        let version = (previousVersion ?? 0) + 1
        let text = JSONWriter.string(schema.json)
        var f = SQLFragment(unsafeSQL: "INSERT INTO \(dialect.table("_SCHEMA")) (className, schema, version) VALUES (")
        f.append(bind: .text(schema.className))
        f.append(", ")
        f.append(bind: .text(text))
        f.append(", ")
        f.append(bind: .integer(version))
        f.append(") ON CONFLICT (className) DO UPDATE SET schema = excluded.schema, version = excluded.version")
        _ = try await db.query(f)
        return version
    }

    public func deleteSchema(_ className: String) async throws {
        var f = SQLFragment(unsafeSQL: "DELETE FROM \(dialect.table("_SCHEMA")) WHERE className = ")
        f.append(bind: .text(className))
        _ = try await db.query(f)
    }

    public func createTable(_ className: String) async throws {
        let t = dialect.table(className)
        _ = try await db.query(
            SQLFragment(
                unsafeSQL:
                    "CREATE TABLE IF NOT EXISTS \(t) (\"objectId\" TEXT PRIMARY KEY, \"createdAt\" TEXT NOT NULL, \"updatedAt\" TEXT NOT NULL, "
                    + "\"_rperm\" \(dialect.permissionColumnType), \"_wperm\" \(dialect.permissionColumnType))"
            ))
    }

    public func dropTable(_ className: String) async throws {
        _ = try await db.query(SQLFragment(unsafeSQL: "DROP TABLE IF EXISTS \(dialect.table(className))"))
    }

    /// Removes a field's column from a class table.
    public func dropColumn(_ className: String, field: String) async throws {
        _ = try await db.query(SQLFragment(unsafeSQL: "ALTER TABLE \(dialect.table(className)) DROP COLUMN \(dialect.quote(field))"))
    }

    public func addColumn(_ className: String, field: String, type: FieldType) async throws {
        if case .relation = type {
            let join = dialect.table(WhereCompiler.joinTable(field: field, owner: className))
            _ = try await db.query(
                SQLFragment(
                    unsafeSQL:
                        "CREATE TABLE IF NOT EXISTS \(join) (relatedId TEXT NOT NULL, owningId TEXT NOT NULL, PRIMARY KEY (relatedId, owningId))"))
            _ = try await db.query(
                SQLFragment(unsafeSQL: "CREATE INDEX IF NOT EXISTS \(dialect.table("_Join:\(field):\(className):owning")) ON \(join) (owningId)"))
            return
        }
        let columnType = dialect.columnType(for: type)
        let ifNotExists = dialect.supportsAddColumnIfNotExists ? "IF NOT EXISTS " : ""
        _ = try await db.query(
            SQLFragment(
                unsafeSQL:
                    "ALTER TABLE \(dialect.table(className)) ADD COLUMN "
                    + "\(ifNotExists)\(dialect.quote(field))\(columnType.isEmpty ? "" : " " + columnType)"
            ))
    }

    public func createIndex(_ className: String, name: String, fields: [(String, Bool)], unique: Bool = false) async throws {
        let cols = fields.map { "\(dialect.quote($0.0))\($0.1 ? " DESC" : "")" }.joined(separator: ", ")
        _ = try await db.query(
            SQLFragment(
                unsafeSQL:
                    "CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(dialect.table("\(className)_\(name)")) ON \(dialect.table(className)) "
                    + "(\(cols))"
            ))
    }

    public func dropIndex(_ className: String, name: String) async throws {
        _ = try await db.query(SQLFragment(unsafeSQL: "DROP INDEX IF EXISTS \(dialect.table("\(className)_\(name)"))"))
    }

    // MARK: Objects

    /// Inserts a new object. `values` are top-level fields (no relations).
    public func insert(
        className: String, schema: ClassSchema, objectId: String, createdAt: ParseDate, values: [String: JSONValue], acl: ACL?
    ) async throws {
        _ = try await db.query(
            Self.insertStatement(dialect, className: className, schema: schema, objectId: objectId, createdAt: createdAt, values: values, acl: acl))
    }

    /// The INSERT of a new object (`insert`), for running alone (`SQLDatabase.writeStatement`) or in a transaction.
    public static func insertStatement(
        _ dialect: any SQLDialect, className: String, schema: ClassSchema, objectId: String, createdAt: ParseDate, values: [String: JSONValue],
        acl: ACL?
    ) -> SQLFragment {
        var names = ["objectId", "createdAt", "updatedAt", "_rperm", "_wperm"]
        var binds: [SQLValue] = [.text(objectId), .text(createdAt.iso), .text(createdAt.iso)]
        binds += permissionValues(acl)
        for (name, value) in values.sorted(by: { $0.key < $1.key }) where !value.isNull {
            names.append(name)
            binds.append(StorageCodec.encode(value, as: schema.fields[name]))
        }
        return SQLFragment(
            unsafeSQL:
                "INSERT INTO \(dialect.table(className)) (\(names.map(dialect.quote).joined(separator: ", "))) VALUES "
                + "(\(Array(repeating: "?", count: binds.count).joined(separator: ", ")))",
            binds)
    }

    static func permissionValues(_ acl: ACL?) -> [SQLValue] {
        guard let acl else { return [.null, .null] }
        return [
            .json(JSONWriter.string(.array(acl.readers.map { .string($0) }))),
            .json(JSONWriter.string(.array(acl.writers.map { .string($0) }))),
        ]
    }

    /// One column assignment of an update.
    public enum Assignment: Sendable {
        case set(String, JSONValue)
        case increment(String, JSONValue)
        case setACL(ACL?)
    }

    /// Updates one object if the write permissions allow; returns the new values of incremented fields,
    /// or nil when no row matched (missing or not writable).
    public func update(
        className: String, schema: ClassSchema, objectId: String, updatedAt: ParseDate, assignments: [Assignment], writePrincipals: [String]?
    ) async throws -> [String: JSONValue]? {
        let update = try Self.updateStatement(
            dialect, className: className, schema: schema, objectId: objectId, updatedAt: updatedAt, assignments: assignments,
            writePrincipals: writePrincipals)
        return update.result(try await db.query(update.statement))
    }

    /// The table of a one-object UPDATE or DELETE, and ` AND (…)` for its `WHERE` when the stored object must also
    /// match `condition` (a class's pointer permissions), compiled with `schemas` (the classes it may name). The
    /// condition's columns are written `t0."field"`, so the table then takes that name; the SET and RETURNING lists
    /// (bare column names) do not need it.
    static func conditioned(
        _ dialect: any SQLDialect, className: String, schema: ClassSchema, _ condition: QueryNode?, schemas: [String: ClassSchema]
    ) throws(ParseError) -> (table: String, matching: SQLFragment?) {
        guard let condition else { return (dialect.table(className), nil) }
        let alias = "t0"
        let compiled = try WhereCompiler(dialect: dialect, schemas: schemas, readPrincipals: nil).compile(condition, schema: schema, alias: alias)
        return ("\(dialect.table(className)) AS \(alias)", SQLFragment(" AND (") + compiled + ")")
    }

    /// The UPDATE of one object (`update`), for running alone (`SQLDatabase.writeStatement`) or in a transaction.
    /// `matching`: what the stored object must also match to be written (a class's pointer permissions), compiled into
    /// the statement's `WHERE` with `schemas` (the classes it may name); an object that does not match is not written,
    /// as one the ACL keeps out.
    public static func updateStatement(
        _ dialect: any SQLDialect, className: String, schema: ClassSchema, objectId: String, updatedAt: ParseDate, assignments: [Assignment],
        writePrincipals: [String]?, matching condition: QueryNode? = nil, schemas: [String: ClassSchema] = [:]
    ) throws(ParseError) -> ObjectUpdate {
        let (table, matching) = try conditioned(dialect, className: className, schema: schema, condition, schemas: schemas)
        var f = SQLFragment(unsafeSQL: "UPDATE \(table) SET \(dialect.quote("updatedAt")) = ")
        f.append(bind: .text(updatedAt.iso))
        var incremented: [String] = []
        for a in assignments {
            switch a {
            case .set(let name, let value):
                f.append(", \(dialect.quote(name)) = ")
                f.append(bind: StorageCodec.encode(value, as: schema.fields[name]))
            case .increment(let name, let amount):
                let c = dialect.quote(name)
                f.append(", \(c) = COALESCE(\(c), 0) + ")
                f.append(bind: StorageCodec.encodeScalar(amount))
                incremented.append(name)
            case .setACL(let acl):
                let perms = permissionValues(acl)
                f.append(", \(dialect.quote("_rperm")) = ")
                f.append(bind: perms[0])
                f.append(", \(dialect.quote("_wperm")) = ")
                f.append(bind: perms[1])
            }
        }
        f.append(" WHERE \(dialect.quote("objectId")) = ")
        f.append(bind: .text(objectId))
        f.append(writeFilter(dialect, writePrincipals))
        if let matching { f.append(matching) }
        f.append(" RETURNING \(dialect.quote("objectId"))")
        for name in incremented { f.append(", \(dialect.quote(name))") }
        return ObjectUpdate(statement: f, incremented: incremented)
    }

    /// An UPDATE of one object and how to read what it returns.
    public struct ObjectUpdate: Sendable {
        public let statement: SQLFragment
        /// The incremented columns, returned after `objectId`.
        let incremented: [String]

        /// The new values of the incremented fields, or nil when no row matched (missing or not writable).
        public func result(_ rows: [SQLRow]) -> [String: JSONValue]? {
            guard let row = rows.first else { return nil }
            var result: [String: JSONValue] = [:]
            for (i, name) in incremented.enumerated() { result[name] = StorageCodec.decode(row[i + 1], as: .number) }
            return result
        }
    }

    /// Reads one object inside the transaction (for read-modify-write of array and nested operations).
    public func fetch(className: String, schema: ClassSchema, objectId: String, writePrincipals: [String]?) async throws -> [String: JSONValue]? {
        let fields = schema.fields.filter { name, type in
            if ClassSchema.defaultFields[name] != nil { return false }
            if case .relation = type { return false }
            return true
        }.sorted { $0.key < $1.key }
        let cols = (["objectId", "createdAt", "updatedAt", "_rperm", "_wperm"] + fields.map(\.key)).map(dialect.quote).joined(separator: ", ")
        var f = SQLFragment(unsafeSQL: "SELECT \(cols) FROM \(dialect.table(className)) WHERE \(dialect.quote("objectId")) = ")
        f.append(bind: .text(objectId))
        f.append(writeFilter(writePrincipals))
        f.append(dialect.lockRowsClause)
        guard let row = try await db.query(f).first else { return nil }
        return SQLStore.decodeRow(row, fields: fields.map { ($0.key, $0.value) }, schema: schema)
    }

    /// Deletes one object if writable; false when nothing matched. `matching`: what the stored object must also match
    /// (a class's pointer permissions), compiled into the `WHERE` as `updateStatement` does.
    public func delete(
        className: String, schema: ClassSchema, objectId: String, writePrincipals: [String]?, matching condition: QueryNode? = nil,
        schemas: [String: ClassSchema] = [:]
    ) async throws -> Bool {
        let (table, matching) = try Self.conditioned(dialect, className: className, schema: schema, condition, schemas: schemas)
        var f = SQLFragment(unsafeSQL: "DELETE FROM \(table) WHERE \(dialect.quote("objectId")) = ")
        f.append(bind: .text(objectId))
        f.append(writeFilter(writePrincipals))
        if let matching { f.append(matching) }
        f.append(" RETURNING \(dialect.quote("objectId"))")
        return !(try await db.query(f)).isEmpty
    }

    public func deleteAll(className: String) async throws {
        _ = try await db.query(SQLFragment(unsafeSQL: "DELETE FROM \(dialect.table(className))"))
    }

    public func addRelation(owner: String, field: String, owningId: String, related: [String]) async throws {
        guard !related.isEmpty else { return }
        let join = dialect.table(WhereCompiler.joinTable(field: field, owner: owner))
        // The ids are one bound list, however many there are; `WHERE 1=1` keeps SQLite from reading ON CONFLICT as a join.
        let (from, value) = dialect.listSource(BoundList(related.map { .text($0) })!, alias: "l")
        var f = SQLFragment(unsafeSQL: "INSERT INTO \(join) (relatedId, owningId) SELECT DISTINCT ") + value + ", "
        f.append(bind: .text(owningId))
        f.append(SQLFragment(" FROM ") + from + " WHERE 1=1 ON CONFLICT DO NOTHING")
        _ = try await db.query(f)
    }

    public func removeRelation(owner: String, field: String, owningId: String, related: [String]) async throws {
        guard !related.isEmpty else { return }
        let join = dialect.table(WhereCompiler.joinTable(field: field, owner: owner))
        var f = SQLFragment(unsafeSQL: "DELETE FROM \(join) WHERE owningId = ")
        f.append(bind: .text(owningId))
        f.append(" AND ")
        f.append(dialect.isIn("relatedId", BoundList(related.map { .text($0) })!, alias: "l"))
        _ = try await db.query(f)
    }

    /// Deletes every member row of a relation of one object (the object is being deleted).
    public func deleteRelations(owner: String, field: String, owningId: String) async throws {
        let join = dialect.table(WhereCompiler.joinTable(field: field, owner: owner))
        _ = try await db.query(SQLFragment(unsafeSQL: "DELETE FROM \(join) WHERE owningId = ?", [.text(owningId)]))
    }

    /// Whether the table of a class holds at least one object, seen inside this transaction.
    public func hasObjects(className: String) async throws -> Bool {
        try await !db.query(SQLFragment(unsafeSQL: "SELECT 1 FROM \(dialect.table(className)) LIMIT 1")).isEmpty
    }

    /// ` AND (_wperm IS NULL OR it holds one of the principals)`, or nothing for the master key.
    func writeFilter(_ principals: [String]?) -> SQLFragment { Self.writeFilter(dialect, principals) }

    static func writeFilter(_ dialect: any SQLDialect, _ principals: [String]?) -> SQLFragment {
        guard let principals else { return "" }
        let col = SQLFragment(unsafeSQL: dialect.quote("_wperm"))
        let holds = dialect.holdsAny(col, principals, alias: "w")
        return " AND (" + col + " IS NULL OR " + holds + ")"
    }
}
