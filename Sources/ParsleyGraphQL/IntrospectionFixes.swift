public import GraphQL

// GraphQLSwift/GraphQL 4.x answers `__InputValue { isDeprecated }` with null: its introspection reads the field by
// reflection, and argument and input field definitions have `deprecationReason` but no `isDeprecated`. graphql-core
// clients (Python's gql) and GraphiQL ask for it (`inputValueDeprecation`), and a null there fails their whole schema
// fetch. The library's default resolver reads `KeySubscriptable` sources first, so these two types answer each field
// `__InputValue` has by name, `isDeprecated` included.

/// An `__InputValue` field of an argument or input field definition, by name.
func inputValueField(
    _ key: String, name: String, description: String?, type: any GraphQLInputType, deprecationReason: String?
) -> (any Sendable)? {
    switch key {
    case "name": return name
    case "description": return description
    case "type": return type
    case "deprecationReason": return deprecationReason
    case "isDeprecated": return deprecationReason != nil
    default: return nil
    }
}

extension GraphQLArgumentDefinition: @retroactive KeySubscriptable {
    public subscript(key: String) -> (any Sendable)? {
        inputValueField(key, name: name, description: description, type: type, deprecationReason: deprecationReason)
    }
}

extension InputObjectFieldDefinition: @retroactive KeySubscriptable {
    public subscript(key: String) -> (any Sendable)? {
        inputValueField(key, name: name, description: description, type: type, deprecationReason: deprecationReason)
    }
}
