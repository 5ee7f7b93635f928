/// A Parse schema field type, as written in `/schemas` JSON (`{"type":"Pointer","targetClass":"_User"}`).
public enum FieldType: Sendable, Hashable {
    case string, number, boolean, date, object, array, file, geoPoint, polygon, bytes, acl
    case pointer(String)
    case relation(String)

    public var name: String {
        switch self {
        case .string: return "String"
        case .number: return "Number"
        case .boolean: return "Boolean"
        case .date: return "Date"
        case .object: return "Object"
        case .array: return "Array"
        case .file: return "File"
        case .geoPoint: return "GeoPoint"
        case .polygon: return "Polygon"
        case .bytes: return "Bytes"
        case .acl: return "ACL"
        case .pointer: return "Pointer"
        case .relation: return "Relation"
        }
    }

    public var targetClass: String? {
        switch self {
        case .pointer(let c), .relation(let c): return c
        default: return nil
        }
    }

    /// The `/schemas` JSON form.
    public var json: JSONValue {
        if let target = targetClass { return ["type": .string(name), "targetClass": .string(target)] }
        return ["type": .string(name)]
    }

    /// Human form used in Parse's 111 messages: `Pointer<_User>`.
    public var display: String {
        if let target = targetClass { return "\(name)<\(target)>" }
        return name
    }

    public init?(name: String, targetClass: String?) {
        switch name {
        case "String": self = .string
        case "Number": self = .number
        case "Boolean": self = .boolean
        case "Date": self = .date
        case "Object": self = .object
        case "Array": self = .array
        case "File": self = .file
        case "GeoPoint": self = .geoPoint
        case "Polygon": self = .polygon
        case "Bytes": self = .bytes
        case "ACL": self = .acl
        case "Pointer":
            guard let t = targetClass else { return nil }
            self = .pointer(t)
        case "Relation":
            guard let t = targetClass else { return nil }
            self = .relation(t)
        default: return nil
        }
    }

    public init?(json: JSONValue) {
        guard let name = json["type"]?.stringValue else { return nil }
        self.init(name: name, targetClass: json["targetClass"]?.stringValue)
    }
}

/// The options of a field set through the schemas API (`{"type":"Number","required":true,"defaultValue":0}`),
/// kept beside the field's `FieldType` so type checks compare types only.
public struct FieldOptions: Sendable, Equatable {
    /// `required`: a create without a value (or with null, `""` or `Delete`) fails with 142.
    public var required: Bool?
    /// `defaultValue`: stored on create when the body has no value.
    public var defaultValue: JSONValue?

    public init(required: Bool? = nil, defaultValue: JSONValue? = nil) {
        self.required = required
        self.defaultValue = defaultValue
    }

    public var isEmpty: Bool { required == nil && defaultValue == nil }
    public var isRequired: Bool { required == true }

    /// Reads `required` and `defaultValue` from a field's `/schemas` JSON (nil when it has neither).
    public init?(json: JSONValue) {
        self.init(required: json["required"]?.boolValue, defaultValue: json["defaultValue"].flatMap { $0.isNull ? nil : $0 })
        if isEmpty { return nil }
    }

    /// Adds the options to a field's `/schemas` JSON.
    public func merged(into json: JSONValue) -> JSONValue {
        guard case .object(var o) = json else { return json }
        if let required { o["required"] = .bool(required) }
        if let defaultValue { o["defaultValue"] = defaultValue }
        return .object(o)
    }
}
