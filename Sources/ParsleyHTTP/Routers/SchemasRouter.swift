import ParsleyCore
import ParsleyDomain
import ParsleyStorage

/// `/schemas[/:className]` (master key only): list, read, create, add fields and indexes, delete an empty class.
struct SchemasRouter: ParseRouter {
    let schemas: SchemaService
    let queries: QueryService
    private var table = RouteTable()

    init(schemas: SchemaService, queries: QueryService) {
        self.schemas = schemas
        self.queries = queries
        table.on(.get, "schemas") { [schemas] _, _ in
            .ok(["results": .array(schemas.all().values.sorted { $0.className < $1.className }.map(\.json))])
        }
        table.on(.get, "schemas/:className") { [schemas] _, p in
            let name = p["className"]!
            guard let schema = schemas.schema(name) else { throw ParseError(.invalidClassName, "Class \(name) does not exist.") }
            return ParseResponse(body: schema.json)
        }
        table.on(.post, "schemas") { [schemas] req, _ in
            guard let name = req.bodyObject["className"]?.stringValue else { throw ParseError(.missingRequiredField, "POST /schemas needs a class name.") }
            return try await Self.create(schemas, name, req.bodyObject)
        }
        table.on(.post, "schemas/:className") { [schemas] req, p in
            let name = p["className"]!
            if let bodyName = req.bodyObject["className"]?.stringValue, bodyName != name {
                throw ParseError(.invalidClassName, "Class name mismatch between \(bodyName) and \(name).")
            }
            return try await Self.create(schemas, name, req.bodyObject)
        }
        table.on(.put, "schemas/:className") { [schemas] req, p in
            let name = p["className"]!
            guard schemas.schema(name) != nil else { throw ParseError(.invalidClassName, "Class \(name) does not exist.") }
            return try await Self.apply(schemas, name, req.bodyObject, creating: false)
        }
        table.on(.delete, "schemas/:className") { [schemas, queries] _, p in
            let name = p["className"]!
            guard Naming.isValidClassName(name) else { throw ParseError.invalidClassName(name) }
            if schemas.schema(name) != nil {
                if try await queries.count(name, where: nil, auth: .master) > 0 {
                    throw ParseError(.invalidSchemaOperation, "Class \(name) is not empty, contains objects, cannot drop schema.")
                }
                let relationFields = schemas.schema(name)?.fields.compactMap { k, v -> String? in
                    if case .relation = v { return k }
                    return nil
                } ?? []
                _ = try await schemas.update(name) { writer, _ in
                    try await writer.dropTable(name)
                    for f in relationFields { try await writer.dropTable(WhereCompiler.joinTable(field: f, owner: name)) }
                    return nil
                }
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
        return try await apply(schemas, name, body, creating: true)
    }

    /// Adds/deletes fields, sets CLPs and indexes, all in one transaction.
    static func apply(_ schemas: SchemaService, _ name: String, _ body: JSONValue, creating: Bool) async throws -> ParseResponse {
        var add: [(String, FieldType)] = []
        var drop: [String] = []
        for (field, spec) in (body["fields"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            if spec["__op"]?.stringValue == "Delete" {
                drop.append(field)
                continue
            }
            guard Naming.isValidFieldName(field) else { throw ParseError.invalidKeyName(field) }
            guard let type = FieldType(json: spec) else {
                throw ParseError(.incorrectType, "invalid field type: \(spec["type"]?.stringValue ?? JSONWriter.string(spec))")
            }
            add.append((field, type))
        }
        var indexesToAdd: [(String, [(String, Bool)])] = []
        var indexesToDrop: [String] = []
        for (indexName, spec) in (body["indexes"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            if spec["__op"]?.stringValue == "Delete" {
                indexesToDrop.append(indexName)
                continue
            }
            guard Naming.isIdentifier(indexName.replacingDashes()), case .object(let keys) = spec, !keys.isEmpty else {
                throw ParseError.invalidQuery("Invalid index \(indexName)")
            }
            indexesToAdd.append((indexName, keys.sorted { $0.key < $1.key }.map { ($0.key, $0.value.integerValue == -1) }))
        }
        let clp = body["classLevelPermissions"]
        let schema = try await schemas.update(name) { [add, drop, indexesToAdd, indexesToDrop] writer, stored in
            var schema = stored ?? ClassSchema(className: name)
            if stored == nil {
                try await writer.createTable(name)
                for (f, t) in schema.fields where ClassSchema.defaultFields[f] == nil { try await writer.addColumn(name, field: f, type: t) }
            }
            for field in drop {
                guard schema.fields[field] != nil, ClassSchema.defaultFields[field] == nil else {
                    throw ParseError(.invalidSchemaOperation, "Field \(field) does not exist, cannot delete.")
                }
                if case .relation = schema.fields[field] {
                    try await writer.dropTable(WhereCompiler.joinTable(field: field, owner: name))
                } else {
                    _ = try await writer.db.query(SQLFragment("ALTER TABLE \(writer.dialect.quote(name)) DROP COLUMN \(writer.dialect.quote(field))"))
                }
                schema.fields[field] = nil
            }
            for (field, type) in add {
                if schema.fields[field] != nil { throw ParseError(.invalidSchemaOperation, "Field \(field) exists, cannot update.") }
                try SchemaServiceChecks.geoPoint(schema, field, type)
                try await writer.addColumn(name, field: field, type: type)
                schema.fields[field] = type
            }
            for indexName in indexesToDrop {
                try await writer.dropIndex(name, name: indexName)
                schema.indexes[indexName] = nil
            }
            for (indexName, keys) in indexesToAdd {
                for (k, _) in keys where schema.fields[k] == nil {
                    throw ParseError(.invalidQuery, "Field \(k) does not exist, cannot add index.")
                }
                try await writer.createIndex(name, name: indexName, fields: keys)
                schema.indexes[indexName] = .object(Dictionary(uniqueKeysWithValues: keys.map { ($0.0, JSONValue.int($0.1 ? -1 : 1)) }))
            }
            if let clp, !clp.isNull { schema.classLevelPermissions = try ClassLevelPermissions(validating: clp, fields: schema.fields).json }
            return schema
        }
        return ParseResponse(body: schema?.json ?? .object([:]))
    }
}

enum SchemaServiceChecks {
    static func geoPoint(_ schema: ClassSchema, _ name: String, _ type: FieldType) throws(ParseError) {
        if type == .geoPoint, let existing = schema.geoPointField, existing != name {
            throw ParseError(.incorrectType, "there can only be one geopoint field in a class")
        }
    }
}

extension String {
    func replacingDashes() -> String { String(map { $0 == "-" ? "_" : $0 }) }
}
