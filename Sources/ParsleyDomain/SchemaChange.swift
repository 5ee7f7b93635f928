public import ParsleyCore
public import ParsleyStorage

/// One `/schemas` body (`{"fields":{...},"indexes":{...},"classLevelPermissions":{...}}`) for one class:
/// validated against the stored schema with Parse Server's error codes and messages, then applied as DDL
/// inside a write. Used by `POST`/`PUT /schemas` and by schema files (`parsley schema apply`).
public struct SchemaChange: Sendable {
    public var className: String
    /// The `/schemas` body (what a client sends; what `parsley schema apply` sends to a running server).
    public var body: JSONValue
    /// The order the body's keys were written in: a compound index's columns follow it (`{"user": 1,
    /// "created_at": -1}` is not `{"created_at": -1, "user": 1}`). Without it, columns go in name order.
    public var keyOrders: JSONKeyOrders

    public init(className: String, body: JSONValue, keyOrders: JSONKeyOrders = JSONKeyOrders()) {
        self.className = className
        self.body = body
        self.keyOrders = keyOrders
    }

    /// The new schema and the statements that get there from the stored one.
    public struct Plan: Sendable {
        public var schema: ClassSchema
        public var createTable = false
        public var addColumns: [(String, FieldType)] = []
        public var dropFields: [(String, FieldType)] = []
        public var dropIndexes: [String] = []
        public var createIndexes: [(String, [(String, Bool)])] = []
    }

    static let plainTypes: Set<String> = ["String", "Number", "Boolean", "Date", "Object", "Array", "GeoPoint", "File", "Bytes", "Polygon"]

    /// Validates the body against `stored` (nil: the class is created) in Parse Server's order:
    /// 255 for existing/missing fields, then per new field 105 (name), 136 (default field), 135/107/103/111
    /// (type), 111 (default value, required on Relation), 111 (second GeoPoint), 136 (deleting a default
    /// field), 102 (indexes) and 107 (class-level permissions).
    public func plan(from stored: ClassSchema?) throws(ParseError) -> Plan {
        guard case .object(let object) = body else { throw ParseError.invalidJSON("invalid JSON") }
        var fieldSpecs: [(String, JSONValue)] = []
        if let f = object["fields"], !f.isNull {
            guard case .object(let fields) = f else { throw ParseError.invalidJSON("invalid JSON") }
            fieldSpecs = fields.sorted { $0.key < $1.key }
        }
        var plan = Plan(schema: stored ?? ClassSchema(className: className))
        plan.createTable = stored == nil
        let fixed = ClassSchema.defaultFields.merging(ClassSchema.systemFields(for: className)) { a, _ in a }
        // 255 first, as Parse Server's updateClass does.
        if let stored {
            for (name, spec) in fieldSpecs {
                let existing = stored.fields[name]
                if Self.isDelete(spec) {
                    if existing == nil { throw ParseError(.invalidSchemaOperation, "Field \(name) does not exist, cannot delete.") }
                } else if let existing, (try? Self.fieldType(spec)) != existing {
                    throw ParseError(.invalidSchemaOperation, "Field \(name) exists, cannot update.")
                }
            }
        }
        for (name, spec) in fieldSpecs where !Self.isDelete(spec) {
            if let existing = stored?.fields[name] {
                // Same type: the options may change (not on default fields, which keep theirs).
                guard fixed[name] == nil else { continue }
                let options = try Self.options(spec, type: existing, className: className, field: name)
                plan.schema.fieldOptions[name] = options.isEmpty ? nil : options
                continue
            }
            guard Naming.isValidFieldName(name) else { throw ParseError(.invalidKeyName, "invalid field name: \(name)") }
            guard fixed[name] == nil else { throw ParseError(.changedImmutableField, "field \(name) cannot be added") }
            // SQLite column names ignore case: `Friends` and `friends` cannot both be columns of one class.
            if let other = plan.schema.fields.keys.first(where: { $0 != name && $0.lowercased() == name.lowercased() }) {
                throw ParseError(.invalidKeyName, "invalid field name: \(name) (the class has \(other); field names may not differ only in case)")
            }
            let type = try Self.fieldType(spec)
            let options = try Self.options(spec, type: type, className: className, field: name)
            plan.schema.fields[name] = type
            if !options.isEmpty { plan.schema.fieldOptions[name] = options }
            plan.addColumns.append((name, type))
        }
        let geoPoints = plan.schema.fields.filter { $0.value == .geoPoint }.map(\.key).sorted { a, b in
            // the field that already existed comes first, as in Parse's message
            (stored?.fields[a] != nil ? 0 : 1, a) < (stored?.fields[b] != nil ? 0 : 1, b)
        }
        if geoPoints.count > 1 {
            throw ParseError(
                .incorrectType,
                "currently, only one GeoPoint field may exist in an object. Adding \(geoPoints[1]) when \(geoPoints[0]) already exists.")
        }
        for (name, spec) in fieldSpecs where Self.isDelete(spec) {
            guard fixed[name] == nil, let type = plan.schema.fields[name] else {
                throw ParseError(.changedImmutableField, "field \(name) cannot be changed")
            }
            plan.dropFields.append((name, type))
            plan.schema.fields[name] = nil
            plan.schema.fieldOptions[name] = nil
            // An index on a deleted field goes with it.
            for (indexName, keys) in plan.schema.indexes where keys.objectValue?[name] != nil {
                plan.dropIndexes.append(indexName)
                plan.schema.indexes[indexName] = nil
            }
        }
        try planIndexes(object["indexes"], &plan)
        if let clp = object["classLevelPermissions"], !clp.isNull {
            plan.schema.classLevelPermissions = try ClassLevelPermissions(validating: clp, fields: plan.schema.fields).json
        }
        return plan
    }

    private func planIndexes(_ json: JSONValue?, _ plan: inout Plan) throws(ParseError) {
        guard let json, !json.isNull else { return }
        guard case .object(let indexes) = json else { throw ParseError.invalidJSON("invalid JSON") }
        for (indexName, spec) in indexes.sorted(by: { $0.key < $1.key }) {
            if Self.isDelete(spec) {
                guard plan.schema.indexes[indexName] != nil else {
                    throw ParseError(.invalidQuery, "Index \(indexName) does not exist, cannot delete.")
                }
                plan.dropIndexes.append(indexName)
                plan.schema.indexes[indexName] = nil
                continue
            }
            if plan.schema.indexes[indexName] != nil { throw ParseError(.invalidQuery, "Index \(indexName) exists, cannot update.") }
            guard Naming.isIdentifier(indexName.replacingDashes()), case .object(let keys) = spec, !keys.isEmpty else {
                throw ParseError.invalidQuery("Invalid index \(indexName)")
            }
            var columns: [(String, Bool)] = []
            let fields = keyOrders.order(of: keys.keys, under: indexName) ?? keys.keys.sorted()
            for field in fields {
                let direction = keys[field]!
                guard let type = plan.schema.fields[field] else {
                    throw ParseError(.invalidQuery, "Field \(field) does not exist, cannot add index.")
                }
                if case .relation = type { throw ParseError(.invalidQuery, "Field \(field) is a Relation, cannot add index.") }
                guard let d = direction.integerValue, d == 1 || d == -1 else {
                    throw ParseError(.invalidQuery, "Invalid index \(indexName): \(field) must be 1 or -1")
                }
                columns.append((field, d == -1))
            }
            plan.createIndexes.append((indexName, columns))
            plan.schema.indexes[indexName] = .object(Dictionary(uniqueKeysWithValues: columns.map { ($0.0, JSONValue.int($0.1 ? -1 : 1)) }))
        }
    }

    /// Validates, then runs the DDL inside the caller's write; returns the schema to save.
    public func apply(_ writer: SQLWriter, to stored: ClassSchema?) async throws -> ClassSchema {
        let plan = try plan(from: stored)
        let name = className
        if plan.createTable {
            try await writer.createTable(name)
            for (f, t) in ClassSchema(className: name).fields where ClassSchema.defaultFields[f] == nil {
                try await writer.addColumn(name, field: f, type: t)
            }
        }
        for indexName in plan.dropIndexes { try await writer.dropIndex(name, name: indexName) }
        for (field, type) in plan.dropFields {
            if case .relation = type {
                try await writer.dropTable(WhereCompiler.joinTable(field: field, owner: name))
            } else {
                try await writer.dropColumn(name, field: field)
            }
        }
        for (field, type) in plan.addColumns { try await writer.addColumn(name, field: field, type: type) }
        for (indexName, keys) in plan.createIndexes { try await writer.createIndex(name, name: indexName, fields: keys) }
        return plan.schema
    }

    // MARK: Field specs

    static func isDelete(_ spec: JSONValue) -> Bool { spec["__op"]?.stringValue == "Delete" }

    /// Parse Server's `fieldTypeIsInvalid`: 135 without a target class, 107 for non-string parts, 103 for a bad
    /// target class name, 111 for an unknown type (the implicit `ACL` type cannot be declared).
    public static func fieldType(_ spec: JSONValue) throws(ParseError) -> FieldType {
        guard case .object = spec else { throw ParseError.invalidJSON("invalid JSON") }
        let type = spec["type"]
        if let t = type?.stringValue, t == "Pointer" || t == "Relation" {
            guard let target = spec["targetClass"], !target.isNull else { throw ParseError(.missingRequiredField, "type \(t) needs a class name") }
            guard case .string(let targetClass) = target else { throw ParseError.invalidJSON("invalid JSON") }
            guard Naming.isValidClassName(targetClass) else { throw ParseError.invalidClassName(targetClass) }
            return t == "Pointer" ? .pointer(targetClass) : .relation(targetClass)
        }
        guard case .string(let name)? = type else { throw ParseError.invalidJSON("invalid JSON") }
        guard plainTypes.contains(name), let fieldType = FieldType(name: name, targetClass: nil) else {
            throw ParseError(.incorrectType, "invalid field type: \(name)")
        }
        return fieldType
    }

    /// `required` and `defaultValue`, checked against the field's type.
    static func options(_ spec: JSONValue, type: FieldType, className: String, field: String) throws(ParseError) -> FieldOptions {
        var options = FieldOptions()
        if let r = spec["required"], !r.isNull {
            guard case .bool(let b) = r else { throw ParseError.invalidJSON("invalid JSON") }
            options.required = b
        }
        if let d = spec["defaultValue"], !d.isNull {
            if case .relation = type {
                throw ParseError(.incorrectType, "The 'default value' option is not applicable for \(type.display)")
            }
            let got = try ParseValue.inferType(d)
            guard got == type else {
                throw ParseError(
                    .incorrectType,
                    "schema mismatch for \(className).\(field) default value; expected \(type.display) but got \(got?.display ?? "null")")
            }
            options.defaultValue = d
        } else if options.required == true, case .relation = type {
            throw ParseError(.incorrectType, "The 'required' option is not applicable for \(type.display)")
        }
        return options
    }
}

extension String {
    /// Index names may contain dashes (`name-1`); otherwise they follow the identifier rule.
    func replacingDashes() -> String { String(map { $0 == "-" ? "_" : $0 }) }
}
