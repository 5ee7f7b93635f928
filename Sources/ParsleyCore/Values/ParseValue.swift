/// Interpretation of JSON values as Parse values: type inference for the schema, validation of `__type` forms,
/// and normalisation into the form Parsley stores.
public enum ParseValue {
    /// The schema type a value implies, or nil for `null` (which never adds a field).
    /// - Throws: 111 for a malformed `__type` value, 121 for nested keys with `$` or `.`.
    public static func inferType(_ value: JSONValue) throws(ParseError) -> FieldType? {
        switch value {
        case .null: return nil
        case .bool: return .boolean
        case .int, .double: return .number
        case .string: return .string
        case .array(let items):
            for item in items { try checkNested(item) }
            return .array
        case .object(let o):
            guard let type = o["__type"] else {
                try checkNested(value)
                return .object
            }
            guard case .string(let t) = type else { throw invalid("Object") }
            switch t {
            case "Pointer", "Object":
                guard let p = Pointer(json: value), !p.className.isEmpty else { throw invalid("Pointer") }
                return .pointer(p.className)
            case "Relation":
                guard let c = o["className"]?.stringValue else { throw invalid("Relation") }
                return .relation(c)
            case "Date":
                guard let iso = o["iso"]?.stringValue, ParseDate(iso: iso) != nil else { throw invalid("Date") }
                return .date
            case "File":
                guard let name = o["name"]?.stringValue, !name.isEmpty else { throw invalid("File") }
                return .file
            case "GeoPoint":
                guard GeoPoint(json: value) != nil else {
                    throw ParseError(.invalidJSON, "GeoPoint should be an object with latitude in [-90, 90] and longitude in [-180, 180]")
                }
                return .geoPoint
            case "Polygon":
                guard polygonPoints(value) != nil else { throw invalid("Polygon") }
                return .polygon
            case "Bytes":
                guard o["base64"]?.stringValue != nil else { throw invalid("Bytes") }
                return .bytes
            default:
                throw ParseError(.incorrectType, "This is not a valid \(t)")
            }
        }
    }

    static func invalid(_ type: String) -> ParseError { ParseError(.incorrectType, "This is not a valid \(type)") }

    /// Rejects `$` and `.` in the keys of plain nested objects (typed values are exempt).
    static func checkNested(_ value: JSONValue) throws(ParseError) {
        switch value {
        case .object(let o):
            if o["__type"] != nil { return }
            for (k, v) in o {
                guard Naming.isValidNestedKey(k) else {
                    throw ParseError(.invalidNestedKey, "Nested keys should not contain the '$' or '.' characters")
                }
                try checkNested(v)
            }
        case .array(let a):
            for v in a { try checkNested(v) }
        default: return
        }
    }

    /// `[[lat, lng], ...]` of a Polygon value, at least 3 points, each in range.
    public static func polygonPoints(_ value: JSONValue) -> [(Double, Double)]? {
        guard let coords = value["coordinates"]?.arrayValue, coords.count >= 3 else { return nil }
        var points: [(Double, Double)] = []
        for c in coords {
            guard let pair = c.arrayValue, pair.count == 2, let lat = pair[0].numberValue, let lng = pair[1].numberValue,
                (-90...90).contains(lat), (-180...180).contains(lng)
            else { return nil }
            points.append((lat, lng))
        }
        return points
    }

    /// Normalises a value for storage: expanded objects become pointers, dates get the canonical ISO form,
    /// GeoPoint numbers become doubles, polygons are closed, files keep `name` only.
    public static func normalize(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(let items): return .array(items.map(normalize))
        case .object(let o):
            guard let t = o["__type"]?.stringValue else { return .object(o.mapValues(normalize)) }
            switch t {
            case "Pointer", "Object":
                if let p = Pointer(json: value) { return p.json }
                return value
            case "Date":
                if let iso = o["iso"]?.stringValue, let d = ParseDate(iso: iso) { return ["__type": "Date", "iso": .string(d.iso)] }
                return value
            case "GeoPoint":
                if let g = GeoPoint(json: value) { return g.json }
                return value
            case "File":
                if let name = o["name"]?.stringValue { return ["__type": "File", "name": .string(name)] }
                return value
            case "Polygon":
                guard var points = polygonPoints(value) else { return value }
                if let first = points.first, let last = points.last, first != last { points.append(first) }
                return ["__type": "Polygon", "coordinates": .array(points.map { [.double($0.0), .double($0.1)] })]
            default: return value
            }
        default: return value
        }
    }

    /// Whether a value is acceptable for a field of `type` (null always is).
    public static func matches(_ value: JSONValue, _ type: FieldType) throws(ParseError) -> Bool {
        guard let inferred = try inferType(value) else { return true }
        return inferred == type
    }
}
