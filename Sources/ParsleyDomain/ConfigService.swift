public import ParsleyCore
public import ParsleyStorage

/// `/config`: app parameters in `_GlobalConfig` (row "1"), with per-parameter `masterKeyOnly` flags.
public struct ConfigService: Sendable {
    let store: SQLStore

    public init(store: SQLStore) { self.store = store }

    public func bootstrap() async throws {
        try await store.createConfigTable()
    }

    /// The stored parameters and flags as objects (empty when none are stored).
    static func decode(_ config: StoredConfig?) -> (params: [String: JSONValue], masterKeyOnly: [String: JSONValue]) {
        guard let config else { return ([:], [:]) }
        return (config.params?.objectValue ?? [:], config.masterKeyOnly?.objectValue ?? [:])
    }

    /// `GET /config`: master-only parameters are left out for other callers.
    public func get(auth: Auth) async throws -> [String: JSONValue] {
        var (params, masterOnly) = Self.decode(try await store.config())
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
    public func update(_ request: UpdateConfig) async throws {
        let (changes, flags) = (request.params, request.masterKeyOnly)
        for (key, value) in changes where value["__op"]?.stringValue != "Delete" {
            guard !key.isEmpty else { throw ParseError.invalidKeyName(key) }
            _ = try ParseValue.inferType(value)
        }
        try await store.database.write { [store] db in
            let writer = store.writer(db)
            var (params, masterOnly) = Self.decode(try await writer.config())
            for (key, value) in changes {
                if value["__op"]?.stringValue == "Delete" {
                    params[key] = nil
                    masterOnly[key] = nil
                } else {
                    params[key] = ParseValue.normalize(value)
                    masterOnly[key] = .bool(flags[key]?.boolValue ?? false)
                }
            }
            try await writer.saveConfig(params: .object(params), masterKeyOnly: .object(masterOnly))
        }
    }
}
