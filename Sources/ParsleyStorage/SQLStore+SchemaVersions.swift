public import ParsleyCore

extension SQLStore {
    /// The stored schema of one class and its version, read outside any transaction (no schema lock): what another
    /// node may have changed since this one cached it.
    public func storedSchema(_ className: String) async throws -> (ClassSchema, Int64)? {
        var f = SQLFragment(unsafeSQL: "SELECT schema, version FROM \(dialect.table("_SCHEMA")) WHERE className = ")
        f.append(bind: .text(className))
        let query = f
        let rows = try await database.read { db in try await db.query(query) }
        guard let row = rows.first, case .text(let text) = row[0], let json = try? JSONParser.parse(text),
            let schema = ClassSchema(json: json), case .integer(let version) = row[1]
        else { return nil }
        return (schema, version)
    }

    /// The stored version of every class.
    public func schemaVersions() async throws -> [String: Int64] {
        let query = SQLFragment(unsafeSQL: "SELECT className, version FROM \(dialect.table("_SCHEMA"))")
        let rows = try await database.read { db in try await db.query(query) }
        var versions: [String: Int64] = [:]
        for row in rows {
            guard case .text(let name) = row[0], case .integer(let version) = row[1] else { continue }
            versions[name] = version
        }
        return versions
    }
}
