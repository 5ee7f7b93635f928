import Foundation
import NIOConcurrencyHelpers
import ParsleyCore

/// The settings of one start: flags, then the environment, then the config file, each found through
/// `OptionTable` (so a key, its variables and its flags always mean the same setting). Records which settings
/// were asked for, so a test can check that every supported option is read.
final class OptionValues: Sendable {
    /// Flag values by option key (from `OptionFlags.rewrite`).
    let flags: [String: String]
    let environment: [String: String]
    /// Config-file values by option key (aliases already resolved).
    let file: [String: JSONValue]
    /// Config-file keys that are no option at all.
    let unknownFileKeys: [String]
    private let asked = NIOLockedValueBox<Set<String>>([])

    init(
        flags: [String: String] = [:], environment: [String: String] = ProcessInfo.processInfo.environment,
        file: [String: JSONValue] = [:], unknownFileKeys: [String] = []
    ) {
        self.flags = flags
        self.environment = environment
        self.file = file
        self.unknownFileKeys = unknownFileKeys
    }

    /// Keys asked for so far.
    var consulted: Set<String> { asked.withLockedValue { $0 } }

    /// One setting's value and where it came from.
    struct Raw {
        var text: String
        /// The value as JSON: the config file's own value, or the text parsed as JSON (else the text as a string).
        var json: JSONValue
        /// `--appId`, `PARSE_SERVER_APPLICATION_ID` or `config file key appId`.
        var source: String
        /// What an error message names: the variable (and the key and source when that is not the variable).
        var name: String
    }

    /// A non-empty environment variable.
    func env(_ name: String) -> String? {
        guard let v = environment[name], !v.isEmpty else { return nil }
        return v
    }

    /// The value of `key` without recording the question.
    func lookup(_ spec: OptionSpec) -> Raw? {
        let primary = spec.env.first ?? spec.key
        if let text = flags[spec.key] {
            return Raw(text: text, json: Self.json(text), source: "--\(spec.key)", name: "\(primary) (--\(spec.key))")
        }
        for name in spec.env {
            if let text = env(name) {
                return Raw(text: text, json: Self.json(text), source: name, name: name == primary ? "\(name) (\(spec.key))" : name)
            }
        }
        if let value = file[spec.key], value != .null {
            return Raw(text: Self.text(value), json: value, source: "config file key \(spec.key)", name: "\(primary) (config file key \(spec.key))")
        }
        return nil
    }

    func raw(_ key: String) -> Raw? {
        let spec = OptionTable.spec(key)
        asked.withLockedValue { _ = $0.insert(spec.key) }
        return lookup(spec)
    }

    /// A JSON option that may also be given as the path of a JSON file (`auth`, `push`): the value, read from the
    /// file when it is a path; nil when the option is not set. - Throws: naming the option, never showing the
    /// value (a mistyped JSON option, secrets and all, would otherwise be printed as the "path").
    func jsonOrFile(_ key: String) throws -> (value: JSONValue, raw: Raw)? {
        guard let raw = raw(key) else { return nil }
        var option = raw.source.hasPrefix("config file") ? raw.json : (try? JSONParser.parse(raw.text)) ?? .string(raw.text)
        if case .string(let path) = option {
            guard let data = FileManager.default.contents(atPath: path), let value = try? JSONParser.parse(String(decoding: data, as: UTF8.self))
            else { throw ServerSettings.Invalid(description: "\(OptionTable.spec(key).shownName) must be JSON or the path of a readable JSON file") }
            option = value
        }
        return (option, raw)
    }

    static func json(_ text: String) -> JSONValue {
        (try? JSONParser.parse(text)) ?? .string(text)
    }

    static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let s): return s
        case .null: return ""
        case .bool(let b): return b ? "true" : "false"
        case .object, .array: return JSONWriter.string(value)
        case .int(let n): return String(n)
        case .double(let d): return d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        }
    }

    // MARK: Typed values (errors name the variable and what is wrong, never the value: it may be a key, a password
    // or a JSON option with credentials in it)

    func string(_ key: String) -> String? { raw(key)?.text }

    func integer(_ key: String, default value: Int?) throws -> Int? {
        guard let raw = raw(key) else { return value }
        return try Self.integer(raw.text, name: raw.name)
    }

    static func integer(_ text: String, name: String) throws -> Int {
        guard let v = Int(text.trimmingCharacters(in: .whitespaces)), v >= 0 else {
            throw ServerSettings.Invalid(description: "\(name) must be a whole number (0 or more)")
        }
        return v
    }

    func bool(_ key: String, default value: Bool) throws -> Bool {
        guard let raw = raw(key) else { return value }
        return try Self.bool(raw.text, name: raw.name)
    }

    static func bool(_ text: String, name: String) throws -> Bool {
        switch text.lowercased().trimmingCharacters(in: .whitespaces) {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw ServerSettings.Invalid(description: "\(name) must be true or false (or 1/0, yes/no)")
        }
    }

    /// A JSON value: the config file's own, or the text parsed. - Throws: when the text is not JSON.
    func json(_ key: String) throws -> (JSONValue, name: String)? {
        guard let raw = raw(key) else { return nil }
        if raw.source.hasPrefix("config file") { return (raw.json, raw.name) }
        guard let value = try? JSONParser.parse(raw.text) else {
            throw ServerSettings.Invalid(description: "\(raw.name) must be JSON and is not")
        }
        return (value, raw.name)
    }

    /// A JSON object option. - Throws: when it is something else.
    func object(_ key: String) throws -> ([String: JSONValue], name: String)? {
        guard let (value, name) = try json(key) else { return nil }
        guard case .object(let o) = value else { throw ServerSettings.Invalid(description: "\(name) must be a JSON object, not \(Self.kind(value))") }
        return (o, name)
    }

    /// What a JSON value is, for messages that must not show it: `an array`, `a string`.
    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "true or false"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The variable of a part of a JSON option (`passwordPolicy.validatorPattern`) and its value.
    func part(_ key: String, _ part: String) -> (String, name: String)? {
        let spec = OptionTable.spec(key)
        asked.withLockedValue { _ = $0.insert(spec.key) }
        guard let names = spec.parts.first(where: { $0.0 == part })?.1 else { preconditionFailure("no part \(part) of \(key)") }
        for name in names {
            if let text = env(name) { return (text, name) }
        }
        return nil
    }

    // MARK: Options Parsley does not implement

    /// Warnings for ignored options that are set (to something Parsley does not do anyway), for unknown
    /// config-file keys; throws naming every refused option that is set.
    func checkUnsupported() throws -> [String] {
        var warnings: [String] = []
        var refusals: [String] = []
        for spec in OptionTable.all where spec.status != .supported {
            guard let raw = lookup(spec), !spec.harmless(raw.json) else { continue }
            switch spec.status {
            case .ignored: warnings.append("Parse Server option \(spec.key) (\(raw.source)) is not supported and is ignored: \(spec.note)")
            case .refused: refusals.append("\(spec.key) (\(raw.source)): \(spec.note)")
            case .supported: break
            }
        }
        if !refusals.isEmpty {
            throw ServerSettings.Invalid(
                description: "refusing to start: Parse Server option\(refusals.count == 1 ? "" : "s") not supported by Parsley: "
                    + refusals.joined(separator: "; "))
        }
        if !unknownFileKeys.isEmpty { warnings.append("config file: ignoring unknown options \(unknownFileKeys.joined(separator: ", "))") }
        return warnings
    }
}

/// Parse Server's flags (`--appId x`, `--enforcePrivateUsers`, `--maxLimit=50`) and Parsley's kebab-case ones
/// (`--app-id x`): every flag of `OptionTable` is turned into `--parse-option=<key>=<value>` before the
/// argument parser runs, so the table, not a second list of properties, defines them.
enum OptionFlags {
    /// The hidden option the flags become.
    static let carrier = "--parse-option"
    /// Subcommands with flags of their own (the table's flags apply to serve, export, import and schema apply).
    static let ownFlags: Set<String> = ["backup", "help"]

    static func rewrite(_ arguments: [String]) throws -> [String] {
        if let first = arguments.first, ownFlags.contains(first) { return arguments }
        var out: [String] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            if argument == "--" {
                out += arguments[i...]
                break
            }
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard argument.hasPrefix("--"), let spec = OptionTable.byFlag[String(parts[0])] else {
                out.append(argument)
                i += 1
                continue
            }
            var value: String
            if parts.count == 2 {
                value = String(parts[1])
            } else if spec.kind == .bool {
                // `--enforcePrivateUsers` alone means true; a following true/false/1/0/yes/no is its value.
                value = "true"
                if i + 1 < arguments.count, ["true", "false", "1", "0", "yes", "no"].contains(arguments[i + 1].lowercased()) {
                    value = arguments[i + 1]
                    i += 1
                }
            } else {
                // A flag as the value (`--clientKey --masterKey s3cret`) means the value was left out; taking the flag
                // would leave `s3cret` as the config file's path, printed when it cannot be read.
                guard i + 1 < arguments.count, OptionTable.byFlag[arguments[i + 1].split(separator: "=").first.map(String.init) ?? ""] == nil else {
                    throw ServerSettings.Invalid(description: "\(parts[0]) needs a value")
                }
                value = arguments[i + 1]
                i += 1
            }
            out.append("\(carrier)=\(spec.key)=\(value)")
            i += 1
        }
        return out
    }

    /// `key=value` items of the carrier option → values by key (the last one wins).
    static func parse(_ items: [String]) throws -> [String: String] {
        var flags: [String: String] = [:]
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let spec = OptionTable.byKey[String(parts[0])] else {
                throw ServerSettings.Invalid(description: "\(carrier) takes <option>=<value> with an option of parsley serve --help")
            }
            flags[spec.key] = String(parts[1])
        }
        return flags
    }
}
