import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// A built-in mutation's answer on its way to its payload's fields: the values by field name and the client's
/// `clientMutationId`, echoed.
struct PayloadValue: Sendable {
    let values: [String: any Sendable]
    let clientMutationId: JSONValue?
}

/// Relay mutations with a single `input` argument (`<Name>Input`) and a `<Name>Payload`, both with `clientMutationId`
/// (docs/graphql-contract.md §6, §7): the shape of the users, cloud code, files and schema mutations.
enum RelayMutation {
    typealias Resolve = @Sendable (_ input: [String: JSONValue], _ auth: Auth, _ info: GraphQLResolveInfo) async throws -> [String: any Sendable]

    typealias ResolveInContext =
        @Sendable (_ input: [String: JSONValue], _ context: GraphQLContext, _ info: GraphQLResolveInfo) async throws -> [String: any Sendable]

    /// `name(input: <Name>Input!): <Name>Payload!`; `resolve` answers the payload's values by field name. The read-only
    /// master key is refused as REST refuses its POST requests, unless `readOnly` says the resolver checks it itself.
    static func field(
        _ name: String, input: InputObjectFieldMap, output: [String: any GraphQLOutputType], readOnly: Bool = false, resolve: @escaping Resolve
    ) throws -> GraphQLField {
        try field(
            name, input: input, output: output,
            resolveInContext: { input, context, info in
                if !readOnly { try refuseReadOnly(context.auth) }
                return try await resolve(input, context.auth, info)
            })
    }

    /// 119 for the read-only master key, with the words REST's request rules use for a POST.
    static func refuseReadOnly(_ auth: Auth, _ operation: String = "create") throws {
        if auth.isReadOnly { throw ParseError(.operationForbidden, "read-only masterKey isn't allowed to perform the \(operation) operation.") }
    }

    /// The same, for a resolver that needs more of the request than its auth (a multipart request's files).
    static func field(
        _ name: String, input: InputObjectFieldMap, output: [String: any GraphQLOutputType], resolveInContext resolve: @escaping ResolveInContext
    ) throws -> GraphQLField {
        let typeName = name.prefix(1).uppercased() + name.dropFirst()
        var inputFields = input
        inputFields["clientMutationId"] = InputObjectField(type: GraphQLString)
        let inputType = try GraphQLInputObjectType(name: typeName + "Input", fields: inputFields)
        var fields: GraphQLFieldMap = [
            "clientMutationId": GraphQLField(
                type: GraphQLString,
                resolve: { source, _, _, _ in
                    guard let value = (source as? PayloadValue)?.clientMutationId, value != .null else { return nil }
                    return MapJSON.map(value)
                })
        ]
        for (key, type) in output {
            fields[key] = GraphQLField(type: type, resolve: { source, _, _, _ in (source as? PayloadValue)?.values[key] })
        }
        let payload = try GraphQLObjectType(name: typeName + "Payload", fields: fields)
        return GraphQLField(
            type: GraphQLNonNull(payload), args: ["input": GraphQLArgument(type: GraphQLNonNull(inputType))],
            resolve: { _, args, context, info in
                guard let context = context as? GraphQLContext else { throw ParseError(.internalServerError, "Internal server error") }
                let input = MapJSON.json(args)["input"]?.objectValue ?? [:]
                let values = try await resolve(input, context, info)
                return PayloadValue(values: values, clientMutationId: input["clientMutationId"])
            })
    }
}
