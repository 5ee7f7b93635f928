public import ParsleyCore
public import ParsleyStorage

/// `/config`: app parameters in `_GlobalConfig` (row "1"), with per-parameter `masterKeyOnly` flags.
public struct ConfigService: Sendable {
    let store: SQLStore

    public init(store: SQLStore) { self.store = store }

    var table: String { store.dialect.quote("_GlobalConfig") }

    public func bootstrap() async throws {
        let table = self.table
        try await store.database.write { db in
            try await db.query(SQLFragment("CREATE TABLE IF NOT EXISTS \(table) (objectId TEXT PRIMARY KEY, params TEXT NOT NULL, masterKeyOnly TEXT NOT NULL)"))
        }
    }

    static func decode(_ rows: [SQLRow]) -> (params: [String: JSONValue], masterKeyOnly: [String: JSONValue]) {
        guard let row = rows.first, case .text(let p) = row[0], case .text(let m) = row[1] else { return ([:], [:]) }
        return ((try? JSONParser.parse(p))?.objectValue ?? [:], (try? JSONParser.parse(m))?.objectValue ?? [:])
    }

    /// `GET /config`: master-only parameters are left out for other callers.
    public func get(auth: Auth) async throws -> [String: JSONValue] {
        let table = self.table
        let rows = try await store.database.read { db in
            try await db.query(SQLFragment("SELECT params, masterKeyOnly FROM \(table) WHERE objectId = '1'"))
        }
        var (params, masterOnly) = Self.decode(rows)
        if !auth.isMaster {
            for (key, flag) in masterOnly where flag == .bool(true) {
                params[key] = nil
                masterOnly[key] = nil
            }
        }
        var body: [String: JSONValue] = ["params": .object(params)]
        if !masterOnly.isEmpty { body["masterKeyOnly"] = .object(masterOnly) }
        return body
    }

    /// `PUT /config` (master key): merges parameters; `{"__op":"Delete"}` removes one.
    public func update(_ body: JSONValue) async throws {
        guard case .object(let changes)? = body["params"] else { throw ParseError.invalidJSON("params must be an object") }
        let flags = body["masterKeyOnly"]?.objectValue ?? [:]
        for (key, value) in changes where value["__op"]?.stringValue != "Delete" {
            guard !key.isEmpty else { throw ParseError.invalidKeyName(key) }
            _ = try ParseValue.inferType(value)
        }
        let table = self.table
        try await store.database.write { db in
            var (params, masterOnly) = Self.decode(try await db.query(SQLFragment("SELECT params, masterKeyOnly FROM \(table) WHERE objectId = '1'")))
            for (key, value) in changes {
                if value["__op"]?.stringValue == "Delete" {
                    params[key] = nil
                    masterOnly[key] = nil
                } else {
                    params[key] = ParseValue.normalize(value)
                    masterOnly[key] = .bool(flags[key]?.boolValue ?? false)
                }
            }
            try await db.query(
                SQLFragment(
                    "INSERT INTO \(table) (objectId, params, masterKeyOnly) VALUES ('1', ?, ?) ON CONFLICT (objectId) DO UPDATE SET params = excluded.params, masterKeyOnly = excluded.masterKeyOnly",
                    [.text(JSONWriter.string(.object(params))), .text(JSONWriter.string(.object(masterOnly)))]))
        }
    }
}
