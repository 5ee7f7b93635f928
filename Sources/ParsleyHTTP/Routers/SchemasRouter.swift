import ParsleyCore
import ParsleyDomain

/// `/schemas[/:className]` (master key only): list, read, create, update (fields with `required` and
/// `defaultValue`, indexes, class-level permissions, protected fields) and delete an empty class, with Parse
/// Server's codes and messages. The validation and DDL live in `SchemaChange` (shared with schema files).
struct SchemasRouter: ParseRouter {
    let schemas: SchemaService
    let queries: QueryService
    private var table = RouteTable()

    /// Internal classes Parse Server never lists ("volatile" classes).
    static var unlisted: Set<String> { SchemaService.unlistedClasses }

    init(schemas: SchemaService, queries: QueryService, lockSchemas: Bool = false) {
        self.schemas = schemas
        self.queries = queries
        // Parse Server's `schema.lockSchemas`: the definitions own the schemas; creating and changing classes through
        // the API is 119, even with the master key (deleting an empty class is not refused, as in Parse Server).
        let locked: @Sendable () throws -> Void = {
            if lockSchemas { throw ParseError(.operationForbidden, "Cannot perform this operation when schemas options is used.") }
        }
        table.master(.get, "schemas") { [schemas] _, _ in
            try await schemas.refreshIfDue()
            return .ok(["results": .array(SchemaService.listed(schemas.all()).map(\.json))])
        }
        table.master(.get, "schemas/:className") { [schemas] _, p in
            let name = try p.require("className")
            guard let schema = try await schemas.current(name), !Self.unlisted.contains(name) else {
                throw ParseError(.invalidClassName, "Class \(name) does not exist.")
            }
            return ParseResponse(body: schema.json)
        }
        table.master(.post, "schemas") { [schemas] req, _ in
            try locked()
            guard case .object = req.bodyObject else { throw ParseError.invalidJSON() }
            guard let name = req.bodyObject["className"]?.stringValue else {
                throw ParseError(.missingRequiredField, "POST /schemas needs a class name.")
            }
            return try await Self.create(schemas, name, req.bodyObject, keyOrders: req.keyOrders)
        }
        table.master(.post, "schemas/:className") { [schemas] req, p in
            try locked()
            let name = try p.require("className")
            if let bodyName = req.bodyObject["className"], bodyName != .string(name) {
                throw ParseError(.invalidClassName, "Class name mismatch between \(bodyName.stringValue ?? JSONWriter.string(bodyName)) and \(name).")
            }
            return try await Self.create(schemas, name, req.bodyObject, keyOrders: req.keyOrders)
        }
        table.master(.put, "schemas/:className") { [schemas] req, p in
            try locked()
            let name = try p.require("className")
            if let bodyName = req.bodyObject["className"], bodyName != .string(name) {
                throw ParseError(.invalidClassName, "Class name mismatch between \(bodyName.stringValue ?? JSONWriter.string(bodyName)) and \(name).")
            }
            let schema = try await schemas.changeClass(SchemaChange(className: name, body: req.bodyObject, keyOrders: req.keyOrders))
            return ParseResponse(body: schema?.json ?? .object([:]))
        }
        table.master(.delete, "schemas/:className") { [schemas, queries] _, p in
            let name = try p.require("className")
            guard Naming.isValidClassName(name) else { throw ParseError.invalidClassName(name) }
            guard let schema = try await schemas.current(name) else { return .ok([:]) }
            try await schemas.deleteClass(schema, queries: queries)
            return .ok([:])
        }
    }

    var routes: RouteTable { table }

    static func create(_ schemas: SchemaService, _ name: String, _ body: JSONValue, keyOrders: JSONKeyOrders) async throws -> ParseResponse {
        let schema = try await schemas.createClass(SchemaChange(className: name, body: body, keyOrders: keyOrders))
        return ParseResponse(body: schema?.json ?? .object([:]))
    }
}
