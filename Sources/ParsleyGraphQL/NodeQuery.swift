import Foundation
import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// Relay's `node(id: ID!): Node` (docs/graphql-contract.md §3, §7.4): a global id's object, read with a REST get of
/// the class named inside the id, as the caller, reading the keys the selection needs.
enum NodeQuery {
    static func field(_ node: GraphQLInterfaceType, planner: ReadPlanner, services: GraphQLServices) -> GraphQLField {
        GraphQLField(
            type: node, args: ["id": GraphQLArgument(type: GraphQLNonNull(GraphQLID))],
            resolve: { _, args, context, info in
                let auth = try SchemaBuilder.auth(context)
                let id = MapJSON.json(args)["id"]?.stringValue ?? ""
                guard let (className, objectId) = decode(id), let shape = planner.shapes[className] else { throw ParseError.objectNotFound() }
                // The keys of the fragments on this class's type (and on `Node`), its pointers included.
                let find = planner.plan(info, shape).applied()
                let fields = try await services.queries.get(className, objectId: objectId, find, auth: auth, triggers: true)
                return ParseObjectValue(className: className, fields: fields)
            })
    }

    /// graphql-relay's `fromGlobalId`: the Parse class name and objectId of `base64("<Class>:<objectId>")`.
    static func decode(_ id: String) -> (String, String)? {
        guard let data = Data(base64Encoded: id), let decoded = String(data: data, encoding: .utf8), let colon = decoded.firstIndex(of: ":")
        else { return nil }
        let objectId = String(decoded[decoded.index(after: colon)...])
        return objectId.isEmpty ? nil : (String(decoded[..<colon]), objectId)
    }
}
