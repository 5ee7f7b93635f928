import Logging
public import ParsleyCore
public import ParsleyDomain
public import ParsleyStorage

/// The Parse REST API below the transport: routes a `ParseRequest` to the resource router that owns it.
public struct ParseAPI: Sendable {
    public let options: ParseServerOptions
    public let store: SQLStore
    public let schemas: SchemaService
    public let objects: ObjectService
    public let queries: QueryService
    private let routers: [any ParseRouter]

    public init(options: ParseServerOptions, store: SQLStore, schemas: SchemaService) {
        self.options = options
        self.store = store
        self.schemas = schemas
        let objects = ObjectService(store: store, schemas: schemas, options: options)
        let queries = QueryService(store: store, schemas: schemas, options: options)
        self.objects = objects
        self.queries = queries
        var routers: [any ParseRouter] = [
            HealthRouter(),
            ClassesRouter(objects: objects, queries: queries),
            SchemasRouter(schemas: schemas, queries: queries),
        ]
        let base = routers
        let dispatch: @Sendable (ParseRequest) async throws -> ParseResponse = { request in
            try await Self.route(request, base)
        }
        routers.append(BatchRouter(options: options, store: store, schemas: schemas, dispatch: dispatch))
        self.routers = routers
    }

    /// Answers one API call.
    public func handle(_ request: ParseRequest) async throws -> ParseResponse {
        try await Self.route(request, routers)
    }

    static func route(_ request: ParseRequest, _ routers: [any ParseRouter]) async throws -> ParseResponse {
        for router in routers {
            if let handler = router.handler(for: request) { return try await handler(request) }
        }
        throw RouteNotFound()
    }
}

/// No router owns the path.
struct RouteNotFound: Error {}
