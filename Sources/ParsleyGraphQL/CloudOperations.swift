import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// `callCloudCode(input: {functionName, params})` (docs/graphql-contract.md §7.1): runs a cloud function exactly as
/// `POST /functions/<name>` does (`CloudRuntime.run`, the caller's auth, the validator and its errors), answering
/// `{result}`. Present only when cloud code defines a function with a GraphQL name; the names form the
/// `CloudCodeFunction` enum, written unquoted (`functionName: hello`).
enum CloudOperations {
    static func mutation(_ services: GraphQLServices) throws -> (String, GraphQLField)? {
        let names = services.cloud.code.functionNames.filter(GraphQLNames.isValid)
        guard !names.isEmpty else { return nil }
        var values: GraphQLEnumValueMap = [:]
        for name in names { values[name] = GraphQLEnumValue(value: .string(name)) }
        let functions = try GraphQLEnumType(name: "CloudCodeFunction", values: values)
        let field = try RelayMutation.field(
            "callCloudCode",
            input: ["functionName": InputObjectField(type: GraphQLNonNull(functions)), "params": InputObjectField(type: GraphQLScalars.object)],
            output: ["result": GraphQLScalars.any],
            resolve: { input, auth, _ in
                let name = input["functionName"]?.stringValue ?? ""
                let call = CallFunction(functionName: name, params: input["params"]?.objectValue ?? [:])
                let result = try await services.cloud.run(call, auth: auth)
                return result == .null ? [:] : ["result": MapJSON.map(result)]
            })
        return ("callCloudCode", field)
    }
}
