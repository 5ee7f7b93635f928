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
final class PlainQuery: @unchecked Sendable {
    let operationName: String?
    /// The roots by response key, the key as its JSON text with its colon (`"items":`).
    let roots: [(key: [UInt8], root: Root)]
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
        var roots: [([UInt8], Root)] = []
        for (key, occurrences) in fields {
            let first = occurrences[0]
            let scope = FieldScope(fields: occurrences, fragments: fragments)
            let key = PlainCompiler.encoded(key)
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
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        out.append(contentsOf: #"{"data":{"#.utf8)
        do {
            for (index, (key, root)) in roots.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: key)
                switch root {
                case .typename:
                    out.append(contentsOf: #""Query""#.utf8)
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
        out.append(contentsOf: "}}".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    private func write(_ page: ConnectionValue, _ connection: PlainConnection, _ auth: Auth, into out: inout [UInt8]) async throws {
        out.append(UInt8(ascii: "{"))
        for (index, (key, entry)) in connection.entries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: key)
            switch entry {
            case .typename(let name): JSONWriter.writeString(name, into: &out)
            case .count: out.append(contentsOf: String(page.count ?? page.objects.count).utf8)
            case .pageInfo(let entries):
                out.append(UInt8(ascii: "{"))
                for (i, (key, field)) in entries.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(contentsOf: key)
                    switch field {
                    case .typename: out.append(contentsOf: #""PageInfo""#.utf8)
                    case .hasNextPage: out.append(contentsOf: (page.hasNextPage ? "true" : "false").utf8)
                    case .hasPreviousPage: out.append(contentsOf: (page.hasPreviousPage ? "true" : "false").utf8)
                    case .startCursor: JSONWriter.writeString(page.startCursor, into: &out)
                    case .endCursor: JSONWriter.writeString(page.endCursor, into: &out)
                    }
                }
                out.append(UInt8(ascii: "}"))
            case .edges(let edge):
                out.append(UInt8(ascii: "["))
                for (i, node) in page.objects.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(UInt8(ascii: "{"))
                    for (j, (key, field)) in edge.entries.enumerated() {
                        if j > 0 { out.append(UInt8(ascii: ",")) }
                        out.append(contentsOf: key)
                        switch field {
                        case .typename(let name): JSONWriter.writeString(name, into: &out)
                        case .cursor: JSONWriter.writeString(page.cursor(i), into: &out)
                        case .node(let object): try await write(node, object, auth, into: &out)
                        }
                    }
                    out.append(UInt8(ascii: "}"))
                }
                out.append(UInt8(ascii: "]"))
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    private func write(_ object: ParseObjectValue, _ selection: PlainObject, _ auth: Auth, into out: inout [UInt8]) async throws {
        out.append(UInt8(ascii: "{"))
        for (index, (key, entry)) in selection.entries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: key)
            switch entry {
            case .typename(let name): JSONWriter.writeString(name, into: &out)
            case .globalId:
                guard let id = object.fields["objectId"]?.stringValue else { throw NotPlain() }
                JSONWriter.writeString(GraphQLNames.globalId(object.className, id), into: &out)
            case .leaf(let name, let type, let kind, let nonNull):
                guard let value = object.fields[name], value != .null else {
                    if nonNull { throw NotPlain() }
                    out.append(contentsOf: "null".utf8)
                    continue
                }
                try Self.leaf(value, type, kind, into: &out)
            case .pointer(let name, let target, let scope, let nonNull):
                let pointed = try await SchemaBuilder.pointedObject(
                    object.fields[name], target: target.shape.className, scope, planner, services, auth: auth)
                guard let pointed else {
                    if nonNull { throw NotPlain() }
                    out.append(contentsOf: "null".utf8)
                    continue
                }
                try await write(pointed, target, auth, into: &out)
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A stored value of a leaf field as the library's executor writes it: the common cases (a string of a `String`,
    /// `ID` or `Date`, a number of a `Float`, a boolean of a `Boolean`) directly, anything else serialized by its
    /// GraphQL type.
    private static func leaf(_ value: JSONValue, _ type: any GraphQLLeafType, _ kind: LeafKind, into out: inout [UInt8]) throws {
        switch (kind, value) {
        case (.text, .string(let text)):
            JSONWriter.writeString(text, into: &out)
            return
        case (.float, .int(let n)) where n.magnitude < 9_007_199_254_740_992:
            JSONWriter.write(value, into: &out)
            return
        case (.float, .double), (.boolean, .bool):
            JSONWriter.write(value, into: &out)
            return
        case (.date, .object(let fields)) where fields["__type"] == "Date":
            guard case .string(let iso)? = fields["iso"] else { break }
            JSONWriter.writeString(iso, into: &out)
            return
        case (.date, .string(let iso)):
            JSONWriter.writeString(iso, into: &out)
            return
        default: break
        }
        let serialized = try type.serialize(value: MapJSON.map(value))
        guard serialized != .null, serialized != .undefined else { throw NotPlain() }
        var text = ""
        MapJSON.write(serialized, into: &text)
        out.append(contentsOf: text.utf8)
    }
}

/// How `PlainQuery` writes a leaf's value without its GraphQL type's `serialize` (see `PlainQuery.leaf`).
enum LeafKind {
    /// `String`, `ID`.
    case text
    case float, boolean, date
    /// Anything else: serialized by its type.
    case other

    init(_ type: any GraphQLLeafType) {
        switch type.name {
        case "String", "ID": self = .text
        case "Float": self = .float
        case "Boolean": self = .boolean
        case "Date": self = .date
        default: self = .other
        }
    }
}

/// What a plain query selects of a class type's object, by response key.
final class PlainObject {
    let shape: ClassShape
    /// By response key, as its JSON text with its colon.
    var entries: [(key: [UInt8], entry: Entry)] = []

    enum Entry {
        case typename(String)
        /// `id`: the Relay global id.
        case globalId
        /// A stored scalar (`objectId`, `createdAt`, a String, Number, Boolean, Date, Bytes or Object field).
        case leaf(name: String, type: any GraphQLLeafType, kind: LeafKind, nonNull: Bool)
        /// A pointer to a class shown, and what is selected of its object.
        case pointer(name: String, target: PlainObject, scope: FieldScope, nonNull: Bool)
    }

    init(shape: ClassShape) {
        self.shape = shape
    }
}

/// What a plain query selects of a find's connection, by response key.
struct PlainConnection {
    var entries: [(key: [UInt8], entry: Entry)] = []

    enum Entry {
        case typename(String)
        case count
        case edges(PlainEdge)
        case pageInfo([(key: [UInt8], field: PageInfoField)])
    }

    enum PageInfoField {
        case typename, hasNextPage, hasPreviousPage, startCursor, endCursor
    }
}

/// What a plain query selects of a connection's edge.
struct PlainEdge {
    var entries: [(key: [UInt8], entry: Entry)] = []

    enum Entry {
        case typename(String)
        case cursor
        case node(PlainObject)
    }
}
