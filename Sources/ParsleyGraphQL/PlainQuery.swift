import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// What a root query field of the generated schema reads (`PlainQuery` runs these itself).
enum RootRead: Sendable {
    /// `g(C)(id:)`: a get of the class.
    case get(ClassShape, GraphQLField)
    /// `plural(g(C))(where:, order:, ...)`: a find of the class as a connection.
    case find(ConnectionQuery, GraphQLField)
}

/// A schema built from the app's classes, with what `PlainQuery` needs of it: the root reads by field name and the
/// planner of its class types.
struct BuiltSchema: Sendable {
    let schema: GraphQLSchema
    let roots: [String: RootRead]
    let planner: ReadPlanner
}

/// A query that only reads classes (their gets and finds, the connections' `count`, `edges`, `cursor`, `pageInfo`,
/// the objects' scalar fields and pointers, `__typename`), compiled once per document and schema and answered without
/// the GraphQL library's executor, which spends most of a find's time on a task, a reflection and a dynamic cast per
/// field (issue 32's benchmark). It calls the same services, with the same read plans, as the resolvers do, and
/// writes the answer the library would. What it does not know (other operations, directives, relations, arrays,
/// files, ACLs, an argument it cannot coerce) leaves the document to the library; so do a read that fails and a null
/// where the schema says non-null, whose errors the library words.
struct PlainQuery: @unchecked Sendable {
    let operationName: String?
    let roots: [(key: String, root: Root)]
    let variableDefaults: Set<String>
    let services: GraphQLServices
    let planner: ReadPlanner

    enum Root {
        case typename
        case get(shape: ClassShape, arguments: GraphQLArgumentConfigMap, scope: FieldScope, object: PlainObject)
        case find(query: ConnectionQuery, arguments: GraphQLArgumentConfigMap, scope: FieldScope, connection: PlainConnection)
    }

    /// The document as a plain query over `built`, or nil when it is not one (it must hold exactly one operation, a
    /// query).
    init?(_ document: Document, _ built: BuiltSchema, services: GraphQLServices) {
        let operations = document.definitions.compactMap { $0 as? OperationDefinition }
        guard operations.count == 1, let operation = operations.first, operation.operation == .query else { return nil }
        var fragments: [String: FragmentDefinition] = [:]
        for case let fragment as FragmentDefinition in document.definitions {
            guard fragment.directives.isEmpty else { return nil }
            fragments[fragment.name.value] = fragment
        }
        let compiler = PlainCompiler(fragments: fragments, planner: built.planner)
        guard let fields = compiler.grouped([operation.selectionSet], typeName: "Query") else { return nil }
        var roots: [(String, Root)] = []
        for (key, occurrences) in fields {
            let first = occurrences[0]
            let scope = FieldScope(fields: occurrences, fragments: fragments)
            switch (first.name.value, built.roots[first.name.value]) {
            case ("__typename", _): roots.append((key, .typename))
            case (_, .get(let shape, let field)?):
                guard let object = compiler.object(occurrences.compactMap(\.selectionSet), shape) else { return nil }
                roots.append((key, .get(shape: shape, arguments: field.args, scope: scope, object: object)))
            case (_, .find(let query, let field)?):
                guard let connection = compiler.connection(occurrences.compactMap(\.selectionSet), query.shape) else { return nil }
                roots.append((key, .find(query: query, arguments: field.args, scope: scope, connection: connection)))
            default: return nil
            }
        }
        self.operationName = operation.name?.value
        self.roots = roots
        self.variableDefaults = Set(operation.variableDefinitions.filter { $0.defaultValue != nil }.map(\.variable.name.value))
        self.services = services
        self.planner = built.planner
    }

    /// Falls back to the library's executor.
    struct NotPlain: Error {}

    /// The answer's JSON text (`{"data":{...}}`), or nil: the library answers instead.
    func answer(variables: [String: Map], auth: Auth) async -> String? {
        let inputs = InputCoercion(variables: variables, defaulted: variableDefaults)
        var out = "{\"data\":{"
        do {
            for (index, (key, root)) in roots.enumerated() {
                if index > 0 { out += "," }
                out += JSONWriter.string(.string(key)) + ":"
                switch root {
                case .typename:
                    out += "\"Query\""
                case .get(let shape, let arguments, let scope, let object):
                    let args = MapJSON.json(try inputs.arguments(scope.fields[0], arguments))
                    let id = GraphQLNames.objectId(from: args["id"]?.stringValue ?? "", className: shape.className)
                    let find = planner.plan(scope, shape).applied()
                    let fields = try await services.queries.get(shape.className, objectId: id, find, auth: auth, triggers: true)
                    try await write(ParseObjectValue(className: shape.className, fields: fields), object, auth, into: &out)
                case .find(let query, let arguments, let scope, let connection):
                    let args = MapJSON.json(try inputs.arguments(scope.fields[0], arguments))
                    let page = try await query.run(args, auth: auth, scope)
                    try await write(page, connection, auth, into: &out)
                }
            }
        } catch {
            return nil
        }
        return out + "}}"
    }

    private func write(_ page: ConnectionValue, _ connection: PlainConnection, _ auth: Auth, into out: inout String) async throws {
        out += "{"
        for (index, (key, entry)) in connection.entries.enumerated() {
            if index > 0 { out += "," }
            out += JSONWriter.string(.string(key)) + ":"
            switch entry {
            case .typename(let name): out += JSONWriter.string(.string(name))
            case .count: try Self.leaf(.int(page.count ?? page.objects.count), GraphQLInt, into: &out)
            case .pageInfo(let entries):
                out += "{"
                for (i, (key, field)) in entries.enumerated() {
                    if i > 0 { out += "," }
                    out += JSONWriter.string(.string(key)) + ":"
                    switch field {
                    case .typename: out += "\"PageInfo\""
                    case .hasNextPage: out += page.hasNextPage ? "true" : "false"
                    case .hasPreviousPage: out += page.hasPreviousPage ? "true" : "false"
                    case .startCursor: out += JSONWriter.string(.string(page.startCursor))
                    case .endCursor: out += JSONWriter.string(.string(page.endCursor))
                    }
                }
                out += "}"
            case .edges(let edge):
                out += "["
                for (i, node) in page.objects.enumerated() {
                    if i > 0 { out += "," }
                    out += "{"
                    for (j, (key, field)) in edge.entries.enumerated() {
                        if j > 0 { out += "," }
                        out += JSONWriter.string(.string(key)) + ":"
                        switch field {
                        case .typename(let name): out += JSONWriter.string(.string(name))
                        case .cursor: out += JSONWriter.string(.string(page.cursor(i)))
                        case .node(let object): try await write(node, object, auth, into: &out)
                        }
                    }
                    out += "}"
                }
                out += "]"
            }
        }
        out += "}"
    }

    private func write(_ object: ParseObjectValue, _ selection: PlainObject, _ auth: Auth, into out: inout String) async throws {
        out += "{"
        for (index, (key, entry)) in selection.entries.enumerated() {
            if index > 0 { out += "," }
            out += JSONWriter.string(.string(key)) + ":"
            switch entry {
            case .typename(let name): out += JSONWriter.string(.string(name))
            case .globalId:
                guard let id = object.fields["objectId"]?.stringValue else { throw NotPlain() }
                out += JSONWriter.string(.string(GraphQLNames.globalId(object.className, id)))
            case .leaf(let name, let type, let nonNull):
                guard let value = object.fields[name], value != .null else {
                    if nonNull { throw NotPlain() }
                    out += "null"
                    continue
                }
                try Self.leaf(MapJSON.map(value), type, into: &out)
            case .pointer(let name, let target, let scope, let nonNull):
                let pointed = try await SchemaBuilder.pointedObject(
                    object.fields[name], target: target.shape.className, scope, planner, services, auth: auth)
                guard let pointed else {
                    if nonNull { throw NotPlain() }
                    out += "null"
                    continue
                }
                try await write(pointed, target, auth, into: &out)
            }
        }
        out += "}"
    }

    /// A leaf value serialized by its GraphQL type, as the library's executor does.
    private static func leaf(_ value: Map, _ type: any GraphQLLeafType, into out: inout String) throws {
        let serialized = try type.serialize(value: value)
        guard serialized != .null, serialized != .undefined else { throw NotPlain() }
        MapJSON.write(serialized, into: &out)
    }
}

/// What a plain query selects of a class type's object, by response key.
final class PlainObject {
    let shape: ClassShape
    var entries: [(key: String, entry: Entry)] = []

    enum Entry {
        case typename(String)
        /// `id`: the Relay global id.
        case globalId
        /// A stored scalar (`objectId`, `createdAt`, a String, Number, Boolean, Date, Bytes or Object field).
        case leaf(name: String, type: any GraphQLLeafType, nonNull: Bool)
        /// A pointer to a class shown, and what is selected of its object.
        case pointer(name: String, target: PlainObject, scope: FieldScope, nonNull: Bool)
    }

    init(shape: ClassShape) {
        self.shape = shape
    }
}

/// What a plain query selects of a find's connection, by response key.
struct PlainConnection {
    var entries: [(key: String, entry: Entry)] = []

    enum Entry {
        case typename(String)
        case count
        case edges(PlainEdge)
        case pageInfo([(key: String, field: PageInfoField)])
    }

    enum PageInfoField {
        case typename, hasNextPage, hasPreviousPage, startCursor, endCursor
    }
}

/// What a plain query selects of a connection's edge.
struct PlainEdge {
    var entries: [(key: String, entry: Entry)] = []

    enum Entry {
        case typename(String)
        case cursor
        case node(PlainObject)
    }
}
