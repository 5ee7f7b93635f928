/// The schema of one Parse class: its fields with their types, class-level permissions and indexes.
public struct ClassSchema: Sendable, Equatable {
    public var className: String
    public var fields: [String: FieldType] {
        didSet { storedFields = Self.columns(of: fields) }
    }
    /// `required` / `defaultValue` of the fields that have them (kept apart so `fields` compares types only).
    public var fieldOptions: [String: FieldOptions] = [:]
    /// Fields that have a column of their own (no defaults, no relations), sorted by name; kept in step with
    /// `fields` so a query does not sort them on every request.
    public private(set) var storedFields: [(name: String, type: FieldType)] = []

    static func columns(of fields: [String: FieldType]) -> [(name: String, type: FieldType)] {
        fields.filter { name, type in
            if defaultFields[name] != nil { return false }
            if case .relation = type { return false }
            return true
        }.sorted { $0.key < $1.key }.map { (name: $0.key, type: $0.value) }
    }

    public static func == (a: ClassSchema, b: ClassSchema) -> Bool {
        a.className == b.className && a.fields == b.fields && a.classLevelPermissions == b.classLevelPermissions && a.indexes == b.indexes
            && a.fieldOptions == b.fieldOptions
    }
    public var classLevelPermissions: JSONValue?
    public var indexes: [String: JSONValue]

    public static let defaultFields: [String: FieldType] = [
        "objectId": .string, "createdAt": .date, "updatedAt": .date, "ACL": .acl,
    ]

    /// Fields every object of a system class has.
    public static func systemFields(for className: String) -> [String: FieldType] {
        switch className {
        case "_User":
            return [
                "username": .string, "email": .string, "emailVerified": .boolean, "authData": .object,
                "_hashed_password": .string, "_email_verify_token": .string, "_perishable_token": .string,
                "_perishable_token_expires_at": .date, "_failed_login_count": .number, "_account_lockout_expires_at": .date,
                "_password_changed_at": .date, "_password_history": .array,
            ]
        case "_Role":
            return ["name": .string, "users": .relation("_User"), "roles": .relation("_Role")]
        case "_Session":
            return [
                "user": .pointer("_User"), "installationId": .string, "sessionToken": .string, "expiresAt": .date,
                "createdWith": .object,
            ]
        case "_Installation":
            return [
                "installationId": .string, "deviceToken": .string, "channels": .array, "deviceType": .string,
                "pushType": .string, "GCMSenderId": .string, "timeZone": .string, "localeIdentifier": .string,
                "badge": .number, "appVersion": .string, "appName": .string, "appIdentifier": .string,
                "parseVersion": .string,
            ]
        default:
            return [:]
        }
    }

    public init(className: String, fields: [String: FieldType] = [:], classLevelPermissions: JSONValue? = nil, indexes: [String: JSONValue] = [:]) {
        self.className = className
        var all = Self.defaultFields
        for (k, v) in Self.systemFields(for: className) { all[k] = v }
        for (k, v) in fields { all[k] = v }
        self.fields = all
        self.storedFields = Self.columns(of: all)
        self.classLevelPermissions = classLevelPermissions
        self.indexes = indexes
    }

    /// The single GeoPoint field, if the class has one (Parse allows at most one).
    public var geoPointField: String? { fields.first { $0.value == .geoPoint }?.key }

    /// Default CLP (everything open) used when none is stored.
    public static let openPermissions: JSONValue = [
        "find": ["*": true], "get": ["*": true], "count": ["*": true], "create": ["*": true],
        "update": ["*": true], "delete": ["*": true], "addField": ["*": true], "protectedFields": ["*": []],
    ]

    /// The `/schemas` JSON form of this class.
    public var json: JSONValue {
        var fieldJSON: [String: JSONValue] = [:]
        // Internal fields (`_hashed_password`, ...) never leave the server; system classes re-add them on load.
        for (name, type) in fields where !name.hasPrefix("_") {
            fieldJSON[name] = fieldOptions[name].map { $0.merged(into: type.json) } ?? type.json
        }
        var o: [String: JSONValue] = [
            "className": .string(className),
            "fields": .object(fieldJSON),
            "classLevelPermissions": classLevelPermissions ?? Self.openPermissions,
        ]
        if !indexes.isEmpty { o["indexes"] = .object(indexes) }
        return .object(o)
    }

    /// Reads the stored form written by `json`.
    public init?(json: JSONValue) {
        guard let name = json["className"]?.stringValue, let fieldJSON = json["fields"]?.objectValue else { return nil }
        var fields: [String: FieldType] = [:]
        var options: [String: FieldOptions] = [:]
        for (k, v) in fieldJSON {
            guard let t = FieldType(json: v) else { return nil }
            fields[k] = t
            options[k] = FieldOptions(json: v)
        }
        self.init(className: name, fields: fields, classLevelPermissions: json["classLevelPermissions"], indexes: json["indexes"]?.objectValue ?? [:])
        fieldOptions = options
        if json["classLevelPermissions"] == Self.openPermissions { classLevelPermissions = nil }
    }
}
