import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// A mutation's answer: the object and the client's `clientMutationId`, echoed.
struct MutationValue: Sendable {
    let object: ParseObjectValue
    let clientMutationId: JSONValue?
}

/// `createG`, `updateG`, `deleteG` of one class: Relay mutations with a single `input` argument, run as a REST
/// create, update and delete under the caller's auth (docs/graphql-contract.md §5).
struct ClassMutations {
    let shape: ClassShape
    let object: GraphQLObjectType
    let services: GraphQLServices
    let inputs: CommonInputTypes
    /// Keys and include of the re-reads, from what the payload's object selects.
    let planner: ReadPlanner

    /// Fields an answer has without reading the object again.
    static let known: Set<String> = ["id", "objectId", "createdAt", "updatedAt", "__typename"]

    init(shape: ClassShape, object: GraphQLObjectType, services: GraphQLServices, inputs: CommonInputTypes, planner: ReadPlanner) throws {
        self.shape = shape
        self.planner = planner
        self.object = object
        self.services = services
        self.inputs = inputs
    }

    func fields() throws -> [(String, GraphQLField)] {
        let (services, shape, objectField, planner) = (self.services, self.shape, self.shape.objectFieldName, self.planner)
        /// The re-read of the object the payload selects.
        @Sendable func reread(_ id: String, _ auth: Auth, _ info: GraphQLResolveInfo) async throws -> [String: JSONValue] {
            let find = planner.plan(Selections.sets(under: [objectField], info), shape, info.fragments).applied()
            return try await services.queries.get(shape.className, objectId: id, find, auth: auth, triggers: true)
        }
        let shapes = inputs.classes.shapes
        let create = try mutation(
            "Create", input: ["fields": InputObjectField(type: try inputs.fieldsType(shape, create: true))],
            resolve: { input, context, info in
                let auth = context.auth
                let body = try await FieldInputs(shapes: shapes, services: services, context: context).body(input["fields"], shape, update: false)
                var object = try await services.objects.create(shape.className, CreateObject(body), auth: auth)
                object["updatedAt"] = object["createdAt"]
                let selected = Selections.names(under: objectField, info)
                if !selected.isSubset(of: Self.known), let id = object["objectId"]?.stringValue {
                    object = try await reread(id, auth, info)
                }
                return object
            })
        let update = try mutation(
            "Update",
            input: [
                "id": InputObjectField(type: GraphQLNonNull(GraphQLID)),
                "fields": InputObjectField(type: try inputs.fieldsType(shape, create: false)),
            ],
            resolve: { input, context, info in
                let auth = context.auth
                let id = GraphQLNames.objectId(from: input["id"]?.stringValue ?? "", className: shape.className)
                let body = try await FieldInputs(shapes: shapes, services: services, context: context).body(input["fields"], shape, update: true)
                var object = try await services.objects.update(shape.className, objectId: id, UpdateObject(body), auth: auth)
                object["objectId"] = .string(id)
                if !Selections.names(under: objectField, info).isSubset(of: ["id", "objectId", "updatedAt", "__typename"]) {
                    object = try await reread(id, auth, info)
                }
                return object
            })
        let delete = try mutation(
            "Delete", input: ["id": InputObjectField(type: GraphQLNonNull(GraphQLID))],
            resolve: { input, context, info in
                let auth = context.auth
                let id = GraphQLNames.objectId(from: input["id"]?.stringValue ?? "", className: shape.className)
                var object: [String: JSONValue] = ["objectId": .string(id)]
                // Its last state, read before it goes, when more than its id is asked for.
                if !Selections.names(under: objectField, info).isSubset(of: ["id", "objectId", "__typename"]) {
                    object = try await reread(id, auth, info)
                }
                try await services.objects.delete(shape.className, objectId: id, auth: auth)
                return object
            })
        return [(shape.createName, create), (shape.updateName, update), (shape.deleteName, delete)].compactMap { name, field in
            name.map { ($0, field) }
        }
    }

    typealias Resolve = @Sendable (_ input: JSONValue, _ context: GraphQLContext, _ info: GraphQLResolveInfo) async throws -> [String: JSONValue]

    /// `<kind>G(input: <Kind>GInput!): <Kind>GPayload` with `clientMutationId` on both sides.
    func mutation(_ kind: String, input fields: InputObjectFieldMap, resolve: @escaping Resolve) throws -> GraphQLField {
        var inputFields = fields
        inputFields["clientMutationId"] = InputObjectField(type: GraphQLString)
        let input = try GraphQLInputObjectType(name: kind + shape.typeName + "Input", fields: inputFields)
        let payload = try GraphQLObjectType(
            name: kind + shape.typeName + "Payload",
            fields: [
                shape.objectFieldName: GraphQLField(type: GraphQLNonNull(object), resolve: { source, _, _, _ in (source as? MutationValue)?.object }),
                "clientMutationId": GraphQLField(
                    type: GraphQLString,
                    resolve: { source, _, _, _ in
                        guard let value = (source as? MutationValue)?.clientMutationId, value != .null else { return nil }
                        return MapJSON.map(value)
                    }),
            ])
        let className = shape.className
        return GraphQLField(
            type: GraphQLNonNull(payload), args: ["input": GraphQLArgument(type: GraphQLNonNull(input))],
            resolve: { _, args, context, info in
                guard let context = context as? GraphQLContext else { throw ParseError(.internalServerError, "Internal server error") }
                // As REST's request rules refuse the read-only master key's writes.
                try RelayMutation.refuseReadOnly(context.auth, kind.lowercased())
                let input = MapJSON.json(args)["input"] ?? [:]
                let object = try await resolve(input, context, info)
                return MutationValue(object: ParseObjectValue(className: className, fields: object), clientMutationId: input["clientMutationId"])
            })
    }
}
