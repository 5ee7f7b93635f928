public import ParsleyCore

/// A schema file (`Schemas/*.json`): `{"description": "...", "classes": [<POST /schemas body>, ...]}`.
/// It describes the classes an app needs; `SchemaMigration` turns it into the changes a database still needs.
public struct SchemaFile: Sendable {
    public struct Class: Sendable {
        public var className: String
        /// The class's `/schemas` body as written in the file.
        public var body: JSONValue
        /// The order of the file's keys (index columns follow it).
        public var keyOrders = JSONKeyOrders()
    }

    /// The file name used in messages.
    public var name: String
    public var description: String
    public var classes: [Class]

    /// An error that names the file, and the class and field when there is one.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    static let classKeys: Set<String> = ["className", "fields", "indexes", "classLevelPermissions"]
    static let fieldKeys: Set<String> = ["type", "targetClass", "required", "defaultValue"]
    static let typeNames = "String, Number, Boolean, Date, Object, Array, GeoPoint, File, Bytes, Polygon, Pointer, Relation"

    /// Parses the file and checks everything that does not depend on a database: names, types, targets (with
    /// `anyTargetClass`, a Pointer or Relation may target any valid class name, as Parse Server's `schema` option allows).
    public init(name: String, text: String, anyTargetClass: Bool = false) throws(Invalid) {
        self.name = name
        let json: JSONValue
        let keyOrders: JSONKeyOrders
        do { (json, keyOrders) = try JSONParser.parseKeepingKeyOrder(Array(text.utf8)) } catch { throw Invalid("\(name): not valid JSON (\(error))") }
        guard case .object(let top) = json, case .array(let list)? = top["classes"] else {
            throw Invalid("\(name): expected an object with a \"classes\" array of /schemas bodies")
        }
        description = top["description"]?.stringValue ?? ""
        classes = []
        var seen: Set<String> = []
        for (i, item) in list.enumerated() {
            guard case .object(let body) = item, case .string(let className)? = body["className"] else {
                throw Invalid("\(name): classes[\(i)] needs a \"className\"")
            }
            let at = "\(name): class \(className)"
            guard Naming.isValidClassName(className), !className.hasPrefix("_") || Naming.systemClasses.contains(className) else {
                throw Invalid(
                    "\(at): Parse forbids this class name (a letter, then letters, digits and _; or a system class such as _User)")
            }
            guard seen.insert(className).inserted else { throw Invalid("\(at): the class appears twice") }
            if let unknown = body.keys.filter({ !Self.classKeys.contains($0) }).sorted().first {
                throw Invalid("\(at): unknown key \"\(unknown)\" (a class has className, fields, indexes, classLevelPermissions)")
            }
            classes.append(Class(className: className, body: item, keyOrders: keyOrders))
        }
        let declared = Set(classes.map(\.className))
        for c in classes {
            for (field, spec) in (c.body["fields"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                try Self.checkField(field, spec, in: c.className, file: name, declared: declared, anyTargetClass: anyTargetClass)
            }
        }
    }

    static func checkField(
        _ field: String, _ spec: JSONValue, in className: String, file: String, declared: Set<String>, anyTargetClass: Bool = false
    ) throws(Invalid) {
        let at = "\(file): class \(className), field \(field)"
        guard case .object(let o) = spec else { throw Invalid("\(at): expected {\"type\": ...}") }
        if o["__op"] != nil { throw Invalid("\(at): a schema file describes classes; it cannot delete fields") }
        if let unknown = o.keys.filter({ !fieldKeys.contains($0) }).sorted().first {
            throw Invalid("\(at): unknown key \"\(unknown)\" (a field has type, targetClass, required, defaultValue)")
        }
        guard Naming.isValidFieldName(field) else {
            throw Invalid("\(at): Parse forbids this field name (a letter, then letters, digits and _; not className or length)")
        }
        if ClassSchema.defaultFields[field] != nil || ClassSchema.systemFields(for: className)[field] != nil {
            throw Invalid("\(at): a field every \(className) already has; leave it out")
        }
        guard let typeName = o["type"]?.stringValue, typeName != "ACL", FieldType(name: typeName, targetClass: "x") != nil else {
            let given = o["type"].map { $0.stringValue ?? JSONWriter.string($0) } ?? "none"
            throw Invalid("\(at): unknown type \(given) (Parse types: \(typeNames))")
        }
        if typeName == "Pointer" || typeName == "Relation" {
            guard let target = o["targetClass"]?.stringValue else { throw Invalid("\(at): a \(typeName) needs a \"targetClass\"") }
            guard declared.contains(target) || Naming.systemClasses.contains(target) || (anyTargetClass && Naming.isValidClassName(target)) else {
                throw Invalid("\(at): targetClass \(target) is neither a class of this file nor a system class")
            }
        }
        do {
            _ = try SchemaChange.options(spec, type: try SchemaChange.fieldType(spec), className: className, field: field)
        } catch {
            throw Invalid("\(at): \(error.message)")
        }
    }
}

/// What applying a schema file changes, class by class, computed from the current schemas. Applying it again
/// after it ran plans nothing: fields and indexes that exist as described are left alone, nothing the file does
/// not mention is deleted.
public struct SchemaMigration: Sendable {
    public struct Step: Sendable {
        public var change: SchemaChange
        /// The class does not exist yet (`POST /schemas`), else `PUT`.
        public var creates: Bool
        /// One line for people: `Entry: created with 8 fields, 1 index`.
        public var summary: String
    }

    public var file: SchemaFile
    public var steps: [Step] = []
    /// Classes the file describes that already are as described.
    public var unchanged: [String] = []
    /// Every class's schema once the file is applied (plan the next file from these).
    public var result: [String: ClassSchema]

    /// Plans and validates every change against `current` (the database's or the server's schemas); throws
    /// before anything is applied when one class does not fit (a field clash with existing data included).
    public init(_ file: SchemaFile, current: [String: ClassSchema]) throws(SchemaFile.Invalid) {
        self.file = file
        self.result = current
        var simulated = current
        for c in file.classes {
            let at = "\(file.name): class \(c.className)"
            let wanted = c.body["fields"]?.objectValue ?? [:]
            let existing = current[c.className]
            var changes: [(SchemaChange, Bool)] = []
            var notes: [String] = []
            if let existing {
                var fields: [String: JSONValue] = [:]
                for (field, spec) in wanted.sorted(by: { $0.key < $1.key }) {
                    let type = try Self.type(spec, at: "\(at), field \(field)")
                    if let had = existing.fields[field] {
                        guard had == type else {
                            throw SchemaFile.Invalid(
                                "\(at), field \(field): the database has it as \(had.display) but the file says \(type.display); "
                                    + "existing data would not fit (rename the field in the file, or delete the old field with PUT /schemas first)")
                        }
                        let options = FieldOptions(json: spec) ?? FieldOptions()
                        if options != (existing.fieldOptions[field] ?? FieldOptions()) {
                            fields[field] = spec
                            notes.append("\(field) options")
                        }
                    } else {
                        fields[field] = spec
                        notes.append("+\(field)")
                    }
                }
                var indexes: [String: JSONValue] = [:]
                var replaced: [String: JSONValue] = [:]
                for (index, keys) in (c.body["indexes"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    guard let had = existing.indexes[index] else {
                        indexes[index] = keys
                        notes.append("+index \(index)")
                        continue
                    }
                    if had != keys {
                        replaced[index] = ["__op": "Delete"]
                        indexes[index] = keys
                        notes.append("index \(index) rebuilt")
                    }
                }
                var body: [String: JSONValue] = [:]
                if !fields.isEmpty { body["fields"] = .object(fields) }
                if !indexes.isEmpty { body["indexes"] = .object(indexes) }
                if let clp = c.body["classLevelPermissions"], !clp.isNull {
                    var merged = existing.fields
                    for (field, spec) in wanted { merged[field] = try? SchemaChange.fieldType(spec) }
                    let wantedCLP: ClassLevelPermissions
                    do { wantedCLP = try ClassLevelPermissions(validating: clp, fields: merged) } catch {
                        throw SchemaFile.Invalid("\(at): classLevelPermissions: \(error.message)")
                    }
                    if wantedCLP != ClassLevelPermissions(stored: existing.classLevelPermissions) {
                        body["classLevelPermissions"] = clp
                        notes.append("class-level permissions")
                    }
                }
                if !replaced.isEmpty {
                    changes.append((SchemaChange(className: c.className, body: ["indexes": .object(replaced)], keyOrders: c.keyOrders), false))
                }
                if !body.isEmpty { changes.append((SchemaChange(className: c.className, body: .object(body), keyOrders: c.keyOrders), false)) }
            } else {
                changes.append((SchemaChange(className: c.className, body: c.body, keyOrders: c.keyOrders), true))
                let n = wanted.count
                let i = c.body["indexes"]?.objectValue?.count ?? 0
                notes.append("created with \(n) field\(n == 1 ? "" : "s")" + (i > 0 ? ", \(i) index\(i == 1 ? "" : "es")" : ""))
            }
            if changes.isEmpty {
                unchanged.append(c.className)
                continue
            }
            // Validate with the server's own rules, in order, on the schema as it will be.
            for (index, (change, creates)) in changes.enumerated() {
                do {
                    simulated[c.className] = try change.plan(from: simulated[c.className]).schema
                } catch {
                    throw SchemaFile.Invalid("\(at): \(error.message)")
                }
                let summary =
                    index == changes.count - 1 ? "\(c.className): " + notes.joined(separator: ", ") : "\(c.className): dropping changed indexes"
                steps.append(Step(change: change, creates: creates, summary: summary))
            }
        }
        result = simulated
    }

    static func type(_ spec: JSONValue, at: String) throws(SchemaFile.Invalid) -> FieldType {
        do { return try SchemaChange.fieldType(spec) } catch { throw SchemaFile.Invalid("\(at): \(error.message)") }
    }

    /// Applies the steps of several files directly on the database, in one transaction: every class of every
    /// file changes, or none.
    public static func apply(_ migrations: [SchemaMigration], to schemas: SchemaService) async throws {
        let steps = migrations.flatMap(\.steps)
        var seen: Set<String> = []
        let classes = steps.map(\.change.className).filter { seen.insert($0).inserted }
        let byClass = Dictionary(grouping: steps, by: \.change.className)
        let names = migrations.map(\.file.name).joined(separator: ", ")
        do {
            try await schemas.update(classes: classes) { writer, className, stored in
                var schema = stored
                for step in byClass[className] ?? [] {
                    if step.creates, schema != nil { throw ParseError(.invalidClassName, "Class \(className) already exists.") }
                    schema = try await step.change.apply(writer, to: schema)
                }
                return schema
            }
        } catch let error as ParseError {
            throw SchemaFile.Invalid("\(names): \(error.message) (nothing was applied)")
        } catch {
            throw SchemaFile.Invalid("\(names): the database refused a change: \(error) (nothing was applied)")
        }
    }
}
