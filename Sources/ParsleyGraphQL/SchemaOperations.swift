import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// A class as the schema queries show it.
struct ClassValue: Sendable {
    let schema: ClassSchema
}

/// One field of a class as `SchemaField` shows it.
struct SchemaFieldValue: Sendable {
    let name: String
    let type: FieldType
}

/// Schema management (docs/graphql-contract.md §7.3): the `class(name:)` and `classes` queries and the `createClass`,
/// `updateClass` and `deleteClass` mutations, master key only. The changes go through `SchemaService` as
/// `/schemas` sends them (`SchemaChange`, the same validation, `lockSchemas`, the same empty-class rule for deletes);
/// only the translation of `SchemaFieldsInput` into a `/schemas` body is GraphQL's own.
struct SchemaOperations {
    let services: GraphQLServices
    let classType: GraphQLObjectType
    let fieldsInput: GraphQLInputObjectType
    /// The `SchemaField` implementations, which the schema must be told about (only the interface is referred to).
    let types: [any GraphQLNamedType]

    /// Parse type name → its `Schema<T>Field` type name.
    static func typeName(_ type: FieldType) -> String {
        switch type {
        case .acl: return "SchemaACLField"
        default: return "Schema" + type.name + "Field"
        }
    }

    init(services: GraphQLServices) throws {
        self.services = services
        let name = GraphQLField(
            type: GraphQLNonNull(GraphQLString), resolve: { source, _, _, _ in (source as? SchemaFieldValue).map { Map.string($0.name) } })
        let interface = try GraphQLInterfaceType(
            name: "SchemaField", fields: ["name": name],
            resolveType: { value, _ in Self.typeName((value as? SchemaFieldValue)?.type ?? .string) })
        var types: [any GraphQLNamedType] = []
        let plain: [FieldType] = [.string, .number, .boolean, .array, .object, .date, .file, .geoPoint, .polygon, .bytes, .acl]
        for type in plain {
            types.append(try GraphQLObjectType(name: Self.typeName(type), fields: ["name": name], interfaces: [interface]))
        }
        let target = GraphQLField(
            type: GraphQLNonNull(GraphQLString),
            resolve: { source, _, _, _ in ((source as? SchemaFieldValue)?.type.targetClass).map { Map.string($0) } })
        for type in [FieldType.pointer(""), .relation("")] {
            types.append(
                try GraphQLObjectType(name: Self.typeName(type), fields: ["name": name, "targetClassName": target], interfaces: [interface]))
        }
        self.types = types
        classType = try GraphQLObjectType(
            name: "Class",
            fields: [
                "name": GraphQLField(
                    type: GraphQLNonNull(GraphQLString),
                    resolve: { source, _, _, _ in (source as? ClassValue).map { Map.string($0.schema.className) } }),
                "schemaFields": GraphQLField(
                    type: GraphQLNonNull(GraphQLList(GraphQLNonNull(interface))),
                    resolve: { source, _, _, _ in (source as? ClassValue).map { Self.fields($0.schema) } }),
            ])
        fieldsInput = try Self.fieldsInputType()
    }

    /// The fields in Parse Server's order: `objectId`, `createdAt`, `updatedAt`, `ACL`, then the class's own.
    static func fields(_ schema: ClassSchema) -> [SchemaFieldValue] {
        let first = ["objectId", "createdAt", "updatedAt", "ACL"].filter { schema.fields[$0] != nil }
        var names = first
        for field in schema.storedFields where !names.contains(field.name) && schema.fields[field.name] != nil { names.append(field.name) }
        names += schema.fields.keys.filter { !names.contains($0) }.sorted()
        return names.compactMap { name in schema.fields[name].map { SchemaFieldValue(name: name, type: $0) } }
    }

    /// `SchemaFieldsInput` and the element types of its lists.
    static func fieldsInputType() throws -> GraphQLInputObjectType {
        let name: InputObjectFieldMap = ["name": InputObjectField(type: GraphQLNonNull(GraphQLString))]
        var targeted = name
        targeted["targetClassName"] = InputObjectField(type: GraphQLNonNull(GraphQLString))
        var fields: InputObjectFieldMap = [:]
        for (key, type) in Self.addKeys {
            let element = try GraphQLInputObjectType(name: Self.typeName(type) + "Input", fields: name)
            fields[key] = InputObjectField(type: GraphQLList(GraphQLNonNull(element)))
        }
        fields["addGeoPoint"] = InputObjectField(type: try GraphQLInputObjectType(name: "SchemaGeoPointFieldInput", fields: name))
        fields["addPointers"] = InputObjectField(
            type: GraphQLList(GraphQLNonNull(try GraphQLInputObjectType(name: "PointerFieldInput", fields: targeted))))
        fields["addRelations"] = InputObjectField(
            type: GraphQLList(GraphQLNonNull(try GraphQLInputObjectType(name: "RelationFieldInput", fields: targeted))))
        fields["remove"] = InputObjectField(type: GraphQLList(GraphQLNonNull(try GraphQLInputObjectType(name: "SchemaFieldInput", fields: name))))
        return try GraphQLInputObjectType(name: "SchemaFieldsInput", fields: fields)
    }

    /// The `add<T>s` lists and their Parse types, in the order Parse Server reads them.
    static let addKeys: [(String, FieldType)] = [
        ("addStrings", .string), ("addNumbers", .number), ("addBooleans", .boolean), ("addArrays", .array), ("addObjects", .object),
        ("addDates", .date), ("addFiles", .file), ("addPolygons", .polygon), ("addBytes", .bytes),
    ]

    /// `SchemaFieldsInput` → the `fields` of a `/schemas` body (Parse Server's `transformToParse`): a field added twice,
    /// or added when the class has it, is 105 `Duplicated field name`; a field both added and removed is skipped;
    /// removing a field the class lacks is ignored.
    static func parseFields(_ input: JSONValue?, existing: [String: FieldType]?) throws -> [String: JSONValue] {
        guard case .object(let input)? = input else { return [:] }
        let removed = Set((input["remove"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
        var out: [String: JSONValue] = [:]
        func add(_ elements: [JSONValue], _ type: String, target: Bool) throws {
            for element in elements {
                guard let name = element["name"]?.stringValue, !removed.contains(name) else { continue }
                if out[name] != nil || existing?[name] != nil { throw ParseError(.invalidKeyName, "Duplicated field name: \(name)") }
                var field: [String: JSONValue] = ["type": .string(type)]
                if target { field["targetClass"] = element["targetClassName"] ?? .null }
                out[name] = .object(field)
            }
        }
        for (key, type) in addKeys.prefix(7) { try add(input[key]?.arrayValue ?? [], type.name, target: false) }
        if case .object? = input["addGeoPoint"], let geoPoint = input["addGeoPoint"] { try add([geoPoint], "GeoPoint", target: false) }
        for (key, type) in addKeys.dropFirst(7) { try add(input[key]?.arrayValue ?? [], type.name, target: false) }
        try add(input["addPointers"]?.arrayValue ?? [], "Pointer", target: true)
        try add(input["addRelations"]?.arrayValue ?? [], "Relation", target: true)
        if let existing {
            for name in removed.sorted() where existing[name] != nil { out[name] = ["__op": "Delete"] }
        }
        return out
    }

    /// The master key, and for changes a writing one (Parse Server's `enforceMasterKeyAccess` and texts).
    static func requireMaster(_ auth: Auth, change: String? = nil) throws {
        guard auth.isMaster else { throw ParseError(.operationForbidden, "unauthorized: master key is required") }
        if let change, auth.isReadOnly { throw ParseError(.operationForbidden, "read-only masterKey isn't allowed to \(change) a schema.") }
    }

    /// The class as it is now, or 103 `Class <name> does not exist.`.
    static func existing(_ name: String, _ services: GraphQLServices) async throws -> ClassSchema {
        guard Naming.isValidClassName(name), let schema = try await services.schemas.current(name), !SchemaService.unlistedClasses.contains(name)
        else { throw ParseError(.invalidClassName, "Class \(name) does not exist.") }
        return schema
    }

    func queries() -> [(String, GraphQLField)] {
        let services = self.services
        let one = GraphQLField(
            type: GraphQLNonNull(classType), args: ["name": GraphQLArgument(type: GraphQLNonNull(GraphQLString))],
            resolve: { _, args, context, _ in
                try Self.requireMaster(try SchemaBuilder.auth(context))
                return ClassValue(schema: try await Self.existing(MapJSON.json(args)["name"]?.stringValue ?? "", services))
            })
        let all = GraphQLField(
            type: GraphQLNonNull(GraphQLList(GraphQLNonNull(classType))),
            resolve: { _, _, context, _ in
                try Self.requireMaster(try SchemaBuilder.auth(context))
                try await services.schemas.refreshIfDue()
                return SchemaService.listed(services.schemas.all()).map(ClassValue.init)
            })
        return [("class", one), ("classes", all)]
    }

    func mutations() throws -> [(String, GraphQLField)] {
        let services = self.services
        let output: [String: any GraphQLOutputType] = ["class": GraphQLNonNull(classType)]
        let change: InputObjectFieldMap = [
            "name": InputObjectField(type: GraphQLNonNull(GraphQLString)), "schemaFields": InputObjectField(type: fieldsInput),
        ]
        let create = try RelayMutation.field(
            "createClass", input: change, output: output, readOnly: true,
            resolve: { input, auth, _ in
                try Self.requireMaster(auth, change: "create")
                try services.refuseLockedSchemas()
                let name = input["name"]?.stringValue ?? ""
                let fields = try Self.parseFields(input["schemaFields"], existing: nil)
                let body: JSONValue = ["className": .string(name), "fields": .object(fields)]
                let schema = try await services.schemas.createClass(SchemaChange(className: name, body: body))
                return ["class": ClassValue(schema: try await Self.existing(schema?.className ?? name, services))]
            })
        let update = try RelayMutation.field(
            "updateClass", input: change, output: output, readOnly: true,
            resolve: { input, auth, _ in
                try Self.requireMaster(auth, change: "update")
                try services.refuseLockedSchemas()
                let current = try await Self.existing(input["name"]?.stringValue ?? "", services)
                let fields = try Self.parseFields(input["schemaFields"], existing: current.fields)
                let body: JSONValue = ["className": .string(current.className), "fields": .object(fields)]
                _ = try await services.schemas.changeClass(SchemaChange(className: current.className, body: body))
                return ["class": ClassValue(schema: try await Self.existing(current.className, services))]
            })
        let delete = try RelayMutation.field(
            "deleteClass", input: ["name": InputObjectField(type: GraphQLNonNull(GraphQLString))], output: output, readOnly: true,
            resolve: { input, auth, _ in
                try Self.requireMaster(auth, change: "delete")
                let current = try await Self.existing(input["name"]?.stringValue ?? "", services)
                try await services.schemas.deleteClass(current, queries: services.queries)
                return ["class": ClassValue(schema: current)]
            })
        return [("createClass", create), ("updateClass", update), ("deleteClass", delete)]
    }
}
