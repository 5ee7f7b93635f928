/// The limits a GraphQL operation must keep unless the caller has the master or maintenance key (Parse Server 9's
/// `graphQLPublicIntrospection` and `requestComplexity.graphQLDepth`/`graphQLFields`; docs/graphql-contract.md §1.5,
/// §10). A limit of nil is off.
public struct GraphQLLimits: Sendable, Equatable {
    /// Whether anyone with the application id may introspect the schema (`__schema`, `__type(name:)`) and be told
    /// "did you mean" hints; Parse Server's default is false.
    public var publicIntrospection = false
    /// Deepest nesting of fields (fragments add no depth); Parsley's default 20.
    public var maxDepth: Int? = 20
    /// Field selections in the whole operation, aliased repeats included (which blunts alias bombing); default 500.
    public var maxFields: Int? = 500

    public init() {}
}
