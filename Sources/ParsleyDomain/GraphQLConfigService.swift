import NIOConcurrencyHelpers
public import ParsleyCore
public import ParsleyStorage

/// `/graphql-config` (master key): the GraphQL API's configuration in `_GraphQLConfig`, validated by Parse Server's
/// rules and merged key by key as Parse Server's dot-notation update does.
public struct GraphQLConfigService: Sendable {
    let store: SQLStore
    /// The configuration read last and when: trusted for `freshFor` (other nodes' updates show within it), dropped
    /// on this node's own updates.
    let cache: NIOLockedValueBox<(config: GraphQLConfig, read: ContinuousClock.Instant)?>
    static let freshFor: Duration = .seconds(5)

    public init(store: SQLStore) {
        self.store = store
        self.cache = NIOLockedValueBox(nil)
    }

    /// The configuration the GraphQL schema is built from.
    public func current() async throws -> GraphQLConfig {
        let now = ContinuousClock.now
        if let cached = cache.withLockedValue({ $0 }), now - cached.read < Self.freshFor { return cached.config }
        let config = GraphQLConfig(try await store.graphQLConfig())
        cache.withLockedValue { $0 = (config, now) }
        return config
    }

    public func bootstrap() async throws {
        try await store.createGraphQLConfigTable()
    }

    /// The stored configuration (`{}` when none).
    public func get() async throws -> [String: JSONValue] {
        try await store.graphQLConfig()
    }

    /// `PUT /graphql-config` with `{"params": <config>}`: the top-level keys sent replace the stored ones.
    /// - Throws: 107 `Invalid graphQLConfig: <problems>` for a configuration Parse Server would refuse.
    public func update(_ body: JSONValue?) async throws {
        let problems = GraphQLConfig.problems(body?["params"])
        guard problems.isEmpty, case .object(let changes)? = body?["params"] else {
            throw ParseError(.invalidJSON, "Invalid graphQLConfig: " + problems.joined(separator: "; "))
        }
        try await store.database.write { [store] db in
            let writer = store.writer(db)
            var config = try await writer.graphQLConfig()
            for (key, value) in changes { config[key] = value }
            try await writer.saveGraphQLConfig(config)
        }
        cache.withLockedValue { $0 = nil }
    }
}
