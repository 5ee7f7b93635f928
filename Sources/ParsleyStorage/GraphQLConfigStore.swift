public import ParsleyCore

/// The GraphQL API's configuration (`/graphql-config`) as stored: row "1" of `_GraphQLConfig`, one JSON document. The
/// table is internal: it is in no schema and no class route reaches it.
enum StoredGraphQLConfig {
    static let tableName = "_GraphQLConfig"

    static func createTable(_ dialect: any SQLDialect) -> SQLFragment {
        SQLFragment(unsafeSQL: "CREATE TABLE IF NOT EXISTS \(dialect.table(tableName)) (objectId TEXT PRIMARY KEY, config TEXT NOT NULL)")
    }

    static func select(_ dialect: any SQLDialect) -> SQLFragment {
        SQLFragment(unsafeSQL: "SELECT config FROM \(dialect.table(tableName)) WHERE objectId = '1'")
    }

    /// The stored object; `{}` when there is none (or the text is not a JSON object).
    static func decode(_ rows: [SQLRow]) -> [String: JSONValue] {
        guard let text = rows.first?[0].text, case .object(let config)? = try? JSONParser.parse(text) else { return [:] }
        return config
    }
}

extension SQLStore {
    /// Creates `_GraphQLConfig` if needed.
    public func createGraphQLConfigTable() async throws {
        let statement = StoredGraphQLConfig.createTable(dialect)
        let lock = dialect.tableCreationLock
        _ = try await database.write { db in
            if let lock { try await db.query(lock) }
            return try await db.query(statement)
        }
    }

    /// The stored configuration on a read connection (`{}` when none was saved).
    public func graphQLConfig() async throws -> [String: JSONValue] {
        let statement = StoredGraphQLConfig.select(dialect)
        return StoredGraphQLConfig.decode(try await database.read { db in try await db.query(statement) })
    }
}

extension SQLWriter {
    /// The stored configuration, read inside this transaction (`{}` when none was saved).
    public func graphQLConfig() async throws -> [String: JSONValue] {
        StoredGraphQLConfig.decode(try await db.query(StoredGraphQLConfig.select(dialect)))
    }

    /// Replaces the stored configuration (inserting row "1" when there is none).
    public func saveGraphQLConfig(_ config: [String: JSONValue]) async throws {
        let table = dialect.table(StoredGraphQLConfig.tableName)
        _ = try await db.query(
            SQLFragment(
                unsafeSQL: "INSERT INTO \(table) (objectId, config) VALUES ('1', ?) ON CONFLICT (objectId) DO UPDATE SET config = excluded.config",
                [.text(JSONWriter.string(.object(config)))]))
    }
}
