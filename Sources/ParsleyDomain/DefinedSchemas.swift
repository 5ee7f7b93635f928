public import Logging
public import ParsleyCore

/// Parse Server's `schema` option (`src/SchemaMigrations/DefinedSchemas.js`): class definitions applied when the
/// server starts. Planned like a schema file (`SchemaFile`, `SchemaMigration`) and applied in one transaction,
/// with Parse Server's rules on top: fields and indexes the definitions leave out may be deleted, every class's
/// `addField` permission is closed, and `lockSchemas` closes `POST`/`PUT /schemas`.
public struct DefinedSchemas: Sendable {
    public var definitions: [JSONValue]
    /// Warn about classes, fields and field types of the database the definitions do not describe (nothing is deleted).
    public var strict = false
    /// Delete fields the definitions do not describe.
    public var deleteExtraFields = false
    /// Delete and re-create fields whose type differs from the definition (their values are lost).
    public var recreateModifiedFields = false
    /// `POST`/`PUT /schemas` answer 119 (checked by the schemas router through `ParseServerOptions.lockSchemas`).
    public var lockSchemas = false

    public init(definitions: [JSONValue]) { self.definitions = definitions }

    /// Fields of `className` the definitions neither set nor delete (Parse Server's `isProtectedFields`).
    static func isProtected(_ className: String, _ field: String) -> Bool {
        ClassSchema.defaultFields[field] != nil || ClassSchema.systemFields(for: className)[field] != nil
            || (className == "_User" && field == "password")
    }

    /// Indexes the definitions neither create nor delete (Parse Server's `isProtectedIndex`).
    static func isProtectedIndex(_ className: String, _ index: String) -> Bool {
        index == "_id_"
            || (className == "_User" && ["case_insensitive_username", "case_insensitive_email", "username_1", "email_1"].contains(index))
    }

    /// The definitions as a schema file (checked as one), without the fields and indexes Parse Server leaves alone.
    func file() throws(SchemaFile.Invalid) -> SchemaFile {
        var classes: [JSONValue] = []
        for (i, definition) in definitions.enumerated() {
            guard case .object(var body) = definition, let className = body["className"]?.stringValue else {
                throw SchemaFile.Invalid("schema.definitions[\(i)] needs a \"className\"")
            }
            if case .object(let fields)? = body["fields"] {
                body["fields"] = .object(fields.filter { !Self.isProtected(className, $0.key) })
            }
            if case .object(let indexes)? = body["indexes"] {
                body["indexes"] = .object(indexes.filter { !Self.isProtectedIndex(className, $0.key) })
            }
            classes.append(.object(body))
        }
        return try SchemaFile(name: "schema.definitions", text: JSONWriter.string(.object(["classes": .array(classes)])), anyTargetClass: true)
    }

    /// What starting with these definitions changes in `current`, and the warnings Parse Server logs.
    public func plan(current: [String: ClassSchema]) throws(SchemaFile.Invalid) -> (SchemaMigration, warnings: [String]) {
        let file = try file()
        var warnings: [String] = []
        var changes: [(SchemaChange, creates: Bool, summary: String)] = []
        let defined = Set(file.classes.map(\.className))
        for c in file.classes {
            let wanted = c.body["fields"]?.objectValue ?? [:]
            let wantedIndexes = c.body["indexes"]?.objectValue ?? [:]
            let clp = Self.closingAddField(c.body["classLevelPermissions"])
            guard let existing = current[c.className] else {
                var body = c.body.objectValue ?? [:]
                body["classLevelPermissions"] = clp
                changes.append((SchemaChange(className: c.className, body: .object(body), keyOrders: c.keyOrders), true, "\(c.className): created"))
                continue
            }
            var deletes: [String: JSONValue] = [:]
            var fields: [String: JSONValue] = [:]
            var notes: [String] = []
            var extra: [String] = []
            for (field, type) in existing.fields.sorted(by: { $0.key < $1.key }) where !Self.isProtected(c.className, field) {
                guard let spec = wanted[field] else {
                    extra.append(field)
                    continue
                }
                if FieldType(json: spec) != type {
                    if recreateModifiedFields {
                        deletes[field] = ["__op": "Delete"]
                        fields[field] = spec
                        notes.append("\(field) re-created")
                    } else if strict {
                        warnings.append(
                            "The field \"\(field)\" type differ between the schema and the database for \"\(c.className)\"; "
                                + "Schema is defined as \"\(spec["type"]?.stringValue ?? "")\" and current database type is \"\(type.display)\"")
                    }
                } else if (FieldOptions(json: spec) ?? FieldOptions()) != (existing.fieldOptions[field] ?? FieldOptions()) {
                    fields[field] = spec
                    notes.append("\(field) options")
                }
            }
            for (field, spec) in wanted where existing.fields[field] == nil {
                fields[field] = spec
                notes.append("+\(field)")
            }
            if deleteExtraFields {
                for field in extra {
                    deletes[field] = ["__op": "Delete"]
                    notes.append("-\(field)")
                }
            } else if strict, !extra.isEmpty {
                warnings.append(
                    "The following fields exist in the database for \"\(c.className)\", but are missing in the schema : \"\(extra.joined(separator: "\" ,\""))\""
                )
            }
            var indexes: [String: JSONValue] = [:]
            var rebuilt: [String: JSONValue] = [:]
            for (index, keys) in existing.indexes.sorted(by: { $0.key < $1.key }) where !Self.isProtectedIndex(c.className, index) {
                if let want = wantedIndexes[index] {
                    if want != keys {
                        indexes[index] = ["__op": "Delete"]
                        rebuilt[index] = want
                        notes.append("index \(index) rebuilt")
                    }
                } else {
                    indexes[index] = ["__op": "Delete"]
                    notes.append("-index \(index)")
                }
            }
            for (index, keys) in wantedIndexes where existing.indexes[index] == nil {
                indexes[index] = keys
                notes.append("+index \(index)")
            }
            // Indexes go first (deleting a field drops its indexes), then fields, then what is added.
            let dropped = indexes.filter { $0.value == ["__op": "Delete"] }
            if !dropped.isEmpty {
                changes.append((SchemaChange(className: c.className, body: ["indexes": .object(dropped)]), false, "\(c.className): dropping indexes"))
            }
            if !deletes.isEmpty {
                changes.append((SchemaChange(className: c.className, body: ["fields": .object(deletes)]), false, "\(c.className): dropping fields"))
            }
            indexes = indexes.filter { $0.value != ["__op": "Delete"] }
            var body: [String: JSONValue] = [:]
            if !fields.isEmpty { body["fields"] = .object(fields) }
            if !indexes.isEmpty { body["indexes"] = .object(indexes) }
            if Self.differs(clp, existing, fields: wanted) {
                body["classLevelPermissions"] = clp
                notes.append("class-level permissions")
            }
            if !rebuilt.isEmpty { body["indexes"] = .object((body["indexes"]?.objectValue ?? [:]).merging(rebuilt) { a, _ in a }) }
            if !body.isEmpty {
                changes.append(
                    (
                        SchemaChange(className: c.className, body: .object(body), keyOrders: c.keyOrders), false,
                        "\(c.className): " + notes.joined(separator: ", ")
                    ))
            }
        }
        let missing = current.keys.filter { !defined.contains($0) && !Naming.systemClasses.contains($0) && !$0.hasPrefix("_") }.sorted()
        if strict, !missing.isEmpty {
            warnings.append(
                "The following schemas are currently present in the database, but not explicitly defined in a schema: \"\(missing.joined(separator: "\", \""))\""
            )
        }
        // Classes the definitions leave out keep their permissions, but nobody may add fields to them either.
        for (className, schema) in current.sorted(by: { $0.key < $1.key })
        where !defined.contains(className) && !className.hasPrefix("_Join:") && !Self.volatileClasses.contains(className) {
            let clp = Self.closingAddField(ClassLevelPermissions(stored: schema.classLevelPermissions).json)
            if Self.differs(clp, schema, fields: [:]) {
                changes.append(
                    (SchemaChange(className: className, body: ["classLevelPermissions": clp]), false, "\(className): addField closed"))
            }
        }
        var migration = SchemaMigration(file: file, result: current)
        var simulated = current
        for (change, creates, summary) in changes {
            do { simulated[change.className] = try change.plan(from: simulated[change.className]).schema } catch {
                throw SchemaFile.Invalid("schema.definitions: class \(change.className): \(error.message)")
            }
            migration.steps.append(SchemaMigration.Step(change: change, creates: creates, summary: summary))
        }
        migration.unchanged = file.classes.map(\.className).filter { name in !changes.contains { $0.0.className == name } }
        migration.result = simulated
        return (migration, warnings)
    }

    /// Internal classes only the master key reaches; their permissions are left alone.
    static let volatileClasses: Set<String> = [
        "_JobStatus", "_PushStatus", "_Hooks", "_GlobalConfig", "_GraphQLConfig", "_JobSchedule", "_Audience", "_Idempotency",
    ]

    /// The definition's class-level permissions (none: every operation closed, as in Parse Server) with `addField` closed.
    static func closingAddField(_ clp: JSONValue?) -> JSONValue {
        var o = clp?.objectValue ?? [:]
        o["addField"] = .object([:])
        return .object(o)
    }

    static func differs(_ clp: JSONValue, _ existing: ClassSchema, fields: [String: JSONValue]) -> Bool {
        var merged = existing.fields
        for (field, spec) in fields { merged[field] = FieldType(json: spec) ?? merged[field] }
        guard let wanted = try? ClassLevelPermissions(validating: clp, fields: merged) else { return true }
        return wanted != ClassLevelPermissions(stored: existing.classLevelPermissions)
    }

    /// Plans against the stored schemas and applies in one transaction; when another server starting on the same
    /// database changed them meanwhile, plans again (up to three more times, as Parse Server retries), so several
    /// nodes starting at once end with the same schemas.
    public func apply(to schemas: SchemaService, logger: Logger) async throws {
        logger.info("Running Migrations")
        var attempt = 0
        while true {
            do {
                try await schemas.reload()
                let (migration, warnings) = try plan(current: schemas.all())
                if !migration.steps.isEmpty { try await SchemaMigration.apply([migration], to: schemas) }
                for warning in warnings { logger.warning("\(warning)") }
                for step in migration.steps where !step.summary.isEmpty { logger.info("schema: \(step.summary)") }
                logger.info("Running Migrations Completed")
                return
            } catch let error as SchemaFile.Invalid where attempt < 3 && error.description.hasSuffix("(nothing was applied)") {
                attempt += 1
                logger.info("schema: retrying after another change (\(attempt))")
                try await Task.sleep(for: .seconds(attempt))
            }
        }
    }
}

extension SchemaMigration {
    /// A migration planned elsewhere (`DefinedSchemas`): steps are added by the planner.
    init(file: SchemaFile, result: [String: ClassSchema]) {
        self.file = file
        self.result = result
    }
}
