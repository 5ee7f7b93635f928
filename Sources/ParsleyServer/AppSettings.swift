import Foundation
import Logging
import ParsleyCore
import ParsleyDomain

/// Parse Server options about the app as a whole that an existing config.json carries: `schema` (class definitions
/// applied at start), `maintenanceKey` with `maintenanceKeyIps`, and `logLevels` (cloud code's log lines).
extension ServerSettings {
    static func applyAppSettings(to options: inout ParseServerOptions, values: OptionValues, logger: Logger) throws {
        options.schema = try definedSchemas(values, logger: logger)
        options.security.maintenanceKey = values.string("maintenanceKey")
        if let key = options.security.maintenanceKey {
            guard !key.isEmpty, key != options.masterKey else {
                throw Invalid(description: "\(OptionTable.spec("maintenanceKey").shownName) must not be empty and must differ from the master key")
            }
        }
        if let ips = try ipList(values, "maintenanceKeyIps") { options.security.maintenanceKeyIps = ips }
        options.cloudLogLevels = try cloudLogLevels(values)
    }

    /// Parse Server's `schema`: `{definitions, strict, deleteExtraFields, recreateModifiedFields, lockSchemas}` (JSON, or a
    /// path to a JSON file); `beforeMigration`/`afterMigration` are JavaScript functions and are ignored with a warning.
    static func definedSchemas(_ values: OptionValues, logger: Logger) throws -> DefinedSchemas? {
        guard let (json, raw) = try values.jsonOrFile("schema") else { return nil }
        let name = raw.name
        guard case .object(let o) = json else { throw Invalid(description: "\(name) must be a JSON object, not \(OptionValues.kind(json))") }
        let known: Set<String> = [
            "definitions", "strict", "deleteExtraFields", "recreateModifiedFields", "lockSchemas", "beforeMigration", "afterMigration",
        ]
        if let unknown = o.keys.filter({ !known.contains($0) }).sorted().first {
            throw Invalid(description: "\(name): unknown key \"\(unknown)\" (\(known.sorted().joined(separator: ", ")))")
        }
        var defined = DefinedSchemas(definitions: [])
        if let definitions = o["definitions"], !definitions.isNull {
            guard case .array(let list) = definitions else { throw Invalid(description: "\(name): definitions must be an array.") }
            defined.definitions = list
        }
        for key in ["strict", "deleteExtraFields", "recreateModifiedFields", "lockSchemas"] {
            guard let value = o[key], !value.isNull else { continue }
            guard let on = value.boolValue else { throw Invalid(description: "\(name): \(key) must be a boolean.") }
            switch key {
            case "strict": defined.strict = on
            case "deleteExtraFields": defined.deleteExtraFields = on
            case "recreateModifiedFields": defined.recreateModifiedFields = on
            default: defined.lockSchemas = on
            }
        }
        for key in ["beforeMigration", "afterMigration"] where o[key] != nil && o[key] != .null {
            logger.warning("\(name): \(key) is ignored (\(OptionTable.noCloudCode))")
        }
        // Checked now (names, types, targets), so a mistake stops the start before anything listens.
        do { _ = try defined.plan(current: [:]) } catch { throw Invalid(description: error.description) }
        return defined
    }

    /// Parse Server's `logLevels`: `{triggerAfter, triggerBeforeSuccess, triggerBeforeError, cloudFunctionSuccess,
    /// cloudFunctionError}`, each a level or `silent` (the line is not logged).
    static func cloudLogLevels(_ values: OptionValues) throws -> CloudLogLevels {
        var levels = CloudLogLevels()
        var given: [(String, String, String)] = []
        if let (json, name) = try values.object("logLevels") {
            for (key, value) in json.sorted(by: { $0.key < $1.key }) {
                guard CloudLogLevels.keys.contains(key) else {
                    throw Invalid(description: "\(name): unknown key \"\(key)\" (\(CloudLogLevels.keys.joined(separator: ", ")))")
                }
                guard let text = value.stringValue else {
                    throw Invalid(description: "\(name): \(key) must be a level name, not \(OptionValues.kind(value))")
                }
                given.append((key, text, name))
            }
        }
        for key in CloudLogLevels.keys {
            if let (text, name) = values.part("logLevels", key) { given.append((key, text, name)) }
        }
        let parseServerLevels: [String: Logger.Level] = ["warn": .warning, "verbose": .debug, "silly": .trace]
        for (key, text, name) in given {
            let lower = text.lowercased()
            if lower == "silent" {
                levels[key] = nil
            } else if let level = Logger.Level(rawValue: lower) ?? parseServerLevels[lower] {
                levels[key] = level
            } else {
                throw Invalid(description: "\(name): \(key) must be error, warn, info, verbose, debug, silly or silent (or trace…critical)")
            }
        }
        return levels
    }
}
