public import ParsleyCore

/// The `/config` parameters as stored: row "1" of `_GlobalConfig`, each part a JSON document.
public struct StoredConfig: Sendable, Equatable {
    /// The parameters (an object; nil when the stored text is not JSON).
    public var params: JSONValue?
    /// Per parameter, whether only the master key may read it (an object; nil when the stored text is not JSON).
    public var masterKeyOnly: JSONValue?

    public init(params: JSONValue?, masterKeyOnly: JSONValue?) {
        self.params = params
        self.masterKeyOnly = masterKeyOnly
    }

    static let tableName = "_GlobalConfig"

    static func createTable(_ dialect: any SQLDialect) -> SQLFragment {
        SQLFragment(
            unsafeSQL:
                "CREATE TABLE IF NOT EXISTS \(dialect.table(tableName)) (objectId TEXT PRIMARY KEY, params TEXT NOT NULL, masterKeyOnly TEXT NOT "
                + "NULL)"
        )
    }

    static func select(_ dialect: any SQLDialect) -> SQLFragment {
        SQLFragment(unsafeSQL: "SELECT params, masterKeyOnly FROM \(dialect.table(tableName)) WHERE objectId = '1'")
    }

    /// The stored row, nil when there is none.
    static func decode(_ rows: [SQLRow]) -> StoredConfig? {
        guard let row = rows.first, let params = row[0].text, let masterKeyOnly = row[1].text else { return nil }
        return StoredConfig(params: try? JSONParser.parse(params), masterKeyOnly: try? JSONParser.parse(masterKeyOnly))
    }
}

extension SQLStore {
    /// Creates `_GlobalConfig` if needed.
    public func createConfigTable() async throws {
        let statement = StoredConfig.createTable(dialect)
        let lock = dialect.tableCreationLock
        _ = try await database.write { db in
            if let lock { try await db.query(lock) }
            return try await db.query(statement)
        }
    }

    /// The stored parameters on a read connection; nil when none were ever saved.
    /// - Throws: `StoreError` (also when the table does not exist).
    public func config() async throws -> StoredConfig? {
        let statement = StoredConfig.select(dialect)
        return StoredConfig.decode(try await database.read { db in try await db.query(statement) })
    }
}

extension SQLWriter {
    /// Creates `_GlobalConfig` if needed, inside this transaction.
    public func createConfigTable() async throws {
        _ = try await db.query(StoredConfig.createTable(dialect))
    }

    /// The stored parameters, read inside this transaction; nil when none were ever saved.
    public func config() async throws -> StoredConfig? {
        StoredConfig.decode(try await db.query(StoredConfig.select(dialect)))
    }

    /// Replaces the stored parameters (inserting row "1" when there is none).
    public func saveConfig(params: JSONValue, masterKeyOnly: JSONValue) async throws {
        let table = dialect.table(StoredConfig.tableName)
        _ = try await db.query(
            SQLFragment(
                unsafeSQL:
                    "INSERT INTO \(table) (objectId, params, masterKeyOnly) VALUES ('1', ?, ?) ON CONFLICT (objectId) DO UPDATE SET params = "
                    + "excluded.params, masterKeyOnly = excluded.masterKeyOnly",
                [.text(JSONWriter.string(params)), .text(JSONWriter.string(masterKeyOnly))]))
    }
}

extension SQLReader {
    /// The stored parameters on this connection; nil when none were ever saved.
    /// - Throws: `StoreError` (also when the table does not exist).
    public func config() async throws -> StoredConfig? {
        StoredConfig.decode(try await db.query(StoredConfig.select(dialect)))
    }
}
