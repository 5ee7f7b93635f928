/// A class's class-level permissions (CLP), as Parse Server stores them in the schema's
/// `classLevelPermissions`: who may run each operation, pointer permissions, and protected fields.
///
/// A class that never had CLPs set is open to everyone (`open`). A CLP set through the schemas API replaces
/// the whole object, and every operation missing from it is closed (`{}`), as Parse Server fills them on load.
public struct ClassLevelPermissions: Sendable, Equatable {
    public enum Operation: String, Sendable, CaseIterable {
        case find, count, get, create, update, delete, addField

        /// `get`, `find` and `count` are reads (pointer permissions come from `readUserFields`).
        public var isRead: Bool { self == .find || self == .count || self == .get }
    }

    /// Who may run one operation.
    public struct Rule: Sendable, Equatable {
        /// Keys granted `true`: `*`, user ids, `role:Name`, `requiresAuthentication`.
        public var grants: Set<String>
        /// Fields (Pointer<_User> or Array of user pointers) naming the users who may run the operation.
        public var pointerFields: [String]

        public init(grants: Set<String> = [], pointerFields: [String] = []) {
            self.grants = grants
            self.pointerFields = pointerFields
        }

        public static let everyone = Rule(grants: ["*"])
        public static let nobody = Rule()

        public var json: JSONValue {
            var o: [String: JSONValue] = [:]
            for key in grants { o[key] = true }
            if !pointerFields.isEmpty { o["pointerFields"] = .array(pointerFields.map { .string($0) }) }
            return .object(o)
        }
    }

    /// The rule of each operation; an operation without an entry is open.
    public var rules: [Operation: Rule]
    /// `{"<entity>": ["field", ...]}` with entities `*`, `authenticated`, `role:Name`, a user id, `userField:<f>`.
    public var protectedFields: [String: [String]]
    public var readUserFields: [String]
    public var writeUserFields: [String]
    /// The `ACL` key (Parse Server 8+): the ACL an object created without one gets, `{"<who>": {"read": Bool,
    /// "write": Bool}}`, where `currentUser` stands for the creating user (`creationACL(userId:)`).
    public var defaultACL: [String: JSONValue]? = nil

    public init(
        rules: [Operation: Rule] = [:], protectedFields: [String: [String]] = [:], readUserFields: [String] = [],
        writeUserFields: [String] = []
    ) {
        self.rules = rules
        self.protectedFields = protectedFields
        self.readUserFields = readUserFields
        self.writeUserFields = writeUserFields
    }

    /// Parse Server's default for a class without stored CLPs: every operation open to everyone.
    public static let open = ClassLevelPermissions(
        rules: Dictionary(uniqueKeysWithValues: Operation.allCases.map { ($0, Rule.everyone) }), protectedFields: ["*": []])

    // MARK: JSON

    static let validKeys: Set<String> = Set(Operation.allCases.map(\.rawValue)).union([
        "protectedFields", "readUserFields", "writeUserFields", "ACL",
    ])

    /// Parses and validates CLP JSON sent through the schemas API (Parse Server's `validateCLP`).
    /// - Parameter fields: the class's fields after the same request's changes; pointer fields and protected
    ///   fields must name existing fields of the right type.
    /// - Throws: 107 for anything Parse Server rejects.
    public init(validating json: JSONValue, fields: [String: FieldType], allowCustomUserIds: Bool = false) throws(ParseError) {
        guard case .object(let object) = json else {
            throw ParseError.invalidJSON("'\(Self.describe(json))' is not a valid value for class level permissions")
        }
        self.init()
        for op in Operation.allCases { rules[op] = .nobody }
        for key in object.keys.sorted() {
            let value = object[key]!  // key from keys
            guard Self.validKeys.contains(key) else {
                throw ParseError.invalidJSON("\(key) is not a valid operation for class level permissions")
            }
            switch key {
            case "readUserFields", "writeUserFields":
                guard case .array(let items) = value else {
                    throw ParseError.invalidJSON(
                        "'\(Self.describe(value))' is not a valid value for class level permissions \(key) - must be an array")
                }
                var names: [String] = []
                for item in items {
                    guard case .string(let name) = item else {
                        throw ParseError.invalidJSON("'\(Self.describe(item))' is not a valid column for class level pointer permissions \(key)")
                    }
                    try Self.checkPointerField(name, fields, key)
                    names.append(name)
                }
                if key == "readUserFields" { readUserFields = names } else { writeUserFields = names }
            case "protectedFields":
                guard case .object(let entities) = value else {
                    throw ParseError.invalidJSON(
                        "'\(Self.describe(value))' is not a valid value for class level permissions \(key) - must be an object")
                }
                for entity in entities.keys.sorted() {
                    guard Self.isProtectedFieldsKey(entity, allowCustomUserIds) else {
                        throw ParseError.invalidJSON("'\(entity)' is not a valid key for class level permissions")
                    }
                    guard case .array(let items) = entities[entity]! else {  // entity from keys
                        throw ParseError.invalidJSON(
                            "'\(Self.describe(entities[entity]!))' is not a valid value for protectedFields[\(entity)] - expected an array.")
                    }
                    var names: [String] = []
                    for item in items {
                        guard case .string(let name) = item else {
                            throw ParseError.invalidJSON("'\(Self.describe(item))' is not a valid value for protectedFields[\(entity)]")
                        }
                        if ClassSchema.defaultFields[name] != nil { throw ParseError.invalidJSON("Default field '\(name)' can not be protected") }
                        guard fields[name] != nil else {
                            throw ParseError.invalidJSON("Field '\(name)' in protectedFields:\(entity) does not exist")
                        }
                        names.append(name)
                    }
                    protectedFields[entity] = names
                }
            case "ACL":
                defaultACL = try Self.validatingDefaultACL(value, fields: fields, allowCustomUserIds: allowCustomUserIds)
            default:
                let op = Operation(rawValue: key)!  // validKeys minus the four above are operations
                guard case .object(let entries) = value else {
                    throw ParseError.invalidJSON(
                        "'\(Self.describe(value))' is not a valid value for class level permissions \(key) - must be an object")
                }
                var rule = Rule()
                for entry in entries.keys.sorted() {
                    let permit = entries[entry]!  // entry from keys
                    guard Self.isPermissionKey(entry, allowCustomUserIds) else {
                        throw ParseError.invalidJSON("'\(entry)' is not a valid key for class level permissions")
                    }
                    if entry == "pointerFields" {
                        guard case .array(let items) = permit else {
                            throw ParseError.invalidJSON("'\(Self.describe(permit))' is not a valid value for \(key)[\(entry)] - expected an array.")
                        }
                        for item in items {
                            guard case .string(let name) = item else {
                                throw ParseError.invalidJSON(
                                    "'\(Self.describe(item))' is not a valid column for class level pointer permissions \(key)")
                            }
                            try Self.checkPointerField(name, fields, key)
                            rule.pointerFields.append(name)
                        }
                        continue
                    }
                    guard permit == .bool(true) else {
                        // Parse Server 8's wording (with "acl" in it for every operation).
                        throw ParseError.invalidJSON(
                            "'\(Self.describe(permit))' is not a valid value for class level permissions acl \(key):\(entry)")
                    }
                    rule.grants.insert(entry)
                }
                rules[op] = rule
            }
        }
    }

    /// Reads a stored CLP without validating it (it was validated when stored). Nil: the open default.
    /// Operations missing from a stored CLP are closed.
    public init(stored json: JSONValue?) {
        guard case .object(let object)? = json else {
            self = .open
            return
        }
        self.init()
        for op in Operation.allCases {
            var rule = Rule()
            for (key, value) in object[op.rawValue]?.objectValue ?? [:] {
                if key == "pointerFields" {
                    rule.pointerFields = value.arrayValue?.compactMap(\.stringValue) ?? []
                } else if value == .bool(true) {
                    rule.grants.insert(key)
                }
            }
            rules[op] = rule
        }
        for (entity, list) in object["protectedFields"]?.objectValue ?? [:] {
            protectedFields[entity] = list.arrayValue?.compactMap(\.stringValue) ?? []
        }
        readUserFields = object["readUserFields"]?.arrayValue?.compactMap(\.stringValue) ?? []
        writeUserFields = object["writeUserFields"]?.arrayValue?.compactMap(\.stringValue) ?? []
        defaultACL = object["ACL"]?.objectValue
    }

    /// The full stored/returned form: every operation present (closed ones as `{}`).
    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        for op in Operation.allCases { o[op.rawValue] = (rules[op] ?? .everyone).json }
        o["protectedFields"] = .object(protectedFields.mapValues { .array($0.map { .string($0) }) })
        if !readUserFields.isEmpty { o["readUserFields"] = .array(readUserFields.map { .string($0) }) }
        if !writeUserFields.isEmpty { o["writeUserFields"] = .array(writeUserFields.map { .string($0) }) }
        if let defaultACL { o["ACL"] = .object(defaultACL) }
        return .object(o)
    }

    /// The `ACL` key as Parse Server 8 validates it: an object whose keys are those of an operation (`*`, a user id
    /// — `currentUser` is one —, `role:Name`, `requiresAuthentication`, `pointerFields`) and whose values are
    /// objects of `read`/`write` booleans.
    static func validatingDefaultACL(_ value: JSONValue, fields: [String: FieldType], allowCustomUserIds: Bool) throws(ParseError)
        -> [String: JSONValue]
    {
        guard case .object(let entries) = value else {
            throw ParseError.invalidJSON("'\(describe(value))' is not a valid value for class level permissions ACL - must be an object")
        }
        for entry in entries.keys.sorted() {
            let permit = entries[entry]!  // entry from keys
            guard isPermissionKey(entry, allowCustomUserIds) else {
                throw ParseError.invalidJSON("'\(entry)' is not a valid key for class level permissions")
            }
            if entry == "pointerFields" {
                guard case .array(let items) = permit else {
                    throw ParseError.invalidJSON("'\(describe(permit))' is not a valid value for ACL[\(entry)] - expected an array.")
                }
                for item in items {
                    guard case .string(let name) = item else {
                        throw ParseError.invalidJSON("'\(describe(item))' is not a valid column for class level pointer permissions ACL")
                    }
                    try checkPointerField(name, fields, "ACL")
                }
                continue
            }
            guard case .object(let perms) = permit else {
                throw ParseError.invalidJSON("'\(describe(permit))' is not a valid value for class level permissions acl")
            }
            let badKeys = perms.keys.sorted().filter { $0 != "read" && $0 != "write" }
            if !badKeys.isEmpty {
                throw ParseError.invalidJSON("'\(badKeys.joined(separator: ","))' is not a valid key for class level permissions acl")
            }
            let badValues = perms.keys.sorted().compactMap { key -> String? in
                if case .bool = perms[key]! { return nil }  // key from keys
                return describe(perms[key]!)
            }
            if !badValues.isEmpty {
                throw ParseError.invalidJSON("'\(badValues.joined(separator: ","))' is not a valid value for class level permissions acl")
            }
        }
        return entries
    }

    /// The default ACL for an object created by `userId` (nil: the master key or nobody): `currentUser`'s entry
    /// becomes the user's (dropped without one), `pointerFields` is not an ACL entry. Nil without an `ACL` key.
    public func creationACL(userId: String?) -> JSONValue? {
        guard var entries = defaultACL else { return nil }
        entries["pointerFields"] = nil
        if let current = entries.removeValue(forKey: "currentUser"), let userId { entries[userId] = current }
        return .object(entries)
    }

    static func describe(_ value: JSONValue) -> String {
        if case .string(let s) = value { return s }
        return JSONWriter.string(value)
    }

    static func isUserId(_ key: String, _ allowCustom: Bool) -> Bool {
        guard !key.isEmpty else { return false }
        if allowCustom { return true }
        return key.utf8.allSatisfy { Naming.isAlpha($0) || Naming.isDigit($0) }
    }

    static func isPermissionKey(_ key: String, _ allowCustom: Bool) -> Bool {
        key == "*" || key == "requiresAuthentication" || key == "pointerFields" || key.hasPrefix("role:") || isUserId(key, allowCustom)
    }

    static func isProtectedFieldsKey(_ key: String, _ allowCustom: Bool) -> Bool {
        key == "*" || key == "authenticated" || key.hasPrefix("role:") || key.hasPrefix("userField:") || isUserId(key, allowCustom)
    }

    static func checkPointerField(_ name: String, _ fields: [String: FieldType], _ operation: String) throws(ParseError) {
        switch fields[name] {
        case .pointer("_User")?, .array?: return
        default: throw ParseError.invalidJSON("'\(name)' is not a valid column for class level pointer permissions \(operation)")
        }
    }

    // MARK: Evaluation

    /// The outcome of checking one operation for one caller.
    public enum Decision: Sendable, Equatable {
        case allowed
        /// Allowed only on objects where one of these fields points to the caller.
        case pointerRestricted([String])
        case denied(ParseError)
    }

    /// Parse Server's `validatePermission` followed by the pointer-permission fields of `addPointerPermissions`.
    /// - Parameters:
    ///   - userId: the logged-in user, if any; `roles` their role names (without `role:`).
    ///   - isUpdate: for `addField`, whether the write is an update (pointer permissions never allow creates).
    public func decide(_ op: Operation, className: String, userId: String?, roles: [String], isUpdate: Bool = false) -> Decision {
        guard let rule = rules[op] else { return .allowed }
        if rule.grants.contains("*") { return .allowed }
        if let userId, rule.grants.contains(userId) { return .allowed }
        if roles.contains(where: { rule.grants.contains("role:" + $0) }) { return .allowed }
        if rule.grants.contains("requiresAuthentication") {
            if userId == nil { return .denied(ParseError.sanitized(.objectNotFound, "Permission denied, user needs to be authenticated.")) }
            return .allowed
        }
        let denied = Decision.denied(ParseError.sanitized(.operationForbidden, "Permission denied for action \(op.rawValue) on class \(className)."))
        if op == .create { return denied }
        let userFields = op.isRead ? readUserFields : writeUserFields
        var fields = rule.pointerFields
        for f in userFields where !fields.contains(f) { fields.append(f) }
        if !userFields.isEmpty { return .pointerRestricted(fields) }
        if !rule.pointerFields.isEmpty, op != .addField || isUpdate { return .pointerRestricted(fields) }
        return denied
    }

    /// The fields hidden from a caller before per-object `userField:` rules: the intersection of the lists of
    /// every entry that applies (`*` always, `authenticated` when logged in, each role, the user's id).
    /// Empty when no entry applies.
    public func protectedFields(userId: String?, roles: [String]) -> Set<String> {
        var sets: [Set<String>] = []
        for (entity, list) in protectedFields {
            if entity == "*" {
                sets.append(Set(list))
            } else if userId != nil, entity == "authenticated" {
                sets.append(Set(list))
            } else if userId != nil, entity.hasPrefix("role:"), roles.contains(String(entity.dropFirst(5))) {
                sets.append(Set(list))
            } else if let userId, entity == userId {
                sets.append(Set(list))
            }
        }
        guard var hidden = sets.first else { return [] }
        for s in sets.dropFirst() { hidden.formIntersection(s) }
        return hidden
    }

    /// `userField:<field>` entries: the pointer field and the fields it hides.
    public var userFieldRules: [(field: String, hidden: Set<String>)] {
        protectedFields.compactMap { entity, list in
            entity.hasPrefix("userField:") ? (String(entity.dropFirst(10)), Set(list)) : nil
        }.sorted { $0.field < $1.field }
    }

    /// Adds server-level protected fields (Parse Server's `protectedFields` option) to this class's entries.
    public mutating func merge(protectedFields extra: [String: [String]]) {
        for (entity, list) in extra {
            var current = protectedFields[entity] ?? []
            for f in list where !current.contains(f) { current.append(f) }
            protectedFields[entity] = current
        }
    }
}
