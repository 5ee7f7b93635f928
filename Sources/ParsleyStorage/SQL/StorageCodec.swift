public import ParsleyCore

/// Converts Parse values to the column form Parsley stores and back. Stored forms are chosen to be
/// queryable: dates as fixed-width ISO text (sortable), pointers as the bare objectId (comparable, indexable),
/// booleans as 0/1, numbers as integer or real, structured values as canonical JSON text.
public enum StorageCodec {
    /// Column value for a top-level field of `type`.
    public static func encode(_ value: JSONValue, as type: FieldType?) -> SQLValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .int(let i): return .integer(i)
        case .double(let d): return .real(d)
        case .string(let s):
            if type == .date, let d = ParseDate(iso: s) { return .text(d.iso) }
            return .text(s)
        case .array: return .json(JSONWriter.string(value))
        case .object(let o):
            switch type {
            case .date?:
                if let iso = o["iso"]?.stringValue, let d = ParseDate(iso: iso) { return .text(d.iso) }
            case .pointer?:
                if let p = Pointer(json: value) { return .text(p.objectId) }
            case .file?:
                if let name = o["name"]?.stringValue { return .text(name) }
            default: break
            }
            return .json(JSONWriter.string(value))
        }
    }

    /// Whether a column of `type` can hold `value` as `encode` produced it: comparisons between other pairs
    /// can never be true (and a typed database would refuse them).
    public static func fits(_ value: SQLValue, _ type: FieldType) -> Bool {
        switch (value, type) {
        case (.null, _): return true
        case (.integer, .number), (.real, .number), (.integer, .boolean): return true
        case (.text, .string), (.text, .date), (.text, .pointer), (.text, .file): return true
        case (.json, .object), (.json, .array), (.json, .geoPoint), (.json, .polygon), (.json, .bytes), (.json, .acl): return true
        default: return false
        }
    }

    /// Scalar form of a value for comparing with a JSON-extracted scalar (dot paths, array elements).
    public static func encodeScalar(_ value: JSONValue) -> SQLValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .int(let i): return .integer(i)
        case .double(let d): return .real(d)
        case .string(let s): return .text(s)
        case .array, .object: return .json(JSONWriter.string(value))
        }
    }

    /// The Parse value of a column holding a field of `type`.
    public static func decode(_ value: SQLValue, as type: FieldType) -> JSONValue {
        switch value {
        case .null: return .null
        case .integer(let i):
            switch type {
            case .boolean: return .bool(i != 0)
            default: return .int(i)
            }
        case .real(let d):
            if type == .boolean { return .bool(d != 0) }
            return .double(d)
        case .text(let s), .json(let s):
            switch type {
            case .string: return .string(s)
            case .date: return ["__type": "Date", "iso": .string(s)]
            case .pointer(let target): return ["__type": "Pointer", "className": .string(target), "objectId": .string(s)]
            case .file: return ["__type": "File", "name": .string(s)]
            case .number, .boolean: return .string(s)
            default: return (try? JSONParser.parse(s)) ?? .string(s)
            }
        }
    }
}
