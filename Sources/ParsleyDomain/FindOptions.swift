public import ParsleyCore

/// The parameters of a find or get, parsed from query-string or body values (`where`, `order`, `keys`, ...).
/// Values may arrive JSON-encoded (ParseSwift: `keys=["a"]`) or as comma lists (JS SDK, curl); both are read.
public struct FindOptions: Sendable {
    public var whereValue: JSONValue?
    public var order: [String] = []
    public var limit: Int?
    public var skip = 0
    public var keys: [String]?
    public var excludeKeys: [String] = []
    public var include: [String] = []
    public var count = false
    public var redirectClassNameForKey: String?
    /// `explain` was asked (any value JavaScript holds true: not `false`, `0`, `""` or null). Parsley answers the
    /// results, not a query plan; without the master key it is refused unless `allowPublicExplain`.
    public var explain = false

    static let ignored: Set<String> = [
        "readPreference", "includeReadPreference", "subqueryReadPreference", "hint", "comment", "_method", "where",
    ]

    public init() {}

    /// - Parameter isGet: a single-object get accepts only `keys`, `include`, `excludeKeys` and read preferences.
    public init(params: [String: JSONValue], isGet: Bool = false) throws(ParseError) {
        for (key, value) in params {
            if isGet {
                switch key {
                case "keys", "include", "excludeKeys", "readPreference", "includeReadPreference", "subqueryReadPreference", "includeAll":
                    break
                default: throw ParseError.invalidQuery("Improper encode of parameter")
                }
            }
            switch key {
            case "where":
                switch value {
                case .string(let text):
                    if text.isEmpty { break }
                    do { whereValue = try JSONParser.parse(text) } catch { throw ParseError.invalidJSON("Invalid JSON in where: \(error.message)") }
                case .object: whereValue = value
                case .null: break
                default: throw ParseError.invalidJSON("where must be a JSON object")
                }
            case "order": order = try Self.list(value, key)
            case "limit": limit = try Self.integer(value, key)
            case "skip":
                skip = try Self.integer(value, key)
                guard skip >= 0 else { throw ParseError.invalidQuery("Invalid value for skip") }
            case "keys": keys = try Self.list(value, key)
            case "excludeKeys": excludeKeys = try Self.list(value, key)
            case "include": include = try Self.list(value, key)
            case "includeAll": include.append("*")
            case "count":
                switch value {
                case .bool(let b): count = b
                case .int(let i): count = i != 0
                case .string(let s): count = s == "1" || s == "true"
                default: count = false
                }
            case "redirectClassNameForKey":
                guard case .string(let s) = value else { throw ParseError.invalidQuery("Invalid redirectClassNameForKey") }
                redirectClassNameForKey = s
            case "explain": explain = value.isTruthy  // query-string values arrive read as JSON, as Parse reads them
            default:
                if Self.ignored.contains(key) || key.hasPrefix("_") { continue }
                throw ParseError.invalidQuery("Invalid parameter for query: \(key)")
            }
        }
    }

    static func list(_ value: JSONValue, _ name: String) throws(ParseError) -> [String] {
        switch value {
        case .string(let s):
            if s.hasPrefix("["), case .array(let items)? = try? JSONParser.parse(s) { return try list(.array(items), name) }
            return s.splitASCII(UInt8(ascii: ",")).map { $0.trimmingCharacters() }.filter { !$0.isEmpty }
        case .array(let items):
            var out: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw ParseError.invalidQuery("Invalid value for \(name)") }
                out += s.splitASCII(UInt8(ascii: ",")).map { $0.trimmingCharacters() }.filter { !$0.isEmpty }
            }
            return out
        default:
            throw ParseError.invalidQuery("Invalid value for \(name)")
        }
    }

    static func integer(_ value: JSONValue, _ name: String) throws(ParseError) -> Int {
        switch value {
        case .int(let i):
            guard let v = Int(exactly: i) else { throw ParseError.invalidQuery("Invalid value for \(name)") }
            return v
        case .double(let d):
            guard d.rounded() == d, let v = Int(exactly: d) else { throw ParseError.invalidQuery("Invalid value for \(name)") }
            return v
        case .string(let s):
            guard let v = Int(s.trimmingCharacters()) else { throw ParseError.invalidQuery("Invalid value for \(name)") }
            return v
        default:
            throw ParseError.invalidQuery("Invalid value for \(name)")
        }
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        var s = self[...]
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}

extension String {
    func trimmingCharacters() -> String {
        guard utf8.first == UInt8(ascii: " ") || utf8.last == UInt8(ascii: " ") else { return self }
        return Substring(self).trimmingCharacters()
    }
}
