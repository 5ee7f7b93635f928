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
    /// Committed object writes of every server process on the database (`ParseServerOptions.changeEvents`).
    public var changes: ChangeFeed { objects.changes }
    public let queries: QueryService
    public let sessions: SessionService
    public let users: UserService
    public let roles: RoleService
    /// Role names of a user, for ACL principals (`role:Name`).
    public var roleNames: @Sendable (String) async throws -> [String] = { _ in [] }
    private let routers: [any ParseRouter]
    /// Nil unless `idempotencyOptions` are set.
    let idempotency: IdempotencyService?

    public init(options: ParseServerOptions, store: SQLStore, schemas: SchemaService) {
        self.options = options
        self.store = store
        self.schemas = schemas
        let objects = ObjectService(store: store, schemas: schemas, options: options)
        let queries = QueryService(store: store, schemas: schemas, options: options)
        self.objects = objects
        self.queries = queries
        let sessions = SessionService(store: store, schemas: schemas, objects: objects, options: options)
        let users = UserService(
            store: store, schemas: schemas, objects: objects, queries: queries, sessions: sessions, options: options,
            providers: AuthProviders([GitHubAuthProvider(apiURL: options.githubAPIURL)]))
        self.sessions = sessions
        self.users = users
        let roles = RoleService(store: store, schemas: schemas)
        self.roles = roles
        self.roleNames = { try await roles.roleNames(forUser: $0) }
        // The paths were checked when the options were read (ServerSettings); a bad one turns idempotency off here.
        self.idempotency = (try? IdempotencyService(options: options, objects: objects, queries: queries)) ?? nil
        var routers: [any ParseRouter] = [
            HealthRouter(),
            UsersRouter(users: users, queries: queries, sessions: sessions),
            EmailRouter(emails: users.emails, options: options),
            SessionsRouter(objects: objects, queries: queries, sessions: sessions),
            RolesRouter(roles: roles, objects: objects, queries: queries),
            ClassesRouter(objects: objects, queries: queries),
            SchemasRouter(schemas: schemas, queries: queries),
            InstallationsRouter(
                installations: InstallationService(objects: objects, queries: queries), objects: objects, queries: queries),
            AppRouter(config: ConfigService(store: store), objects: objects, schemas: schemas),
        ]
        let base = routers
        let dispatch: @Sendable (ParseRequest) async throws -> ParseResponse = { request in
            try await Self.route(request, base)
        }
        routers.append(BatchRouter(options: options, store: store, schemas: schemas, dispatch: dispatch))
        self.routers = routers
    }

    /// Creates the system classes the server relies on.
    public func bootstrap() async throws {
        try await users.bootstrap()
        try await sessions.bootstrap()
        try await ConfigService(store: store).bootstrap()
        try await roles.prepareClass()
        try await idempotency?.bootstrap()
        // The cache listener runs in `background` (ParseAPIBackground.swift).
    }

    /// Answers one API call.
    public func handle(_ request: ParseRequest) async throws -> ParseResponse {
        var request = request
        request.auth.mountURL = request.mountURL  // for links in mails (EmailFlows)
        request.auth.requestId = request.requestId  // for change events
        if let idempotency, idempotency.applies(method: request.method.rawValue, path: request.path, requestId: request.requestId) {
            try await idempotency.claim(request.requestId!)
        }
        return try await Self.route(request, routers)
    }

    /// `/classes/_User...` and `/classes/_Session...` run the same rules as `/users` and `/sessions`.
    static let classAliases = ["_User": "users", "_Session": "sessions", "_Installation": "installations"]

    static func route(_ original: ParseRequest, _ routers: [any ParseRouter]) async throws -> ParseResponse {
        var request = original
        if request.path.count >= 2, request.path[0] == "classes", let alias = classAliases[request.path[1]] {
            request.path = [alias] + request.path.dropFirst(2)
        }
        for router in routers {
            if let handler = router.handler(for: request) { return try await handler(request) }
        }
        throw RouteNotFound()
    }
}

/// No router owns the path.
struct RouteNotFound: Error {}
