import GraphQL
import OrderedCollections
import ParsleyCore

/// Between the GraphQL library's `Map` and Parse's `JSONValue`, and `Map` as JSON text in its own key order (the
/// order of the query's selections, as the GraphQL spec asks for responses).
enum MapJSON {
    static func json(_ map: Map) -> JSONValue {
        switch map {
        case .undefined, .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return number(n)
        case .string(let s): return .string(s)
        case .array(let items): return .array(items.map(json))
        case .dictionary(let fields):
            var out: [String: JSONValue] = [:]
            for (key, value) in fields where value != .undefined { out[key] = json(value) }
            return .object(out)
        }
    }

    /// A whole number as an integer (Parse's `Number` is GraphQL's `Float`, and `10` must not print as `10.0`).
    static func number(_ n: Number) -> JSONValue {
        switch n.storageType {
        case .bool: return .bool(n.boolValue)
        case .int: return .int(Int64(n.intValue))
        default:
            let d = n.doubleValue
            if d.isFinite, d.rounded() == d, abs(d) < 9_007_199_254_740_992 { return .int(Int64(d)) }
            return .double(d)
        }
    }

    static func map(_ json: JSONValue) -> Map {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .number(Number(i))
        case .double(let d): return .number(Number(d))
        case .string(let s): return .string(s)
        case .array(let items): return .array(items.map(map))
        case .object(let fields):
            var out = OrderedDictionary<String, Map>()
            for key in fields.keys.sorted() { out[key] = map(fields[key]!) }
            return .dictionary(out)
        }
    }

    /// JSON text of `map`, keeping its key order.
    static func write(_ map: Map, into out: inout String) {
        switch map {
        case .dictionary(let fields):
            out += "{"
            var first = true
            for (key, value) in fields where value != .undefined {
                if !first { out += "," }
                first = false
                out += JSONWriter.string(.string(key))
                out += ":"
                write(value, into: &out)
            }
            out += "}"
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                write(item, into: &out)
            }
            out += "]"
        default:
            out += JSONWriter.string(json(map))
        }
    }
}
