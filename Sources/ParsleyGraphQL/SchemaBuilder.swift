import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// Who is asking, handed to every resolver (the same `Auth` a REST route passes to the services), with the files of
/// a multipart request by their `map` key and how the HTTP layer stores one (`createFile`).
struct GraphQLContext: Sendable {
    let auth: Auth
    var uploads: [String: GraphQLUpload] = [:]
    var storeFile: GraphQLService.StoreFile?
}

/// The Domain services the resolvers call: the same ones, with the same rules, as the REST routes.
struct GraphQLServices: Sendable {
    let queries: QueryService
    let objects: ObjectService
    let maxLimit: Int?
    let users: UserService
    let roles: RoleService
    let cloud: CloudRuntime
    let schemas: SchemaService
    /// Parse Server's `schema.lockSchemas`: classes are created and changed only by the definitions.
    let lockSchemas: Bool

    /// 119 while `lockSchemas` is on, with `/schemas`' words.
    func refuseLockedSchemas() throws {
        if lockSchemas { throw ParseError(.operationForbidden, "Cannot perform this operation when schemas options is used.") }
    }
}

/// Builds the GraphQL schema of an app's classes (docs/graphql-contract.md §4, §5): per class an object type, a get
/// and a find query with its connection, where and order types, and create/update/delete mutations.
final class SchemaBuilder {
    let services: GraphQLServices
    let inputs: CommonInputTypes
    let pageInfo: GraphQLObjectType

    init(services: GraphQLServices) throws {
        self.services = services
        self.inputs = try CommonInputTypes()
        self.pageInfo = try Self.pageInfoType()
    }

    func build(_ shapes: [ClassShape]) throws -> GraphQLSchema {
        // Class types refer to each other (pointers): their fields are built once every type exists.
        let table = ObjectTypeTable()
        var objects: [String: GraphQLObjectType] = [:]
        for shape in shapes {
            let type = try objectType(shape, table)
            objects[shape.className] = type
            table[shape.className] = type
        }
        var queries: GraphQLFieldMap = [
            "health": GraphQLField(type: GraphQLNonNull(GraphQLBoolean), resolve: { _, _, _, _ in Map.bool(true) })
        ]
        var mutations: GraphQLFieldMap = [:]
        for shape in shapes {
            guard let object = objects[shape.className] else { continue }
            queries[shape.getName] = getQuery(shape, object)
            queries[shape.findName] = try findQuery(shape, object)
            if shape.hasMutations {
                let mutation = try ClassMutations(shape: shape, object: object, services: services, inputs: inputs)
                for (name, field) in try mutation.fields() { mutations[name] = field }
            }
        }
        let builtIns = try BuiltInOperations(services: services, shapes: shapes, objects: objects, inputs: inputs)
        for (name, field) in builtIns.queries { queries[name] = field }
        for (name, field) in builtIns.mutations { mutations[name] = field }
        let query = try GraphQLObjectType(name: "Query", fields: queries)
        let mutation = mutations.isEmpty ? nil : try GraphQLObjectType(name: "Mutation", fields: mutations)
        return try GraphQLSchema(query: query, mutation: mutation, types: builtIns.types)
    }

    // MARK: Class types

    func objectType(_ shape: ClassShape, _ table: ObjectTypeTable) throws -> GraphQLObjectType {
        let services = self.services
        return try GraphQLObjectType(
            name: shape.typeName,
            fields: {
                var fields: GraphQLFieldMap = [
                    "id": GraphQLField(
                        type: GraphQLNonNull(GraphQLID),
                        resolve: { source, _, _, _ in
                            guard let object = source as? ParseObjectValue, let id = object.fields["objectId"]?.stringValue else { return nil }
                            return Map.string(GraphQLNames.globalId(object.className, id))
                        }),
                    "objectId": GraphQLField(type: GraphQLNonNull(GraphQLID), resolve: Self.value("objectId")),
                    "createdAt": GraphQLField(type: GraphQLNonNull(GraphQLScalars.date), resolve: Self.value("createdAt")),
                    "updatedAt": GraphQLField(type: GraphQLNonNull(GraphQLScalars.date), resolve: Self.value("updatedAt")),
                ]
                for field in shape.fields {
                    if case .pointer(let target) = field.type, let targetType = table[target] {
                        fields[field.name] = GraphQLField(type: targetType, resolve: Self.pointer(field.name, target: target, services))
                    } else {
                        fields[field.name] = GraphQLField(type: Self.outputType(field.type), resolve: Self.value(field.name))
                    }
                }
                return fields
            })
    }

    /// Parse type → GraphQL output type. Pointers to a class that is not shown, and the types this version does not
    /// shape yet (File, GeoPoint, Polygon, Bytes), are `Object` or `Any`: their Parse JSON as it is.
    static func outputType(_ type: FieldType) -> any GraphQLOutputType {
        switch type {
        case .string: return GraphQLString
        case .number: return GraphQLFloat
        case .boolean: return GraphQLBoolean
        case .date: return GraphQLScalars.date
        case .object, .pointer: return GraphQLScalars.object
        case .array: return GraphQLList(GraphQLScalars.any)
        default: return GraphQLScalars.any
        }
    }

    /// A field's stored value (nil when the object lacks it: not set, or hidden by `keys` or protected fields).
    static func value(_ name: String) -> GraphQLFieldResolve {
        { source, _, _, _ in
            guard let object = source as? ParseObjectValue, let value = object.fields[name], value != .null else { return nil }
            return MapJSON.map(value)
        }
    }

    /// A pointer's object, read with a get as the caller (nil when it is gone or the caller may not read it).
    static func pointer(_ name: String, target: String, _ services: GraphQLServices) -> GraphQLFieldResolve {
        { source, _, context, _ in
            guard let object = source as? ParseObjectValue, let context = context as? GraphQLContext,
                case .object(let pointer)? = object.fields[name], let id = pointer["objectId"]?.stringValue
            else { return nil }
            do {
                let fields = try await services.queries.get(target, objectId: id, FindOptions(), auth: context.auth, triggers: true)
                return ParseObjectValue(className: target, fields: fields)
            } catch let error as ParseError where error.code == .objectNotFound {
                return nil
            }
        }
    }

    // MARK: Queries

    /// `g(C)(id: ID!): G!`: a REST get (global id or objectId).
    func getQuery(_ shape: ClassShape, _ object: GraphQLObjectType) -> GraphQLField {
        let (services, className) = (self.services, shape.className)
        return GraphQLField(
            type: GraphQLNonNull(object), args: ["id": GraphQLArgument(type: GraphQLNonNull(GraphQLID))],
            resolve: { _, args, context, _ in
                let auth = try Self.auth(context)
                let id = GraphQLNames.objectId(from: MapJSON.json(args)["id"]?.stringValue ?? "", className: className)
                let fields = try await services.queries.get(className, objectId: id, FindOptions(), auth: auth, triggers: true)
                return ParseObjectValue(className: className, fields: fields)
            })
    }

    /// `plural(g(C))(where, order, skip, after, first): GConnection!`: a REST find.
    func findQuery(_ shape: ClassShape, _ object: GraphQLObjectType) throws -> GraphQLField {
        let connection = try connectionType(shape, object)
        let whereType = try inputs.whereType(shape)
        let order = try inputs.orderType(shape)
        let (services, className) = (self.services, shape.className)
        return GraphQLField(
            type: GraphQLNonNull(connection),
            args: [
                "where": GraphQLArgument(type: whereType), "order": GraphQLArgument(type: GraphQLList(GraphQLNonNull(order))),
                "skip": GraphQLArgument(type: GraphQLInt), "after": GraphQLArgument(type: GraphQLString),
                "first": GraphQLArgument(type: GraphQLInt),
            ],
            resolve: { _, args, context, info in
                let auth = try Self.auth(context)
                let arguments = MapJSON.json(args)
                var find = FindOptions()
                if case .object(let input)? = arguments["where"] { find.whereValue = .object(try GraphQLWhere.parse(input, shape)) }
                if case .array(let keys)? = arguments["order"] { find.order = keys.compactMap { $0.stringValue.flatMap(CommonInputTypes.orderKey) } }
                var skip = arguments["skip"]?.integerValue ?? 0
                guard skip >= 0 else { throw ParseError.invalidQuery("Skip should be a positive number") }
                if case .string(let cursor)? = arguments["after"] {
                    guard let offset = GraphQLNames.offset(fromCursor: cursor) else { throw ParseError.invalidQuery("After is not a valid cursor") }
                    skip += offset + 1
                }
                let selected = Selections.names(info)
                let pageInfo = Selections.names(under: "pageInfo", info)
                var limit: Int
                if let first = arguments["first"]?.integerValue {
                    guard first >= 0 else { throw ParseError.invalidQuery("First should be a positive number") }
                    limit = first
                } else {
                    limit = selected.contains("edges") || selected.contains("pageInfo") ? 100 : 0
                }
                if let maxLimit = services.maxLimit { limit = min(limit, maxLimit) }
                find.skip = skip
                find.limit = limit
                find.count = selected.contains("count") || pageInfo.contains("hasNextPage") || pageInfo.contains("hasPreviousPage")
                let page = try await services.queries.find(className, find, auth: auth, triggers: true)
                return ConnectionValue(
                    objects: page.results.map { ParseObjectValue(className: className, fields: $0) }, count: page.count, skip: skip)
            })
    }

    /// `GConnection { count: Int!, edges: [GEdge], pageInfo: PageInfo! }` and `GEdge { node: G, cursor: String! }`.
    func connectionType(_ shape: ClassShape, _ object: GraphQLObjectType) throws -> GraphQLObjectType {
        let edge = try GraphQLObjectType(
            name: shape.typeName + "Edge",
            fields: [
                "node": GraphQLField(type: object, resolve: { source, _, _, _ in (source as? EdgeValue)?.node }),
                "cursor": GraphQLField(
                    type: GraphQLNonNull(GraphQLString), resolve: { source, _, _, _ in (source as? EdgeValue).map { Map.string($0.cursor) } }),
            ])
        return try GraphQLObjectType(
            name: shape.typeName + "Connection",
            fields: [
                "count": GraphQLField(
                    type: GraphQLNonNull(GraphQLInt),
                    resolve: { source, _, _, _ in (source as? ConnectionValue).map { Map.int($0.count ?? $0.objects.count) } }),
                "edges": GraphQLField(
                    type: GraphQLList(edge),
                    resolve: { source, _, _, _ in
                        guard let connection = source as? ConnectionValue else { return nil }
                        return connection.objects.enumerated().map { i, node in
                            EdgeValue(node: node, cursor: GraphQLNames.cursor(connection.skip + i))
                        }
                    }),
                "pageInfo": GraphQLField(type: GraphQLNonNull(pageInfo), resolve: { source, _, _, _ in source as? ConnectionValue }),
            ])
    }

    /// Relay's `PageInfo`, from a connection (docs/graphql-contract.md §4.4).
    static func pageInfoType() throws -> GraphQLObjectType {
        func resolve(_ value: @escaping @Sendable (ConnectionValue) -> Map) -> GraphQLFieldResolve {
            { source, _, _, _ in (source as? ConnectionValue).map(value) }
        }
        return try GraphQLObjectType(
            name: "PageInfo",
            fields: [
                "hasNextPage": GraphQLField(
                    type: GraphQLNonNull(GraphQLBoolean), resolve: resolve { .bool(($0.count ?? 0) > $0.skip + $0.objects.count) }),
                "hasPreviousPage": GraphQLField(
                    type: GraphQLNonNull(GraphQLBoolean), resolve: resolve { .bool(($0.count ?? 0) > 0 && $0.skip > 0) }),
                "startCursor": GraphQLField(type: GraphQLString, resolve: resolve { .string(GraphQLNames.cursor($0.skip)) }),
                "endCursor": GraphQLField(
                    type: GraphQLString, resolve: resolve { .string(GraphQLNames.cursor($0.skip + max($0.objects.count, 1) - 1)) }),
            ])
    }

    static func auth(_ context: any Sendable) throws -> Auth {
        guard let context = context as? GraphQLContext else { throw ParseError(.internalServerError, "Internal server error") }
        return context.auth
    }
}

/// A find's answer on its way to the connection's fields.
struct ConnectionValue: Sendable {
    let objects: [ParseObjectValue]
    let count: Int?
    let skip: Int
}

struct EdgeValue: Sendable {
    let node: ParseObjectValue
    let cursor: String
}

/// The class types by Parse class name while the schema is built (held weakly: the schema keeps the types).
final class ObjectTypeTable {
    private struct Entry {
        weak var type: GraphQLObjectType?
    }
    private var entries: [String: Entry] = [:]

    subscript(className: String) -> GraphQLObjectType? {
        get { entries[className]?.type }
        set { entries[className] = Entry(type: newValue) }
    }
}
