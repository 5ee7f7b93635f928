public import ParsleyCore

/// Parse Server 9.9's aggregate options `rawValues` and `rawFieldNames` (per request, or as the server's defaults
/// `query.aggregationRawValues` / `query.aggregationRawFieldNames`), over Parsley's SQL aggregates:
/// - `rawFieldNames`: the pipeline names fields as the database does in Parse Server (`_id`, `_created_at`,
///   `_updated_at`, `_p_<pointer>`), and results keep those names (`_id` for `objectId`, a pointer as
///   `_p_<field>: "<Class>$<id>"`) instead of Parse's.
/// - `rawValues`: dates are written and answered as Extended JSON `{"$date": "<iso>"}` instead of Parse's
///   `{"__type": "Date", "iso": …}` (a result's `createdAt`/`updatedAt` too).
/// Other internal names (`_hashed_password`, `_rperm`, …) are still refused (105), raw or not.
public struct AggregateRaw: Sendable, Equatable {
    public var values = false
    public var fieldNames = false

    public init(values: Bool = false, fieldNames: Bool = false) {
        self.values = values
        self.fieldNames = fieldNames
    }

    /// The request's `rawValues` / `rawFieldNames` (`true`, `"true"`, `1`), else the server's defaults.
    public init(_ params: [String: JSONValue], defaults: AggregateRaw) {
        func flag(_ key: String) -> Bool? {
            switch params[key] {
            case .bool(let b)?: return b
            case .string(let s)?: return s == "true" || s == "1"
            case .int(let n)?: return n != 0
            default: return nil
            }
        }
        self.values = flag("rawValues") ?? defaults.values
        self.fieldNames = flag("rawFieldNames") ?? defaults.fieldNames
    }

    static let fromRaw = ["_id": "objectId", "_created_at": "createdAt", "_updated_at": "updatedAt"]
    static let toRaw = ["objectId": "_id", "createdAt": "_created_at", "updatedAt": "_updated_at"]

    /// A raw field name as Parse names it (`_p_owner` → `owner`).
    static func parseName(_ name: String) -> String {
        if let mapped = fromRaw[name] { return mapped }
        if name.hasPrefix("_p_"), name.count > 3 { return String(name.dropFirst(3)) }
        return name
    }

    /// The pipeline, `where` or `distinct` as Parsley reads them.
    public func input(_ value: JSONValue) -> JSONValue {
        guard values || fieldNames else { return value }
        switch value {
        case .object(let o):
            if values, o.count == 1, case .string(let iso)? = o["$date"] { return ["__type": "Date", "iso": .string(iso)] }
            var out: [String: JSONValue] = [:]
            for (key, item) in o { out[fieldNames ? Self.parseName(key) : key] = input(item) }
            return .object(out)
        case .array(let items): return .array(items.map(input))
        case .string(let s) where fieldNames && s.hasPrefix("$_"):
            return .string("$" + Self.parseName(String(s.dropFirst())))
        default: return value
        }
    }

    /// A distinct's field name as Parsley reads it.
    public func inputField(_ name: String) -> String { fieldNames ? Self.parseName(name) : name }

    /// One result as the options ask.
    public func output(_ value: JSONValue) -> JSONValue {
        guard values || fieldNames else { return value }
        // A distinct answers values: a Date value is one, not a row.
        guard case .object(let o) = value, o["__type"] == nil else { return rawValue(value) }
        var out: [String: JSONValue] = [:]
        for (key, item) in o {
            var item = item
            if values, ["createdAt", "updatedAt"].contains(key), case .string(let iso) = item { item = ["$date": .string(iso)] }
            if fieldNames, case .object(let p) = item, case .string("Pointer")? = p["__type"], case .string(let c)? = p["className"],
                case .string(let id)? = p["objectId"]
            {
                out["_p_" + key] = .string(c + "$" + id)
                continue
            }
            out[fieldNames ? Self.toRaw[key] ?? key : key] = rawValue(item)
        }
        return .object(out)
    }

    /// Dates as `{"$date": …}` at any depth (with `values`).
    func rawValue(_ value: JSONValue) -> JSONValue {
        guard values else { return value }
        switch value {
        case .object(let o):
            if case .string("Date")? = o["__type"], case .string(let iso)? = o["iso"] { return ["$date": .string(iso)] }
            return .object(o.mapValues(rawValue))
        case .array(let items): return .array(items.map(rawValue))
        default: return value
        }
    }
}
