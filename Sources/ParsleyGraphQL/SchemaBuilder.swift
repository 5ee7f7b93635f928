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
    /// The app's id, in the URLs of files (`<mount>/files/<appId>/<name>`).
    var applicationId = ""

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
        self.inputs = try CommonInputTypes(fieldTypes: try FieldTypes(applicationId: services.applicationId))
        self.pageInfo = try Self.pageInfoType()
    }

    func build(_ shapes: [ClassShape]) throws -> BuiltSchema {
        // Class types refer to each other (pointers, relations): their fields are built once every type exists.
        let classInputs = try inputs.prepare(shapes)
        let context = try classTypeContext(shapes)
        var objects: [String: GraphQLObjectType] = [:]
        var connections: [String: GraphQLObjectType] = [:]
        var orders: [String: GraphQLEnumType] = [:]
        for shape in shapes {
            let type = try objectType(shape, context)
            (objects[shape.className], context.objects[shape.className]) = (type, type)
            connections[shape.className] = try connectionType(shape, type)
            context.connections[shape.className] = connections[shape.className]
            orders[shape.className] = try inputs.orderType(shape)
            context.orders[shape.className] = orders[shape.className]
        }
        var queries: GraphQLFieldMap = [
            "health": GraphQLField(type: GraphQLNonNull(GraphQLBoolean), resolve: { _, _, _, _ in Map.bool(true) }),
            "node": NodeQuery.field(inputs.fieldTypes.node, planner: context.planner, services: services),
        ]
        var mutations: GraphQLFieldMap = [:]
        var roots: [String: RootRead] = [:]
        for shape in shapes {
            guard let object = objects[shape.className], let connection = connections[shape.className], let order = orders[shape.className]
            else { continue }
            if let name = shape.getName {
                let field = getQuery(shape, object, context.planner)
                (queries[name], roots[name]) = (field, .get(shape, field))
            }
            if let name = shape.findName {
                let field = try findQuery(shape, connection, order, context.planner)
                (queries[name], roots[name]) = (field, .find(ConnectionQuery(shape: shape, planner: context.planner, services: services), field))
            }
            if shape.hasMutations {
                let mutation = try ClassMutations(shape: shape, object: object, services: services, inputs: inputs, planner: context.planner)
                for (name, field) in try mutation.fields() { mutations[name] = field }
            }
        }
        let builtIns = try BuiltInOperations(services: services, shapes: shapes, objects: objects, inputs: inputs)
        for (name, field) in builtIns.queries {
            queries[name] = field
            roots[name] = nil
        }
        for (name, field) in builtIns.mutations { mutations[name] = field }
        let query = try GraphQLObjectType(name: "Query", fields: queries)
        let mutation = mutations.isEmpty ? nil : try GraphQLObjectType(name: "Mutation", fields: mutations)
        let subscription = try LiveSubscriptions.subscriptionType(shapes, objects: objects, inputs: inputs)
        let schema = try withExtendedLifetime(classInputs) {
            try GraphQLSchema(query: query, mutation: mutation, subscription: subscription, types: builtIns.types)
        }
        return BuiltSchema(schema: schema, roots: roots, planner: context.planner)
    }

    /// The tables class types fill while they are built, and the `ArrayResult` union of them all.
    func classTypeContext(_ shapes: [ClassShape]) throws -> ClassTypeContext {
        let objects = WeakTypeTable<GraphQLObjectType>()
        return ClassTypeContext(
            objects: objects, connections: WeakTypeTable(), orders: WeakTypeTable(),
            arrayResult: try inputs.fieldTypes.arrayResult(objects, classNames: shapes.map(\.className)),
            planner: ReadPlanner(shapes: Dictionary(shapes.map { ($0.className, $0) }, uniquingKeysWith: { a, _ in a })))
    }

    // MARK: Queries

    /// `g(C)(id: ID!): G!`: a REST get (global id or objectId) with the keys and include the selection needs.
    func getQuery(_ shape: ClassShape, _ object: GraphQLObjectType, _ planner: ReadPlanner) -> GraphQLField {
        let (services, className) = (self.services, shape.className)
        return GraphQLField(
            type: GraphQLNonNull(object),
            args: [
                "id": GraphQLArgument(type: GraphQLNonNull(GraphQLID)), "options": GraphQLArgument(type: inputs.fieldTypes.readOptions),
            ],
            resolve: { _, args, context, info in
                let auth = try Self.auth(context)
                let id = GraphQLNames.objectId(from: MapJSON.json(args)["id"]?.stringValue ?? "", className: className)
                let find = planner.plan(info, shape).applied()
                let fields = try await services.queries.get(className, objectId: id, find, auth: auth, triggers: true)
                return ParseObjectValue(className: className, fields: fields)
            })
    }

    /// `plural(g(C))(where, order, skip, after, first, before, last): GConnection!`: a REST find.
    func findQuery(
        _ shape: ClassShape, _ connection: GraphQLObjectType, _ order: GraphQLEnumType, _ planner: ReadPlanner
    ) throws -> GraphQLField {
        let query = ConnectionQuery(shape: shape, planner: planner, services: services)
        return GraphQLField(
            type: GraphQLNonNull(connection), args: ConnectionQuery.arguments(try inputs.whereType(shape), order, inputs.fieldTypes.readOptions),
            resolve: { _, args, context, info in try await query.run(MapJSON.json(args), auth: try Self.auth(context), FieldScope(info)) })
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
                            EdgeValue(node: node, cursor: connection.cursor(i))
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
                "hasNextPage": GraphQLField(type: GraphQLNonNull(GraphQLBoolean), resolve: resolve { .bool($0.hasNextPage) }),
                "hasPreviousPage": GraphQLField(type: GraphQLNonNull(GraphQLBoolean), resolve: resolve { .bool($0.hasPreviousPage) }),
                "startCursor": GraphQLField(type: GraphQLString, resolve: resolve { .string($0.startCursor) }),
                "endCursor": GraphQLField(type: GraphQLString, resolve: resolve { .string($0.endCursor) }),
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

    /// `PageInfo`'s fields (docs/graphql-contract.md §4.4).
    var hasNextPage: Bool { (count ?? 0) > skip + objects.count }
    var hasPreviousPage: Bool { (count ?? 0) > 0 && skip > 0 }
    var startCursor: String { GraphQLNames.cursor(skip) }
    var endCursor: String { GraphQLNames.cursor(skip + max(objects.count, 1) - 1) }
    /// The cursor of the object at `index` of this page.
    func cursor(_ index: Int) -> String { GraphQLNames.cursor(skip + index) }
}

struct EdgeValue: Sendable {
    let node: ParseObjectValue
    let cursor: String
}
