import ParsleyCore
import ParsleyDomain
import ParsleyStorage

/// `/schemas[/:className]` (master key only): list, read, create, update (fields with `required` and
/// `defaultValue`, indexes, class-level permissions, protected fields) and delete an empty class, with Parse
/// Server's codes and messages. The validation and DDL live in `SchemaChange` (shared with schema files).
struct SchemasRouter: ParseRouter {
    let schemas: SchemaService
    let queries: QueryService
    private var table = RouteTable()

    /// Internal classes Parse Server never lists ("volatile" classes).
    static let unlisted: Set<String> = [
        "_JobStatus", "_PushStatus", "_Hooks", "_GlobalConfig", "_GraphQLConfig", "_JobSchedule", "_Audience", "_Idempotency",
    ]

    init(schemas: SchemaService, queries: QueryService) {
        self.schemas = schemas
        self.queries = queries
        table.on(.get, "schemas") { [schemas] _, _ in
            let listed = schemas.all().values.filter { !Self.unlisted.contains($0.className) && !$0.className.hasPrefix("_Join:") }
            return .ok(["results": .array(listed.sorted { $0.className < $1.className }.map(\.json))])
        }
        table.on(.get, "schemas/:className") { [schemas] _, p in
            let name = p["className"]!
            guard let schema = schemas.schema(name), !Self.unlisted.contains(name) else {
                throw ParseError(.invalidClassName, "Class \(name) does not exist.")
            }
            return ParseResponse(body: schema.json)
        }
        table.on(.post, "schemas") { [schemas] req, _ in
            guard case .object = req.bodyObject else { throw ParseError.invalidJSON() }
            guard let name = req.bodyObject["className"]?.stringValue else {
                throw ParseError(.missingRequiredField, "POST /schemas needs a class name.")
            }
            return try await Self.create(schemas, name, req.bodyObject)
        }
        table.on(.post, "schemas/:className") { [schemas] req, p in
            let name = p["className"]!
            if let bodyName = req.bodyObject["className"], bodyName != .string(name) {
                throw ParseError(.invalidClassName, "Class name mismatch between \(bodyName.stringValue ?? JSONWriter.string(bodyName)) and \(name).")
            }
            return try await Self.create(schemas, name, req.bodyObject)
        }
        table.on(.put, "schemas/:className") { [schemas] req, p in
            let name = p["className"]!
            if let bodyName = req.bodyObject["className"], bodyName != .string(name) {
                throw ParseError(.invalidClassName, "Class name mismatch between \(bodyName.stringValue ?? JSONWriter.string(bodyName)) and \(name).")
            }
            let change = SchemaChange(className: name, body: req.bodyObject)
            // Whether the class exists is asked of the database inside the write, not of this process's cache: another
            // node may have created it a moment ago.
            let schema = try await schemas.update(name) { writer, stored in
                guard let stored else { throw ParseError(.invalidClassName, "Class \(name) does not exist.") }
                return try await change.apply(writer, to: stored)
            }
            return ParseResponse(body: schema?.json ?? .object([:]))
        }
        table.on(.delete, "schemas/:className") { [schemas, queries] _, p in
            let name = p["className"]!
            guard Naming.isValidClassName(name) else { throw ParseError.invalidClassName(name) }
            guard let schema = schemas.schema(name) else { return .ok([:]) }
            // The server creates these at start-up and relies on them (unique indexes, sessions).
            if ["_User", "_Role", "_Session"].contains(name) {
                throw ParseError(.invalidSchemaOperation, "Class \(name) is a system class, cannot drop schema.")
            }
            let count = try await queries.count(name, where: nil, auth: .master)
            if count > 0 {
                throw ParseError(.invalidSchemaOperation, "Class \(name) is not empty, contains \(count) objects, cannot drop schema.")
            }
            let relationFields = schema.fields.compactMap { k, v -> String? in
                if case .relation = v { return k }
                return nil
            }
            _ = try await schemas.update(name) { writer, _ in
                // Counted again inside the transaction: an object created meanwhile keeps the class.
                let rows = try await writer.db.query(SQLFragment("SELECT 1 FROM \(writer.dialect.quote(name)) LIMIT 1"))
                if !rows.isEmpty { throw ParseError(.invalidSchemaOperation, "Class \(name) is not empty, cannot drop schema.") }
                try await writer.dropTable(name)
                for f in relationFields { try await writer.dropTable(WhereCompiler.joinTable(field: f, owner: name)) }
                return nil
            }
            return .ok([:])
        }
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        guard request.path.first == "schemas" else { return nil }
        guard request.auth.isMaster else { return { _ in throw AccessDenied.masterKeyRequired } }
        return table.handler(for: request)
    }

    static func create(_ schemas: SchemaService, _ name: String, _ body: JSONValue) async throws -> ParseResponse {
        guard Naming.isValidClassName(name), !name.hasPrefix("_") || Naming.systemClasses.contains(name) else {
            throw ParseError.invalidClassName(name)
        }
        if schemas.schema(name) != nil { throw ParseError(.invalidClassName, "Class \(name) already exists.") }
        let change = SchemaChange(className: name, body: body)
        let schema = try await schemas.update(name) { writer, stored in
            if stored != nil { throw ParseError(.invalidClassName, "Class \(name) already exists.") }
            return try await change.apply(writer, to: nil)
        }
        return ParseResponse(body: schema?.json ?? .object([:]))
    }
}
