import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// The root fields that are not a class's (docs/graphql-contract.md §6, §7): the viewer and user mutations,
/// `callCloudCode`, `createFile` and schema management, gathered for `SchemaBuilder.build`.
struct BuiltInOperations {
    var queries: [(String, GraphQLField)] = []
    var mutations: [(String, GraphQLField)] = []
    /// Types only an interface or a scalar leads to, which the schema must be told about.
    var types: [any GraphQLNamedType] = []

    init(services: GraphQLServices, shapes: [ClassShape], objects: [String: GraphQLObjectType], inputs: CommonInputTypes) throws {
        if let shape = shapes.first(where: { $0.className == "_User" }), let user = objects["_User"] {
            let users = try UserOperations(services: services, shape: shape, user: user, inputs: inputs)
            queries.append(("viewer", users.viewerQuery()))
            mutations += try users.mutations()
        }
        if let cloud = try CloudOperations.mutation(services) { mutations.append(cloud) }
        if let file = try FileOperations.mutation(services, fileInfo: inputs.fieldTypes.fileInfo) { mutations.append(file) }
        let schema = try SchemaOperations(services: services)
        queries += schema.queries()
        mutations += try schema.mutations()
        types += schema.types
    }
}
