import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// The types a class type's fields name, by Parse class name, while the schema is built: class types, connections
/// and order enums (held weakly, the schema keeps them), the `ArrayResult` union and the classes shown.
struct ClassTypeContext {
    let objects: WeakTypeTable<GraphQLObjectType>
    let connections: WeakTypeTable<GraphQLObjectType>
    let orders: WeakTypeTable<GraphQLEnumType>
    let arrayResult: GraphQLUnionType
    let planner: ReadPlanner

    var shapes: [String: ClassShape] { planner.shapes }
}

extension SchemaBuilder {
    /// `G(C)` (docs/graphql-contract.md §4.1): `id`, `objectId`, `createdAt`, `updatedAt`, `ACL` and a field per
    /// schema field, implementing `Node` and `ParseObject`. Pointers resolve to their target's type, relations to a
    /// connection of it, arrays to `[ArrayResult]`.
    func objectType(_ shape: ClassShape, _ context: ClassTypeContext) throws -> GraphQLObjectType {
        let (services, inputs, fieldTypes) = (self.services, self.inputs, self.inputs.fieldTypes)
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
                    "ACL": GraphQLField(
                        type: GraphQLNonNull(fieldTypes.acl),
                        resolve: { source, _, _, _ in FieldTypes.aclOutput((source as? ParseObjectValue)?.fields["ACL"]) }),
                ]
                if shape.className == "_User" {
                    // What the auth adapters answered a sign-up or log-in (only on `viewer.user` of those mutations).
                    fields["authDataResponse"] = GraphQLField(type: GraphQLScalars.object, resolve: Self.value("authDataResponse"))
                }
                let shown = Set(context.shapes.keys)
                for field in shape.outputFields {
                    let type: any GraphQLOutputType
                    let resolve: GraphQLFieldResolve
                    switch field.type {
                    case .pointer(let target):
                        if let targetType = context.objects[target] {
                            (type, resolve) = (targetType, Self.pointer(field.name, target: target, context.planner, services))
                        } else {
                            (type, resolve) = (GraphQLScalars.object, Self.value(field.name))
                        }
                    case .relation(let target):
                        guard let connection = context.connections[target], let order = context.orders[target],
                            let whereType = inputs.classes[target]?.whereInput, let targetShape = context.shapes[target]
                        else { continue }
                        fields[field.name] = GraphQLField(
                            type: GraphQLNonNull(connection), args: ConnectionQuery.arguments(whereType, order, fieldTypes.readOptions),
                            resolve: Self.relation(field.name, ConnectionQuery(shape: targetShape, planner: context.planner, services: services)))
                        continue
                    case .array:
                        type = GraphQLList(context.arrayResult)
                        resolve = { source, _, _, _ in
                            guard let value = (source as? ParseObjectValue)?.fields[field.name] else { return nil }
                            return FieldTypes.arrayItems(value, shown: shown)
                        }
                    default:
                        let (name, fieldType) = field
                        type = fieldTypes.outputType(fieldType)
                        resolve = { source, _, _, _ in
                            guard let value = (source as? ParseObjectValue)?.fields[name], value != .null else { return nil }
                            return FieldTypes.output(value, fieldType)
                        }
                    }
                    // A required field is non-null (§4.1).
                    let required = shape.schema.fieldOptions[field.name]?.isRequired == true
                    if required, let nullable = type as? any GraphQLNullableType {
                        fields[field.name] = GraphQLField(type: GraphQLNonNull(nullable), resolve: resolve)
                    } else {
                        fields[field.name] = GraphQLField(type: type, resolve: resolve)
                    }
                }
                return fields
            },
            interfaces: { [fieldTypes.node, fieldTypes.parseObject] })
    }

    /// A field's stored value (nil when the object lacks it: not set, or hidden by `keys` or protected fields).
    static func value(_ name: String) -> GraphQLFieldResolve {
        { source, _, _, _ in
            guard let object = source as? ParseObjectValue, let value = object.fields[name], value != .null else { return nil }
            return MapJSON.map(value)
        }
    }

    /// A pointer's object: the one the read of its holder included (nil when it was dropped: gone, or the caller may
    /// not read it), or, for a bare pointer (not included, too deep), read with a get as the caller with the keys and
    /// include its own selection needs.
    static func pointer(_ name: String, target: String, _ planner: ReadPlanner, _ services: GraphQLServices) -> GraphQLFieldResolve {
        { source, _, context, info in
            guard let object = source as? ParseObjectValue, let context = context as? GraphQLContext else { return nil }
            return try await pointedObject(object.fields[name], target: target, FieldScope(info), planner, services, auth: context.auth)
        }
    }

    /// The object a pointer field's stored `value` names, for the selection `scope`: the included object, else a get
    /// (nil: no pointer, or an object gone or hidden from `auth`).
    static func pointedObject(
        _ value: JSONValue?, target: String, _ scope: FieldScope, _ planner: ReadPlanner, _ services: GraphQLServices, auth: Auth
    ) async throws -> ParseObjectValue? {
        guard case .object(var pointer)? = value else { return nil }
        if pointer["__type"] == "Object" {
            pointer["__type"] = nil
            pointer["className"] = nil
            return ParseObjectValue(className: target, fields: pointer)
        }
        guard let id = pointer["objectId"]?.stringValue else { return nil }
        let find = planner.shapes[target].map { planner.plan(scope, $0).applied() } ?? FindOptions()
        do {
            let fields = try await services.queries.get(target, objectId: id, find, auth: auth, triggers: true)
            return ParseObjectValue(className: target, fields: fields)
        } catch let error as ParseError where error.code == .objectNotFound {
            return nil
        }
    }

    /// A relation's connection: a find of its target class with `$relatedTo` this object and field, as the caller
    /// (so the target's ACL and CLP apply).
    static func relation(_ name: String, _ query: ConnectionQuery) -> GraphQLFieldResolve {
        { source, args, context, info in
            guard let object = source as? ParseObjectValue, let id = object.fields["objectId"]?.stringValue else { return nil }
            let relatedTo: JSONValue = [
                "object": ["__type": "Pointer", "className": .string(object.className), "objectId": .string(id)], "key": .string(name),
            ]
            return try await query.run(MapJSON.json(args), constraint: ["$relatedTo": relatedTo], auth: try auth(context), FieldScope(info))
        }
    }
}

/// GraphQL types by Parse class name while the schema is built, held weakly (the schema keeps the types), so that
/// types naming each other do not keep each other alive.
final class WeakTypeTable<T: AnyObject> {
    private struct Entry {
        weak var type: T?
    }
    private var entries: [String: Entry] = [:]

    subscript(className: String) -> T? {
        get { entries[className]?.type }
        set { entries[className] = Entry(type: newValue) }
    }
}
