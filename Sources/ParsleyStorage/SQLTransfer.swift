import ParsleyCore

/// Statements an export runs on one read connection: the stored schemas, objects and relation pairs page by
/// page, all inside one snapshot (`snapshot(_:)`).
public struct SQLReader: Sendable {
    public let db: any SQLExecutor
    public let dialect: any SQLDialect

    public init(db: any SQLExecutor, dialect: any SQLDialect) {
        self.db = db
        self.dialect = dialect
    }

    /// Runs `body` inside one read-only transaction on this connection, so everything it reads belongs to one
    /// snapshot of the database (`SQLDialect.beginSnapshot`); committed when `body` returns, rolled back if it throws.
    public func snapshot<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await db.query(dialect.beginSnapshot)
        do {
            let result = try await body()
            try await db.query("COMMIT")
            return result
        } catch {
            _ = try? await db.query("ROLLBACK")
            throw error
        }
    }

    /// Every row of `_SCHEMA`: the class name and its schema as stored (JSON text), by class name.
    public func storedSchemas() async throws -> [(className: String, schema: String)] {
        let rows = try await db.query(SQLFragment(unsafeSQL: "SELECT className, schema FROM \(dialect.table("_SCHEMA")) ORDER BY className"))
        return rows.compactMap { row in
            guard case .text(let className)? = row.first, let schema = row[1].text else { return nil }
            return (className, schema)
        }
    }

    /// Up to `limit` rows of a class with the given columns, in objectId order, after objectId `after`
    /// (from the start when nil). `columns` must start with `objectId`.
    public func objects(of className: String, columns: [String], after: String?, limit: Int) async throws -> [SQLRow] {
        let q = dialect.quote
        var f = SQLFragment(unsafeSQL: "SELECT \(columns.map(q).joined(separator: ", ")) FROM \(dialect.table(className))")
        if let after {
            f.append(" WHERE \(q("objectId")) > ")
            f.append(bind: .text(after))
        }
        f.append(" ORDER BY \(q("objectId")) LIMIT \(Int64(limit))")
        return try await db.query(f)
    }

    /// Up to `limit` (owningId, relatedId) pairs of a relation's join table, in that order, after the pair
    /// `after` (from the start when nil).
    public func relationPairs(
        owner: String, field: String, after: (owningId: String, relatedId: String)?, limit: Int
    ) async throws -> [(owningId: String, relatedId: String)] {
        let join = dialect.table(WhereCompiler.joinTable(field: field, owner: owner))
        var f = SQLFragment(unsafeSQL: "SELECT owningId, relatedId FROM \(join)")
        if let (owning, related) = after {
            f.append(
                SQLFragment(unsafeSQL: " WHERE owningId > ? OR (owningId = ? AND relatedId > ?)", [.text(owning), .text(owning), .text(related)]))
        }
        f.append(" ORDER BY owningId, relatedId LIMIT \(Int64(limit))")
        return try await db.query(f).compactMap { row in
            guard let owning = row[0].text, let related = row[1].text else { return nil }
            return (owning, related)
        }
    }
}

extension SQLStore {
    /// A reader bound to a read connection (see `read(_:)`).
    public func reader(_ executor: any SQLExecutor) -> SQLReader { SQLReader(db: executor, dialect: dialect) }
}

extension SQLWriter {
    /// Inserts a row of a class as exported: `columns` (starting with `objectId`) with their stored `values`.
    /// With `overwrite`, a row with the same objectId is replaced in the listed columns instead of failing.
    public func insertExported(className: String, columns: [String], values: [SQLValue], overwrite: Bool) async throws {
        let q = dialect.quote
        let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
        var sql = "INSERT INTO \(dialect.table(className)) (\(columns.map(q).joined(separator: ", "))) VALUES (\(placeholders))"
        if overwrite {
            sql +=
                " ON CONFLICT (\(q("objectId"))) DO UPDATE SET " + columns.dropFirst().map { "\(q($0)) = excluded.\(q($0))" }.joined(separator: ", ")
        }
        _ = try await db.query(SQLFragment(unsafeSQL: sql, values))
    }

    /// Adds one pair to a relation's join table (nothing when it is there already).
    public func insertRelationPair(owner: String, field: String, owningId: String, relatedId: String) async throws {
        let join = dialect.table(WhereCompiler.joinTable(field: field, owner: owner))
        _ = try await db.query(
            SQLFragment(
                unsafeSQL: "INSERT INTO \(join) (relatedId, owningId) VALUES (?, ?) ON CONFLICT DO NOTHING", [.text(relatedId), .text(owningId)]))
    }
}
