public import ParsleyCore
import ParsleyStorage

/// Whole-class changes of the schemas API: create, change and drop a class, each in one write that asks the
/// database (not this process's cache) whether the class exists, since another node may have just changed it.
extension SchemaService {
    /// `POST /schemas[/:className]`: creates the class `change` describes.
    /// - Throws: 103 for an invalid name or one that exists; what `SchemaChange.plan` finds in the body.
    public func createClass(_ change: SchemaChange) async throws -> ClassSchema? {
        let name = change.className
        guard Naming.isValidClassName(name), !name.hasPrefix("_") || Naming.systemClasses.contains(name) else {
            throw ParseError.invalidClassName(name)
        }
        // (The cache may still hold a class another node dropped: asked again before refusing.)
        if schema(name) != nil, try await reread(name) != nil { throw ParseError(.invalidClassName, "Class \(name) already exists.") }
        return try await update(name) { writer, stored in
            if stored != nil { throw ParseError(.invalidClassName, "Class \(name) already exists.") }
            return try await change.apply(writer, to: nil)
        }
    }

    /// `PUT /schemas/:className`: changes an existing class (fields, indexes, class-level permissions).
    /// - Throws: 103 when the class does not exist; what `SchemaChange.plan` finds in the body.
    public func changeClass(_ change: SchemaChange) async throws -> ClassSchema? {
        let name = change.className
        return try await update(name) { writer, stored in
            guard let stored else { throw ParseError(.invalidClassName, "Class \(name) does not exist.") }
            return try await change.apply(writer, to: stored)
        }
    }

    /// Internal classes Parse Server never lists ("volatile" classes): not in `GET /schemas` nor GraphQL's `classes`.
    public static let unlistedClasses: Set<String> = [
        "_JobStatus", "_PushStatus", "_Hooks", "_GlobalConfig", "_GraphQLConfig", "_JobSchedule", "_Audience", "_Idempotency",
    ]

    /// The classes `GET /schemas` and GraphQL's `classes` list, by name.
    public static func listed(_ all: [String: ClassSchema]) -> [ClassSchema] {
        all.values.filter { !unlistedClasses.contains($0.className) && !$0.className.hasPrefix("_Join:") }.sorted { $0.className < $1.className }
    }

    /// `DELETE /schemas/:className` (and GraphQL's `deleteClass`) of a class that exists: 255 for `_User`, `_Role` and
    /// `_Session` (the server relies on them) and for a class that holds objects; otherwise dropped.
    public func deleteClass(_ schema: ClassSchema, queries: QueryService) async throws {
        let name = schema.className
        if ["_User", "_Role", "_Session"].contains(name) {
            throw ParseError(.invalidSchemaOperation, "Class \(name) is a system class, cannot drop schema.")
        }
        let count = try await queries.count(name, where: nil, auth: .master)
        if count > 0 {
            throw ParseError(.invalidSchemaOperation, "Class \(name) is not empty, contains \(count) objects, cannot drop schema.")
        }
        // Counted again inside the transaction: an object created meanwhile keeps the class.
        try await dropEmptyClass(schema)
    }

    /// `DELETE /schemas/:className`, once the caller found the class empty: drops its table, its relations' join
    /// tables and its schema.
    /// - Throws: 255 when an object was created meanwhile (counted again inside the transaction).
    public func dropEmptyClass(_ schema: ClassSchema) async throws {
        let name = schema.className
        let relationFields = schema.fields.compactMap { field, type -> String? in
            if case .relation = type { return field }
            return nil
        }
        _ = try await update(name) { writer, _ in
            if try await writer.hasObjects(className: name) {
                throw ParseError(.invalidSchemaOperation, "Class \(name) is not empty, cannot drop schema.")
            }
            try await writer.dropTable(name)
            for field in relationFields { try await writer.dropTable(WhereCompiler.joinTable(field: field, owner: name)) }
            return nil
        }
    }
}
