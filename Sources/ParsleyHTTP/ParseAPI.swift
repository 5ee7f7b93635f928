import ParsleyCore
public import ParsleyDomain
public import ParsleyGraphQL

/// The Parse REST API below the transport: the domain services, each resource's route table, batch and the rate limits.
/// `ParseTransport` mounts them on one Hummingbird router (`ParseRoutes.build`).
public struct ParseAPI: Sendable {
    /// The Domain services the routers call.
    public let services: ParseServices
    public var options: ParseServerOptions { services.options }
    public var schemas: SchemaService { services.schemas }
    public var objects: ObjectService { services.objects }
    /// Committed object writes of every server process on the database (`ParseServerOptions.changeEvents`).
    public var changes: ChangeFeed { services.changes }
    public var queries: QueryService { services.queries }
    public var sessions: SessionService { services.sessions }
    public var users: UserService { services.users }
    public var roles: RoleService { services.roles }
    /// Role names of a user, for ACL principals (`role:Name`).
    public var roleNames: @Sendable (String) async throws -> [String] = { _ in [] }
    /// The resources' route tables, mounted on the server's router by `ParseRoutes.build`.
    let resources: [any ParseRouter]
    /// `POST /batch`, dispatched through the same router by `ParseRoutes`.
    let batch: BatchRouter
    /// Parse Server's `rateLimit` rules with the cloud validators' (nil when there are none): counted by the
    /// `CountRateLimits` middleware for each request and by `/batch` for each sub-request, with the same counters.
    let limiter: RateLimiter?
    /// Parse Server's GraphQL API on the same services (nil unless `mountGraphQL`).
    public let graphQL: GraphQLService?
    /// Nil unless `idempotencyOptions` are set.
    var idempotency: IdempotencyService? { services.idempotency }

    /// The API over services ready to serve (`ParseServices.open`), with Parse Server's `rateLimit` rules.
    public init(services: ParseServices, rateLimits: [RateLimitRule] = []) {
        self.services = services
        let rules = rateLimits + Self.cloudRateLimits(services.cloud.code)
        let sessionsForLimits = services.sessions
        // Counted in the database when other nodes may share it (its `_RateLimit` table is made at start-up).
        let shared =
            services.countsRequestsInDatabase
            ? RateLimiter.SharedCounters(
                add: { key, amount, window in try await services.countRequests(key, amount: amount, windowMilliseconds: window) },
                prune: { age in try await services.pruneRequestCounts(olderThan: age) }) : nil
        let limiter =
            rules.isEmpty
            ? nil : RateLimiter(rules: rules, shared: shared) { token in try? await sessionsForLimits.resolve(token).userId }
        self.limiter = limiter
        // Queries and writes over a LiveQuery socket count as the REST requests they stand for, on the same counters.
        if let limiter {
            services.liveQuery.admitOperations { method, path, address, isMaster, token in
                do {
                    try await limiter.check(method: method, path: path, caller: RateLimitCaller(isMaster: isMaster, ip: address, sessionToken: token))
                } catch let e as RateLimitExceeded {
                    throw ParseError(.connectionFailed, e.message)
                }
            }
        }
        let (options, schemas, objects, queries) = (services.options, services.schemas, services.objects, services.queries)
        let (users, sessions, roles) = (services.users, services.sessions, services.roles)
        self.roleNames = { try await roles.roleNames(forUser: $0) }
        graphQL = options.mountGraphQL ? GraphQLService(services: services) : nil
        resources = [
            HealthRouter(pushConfigured: services.push.isConfigured, securityCheck: options.security.enableCheck),
            UsersRouter(users: users, queries: queries, sessions: sessions),
            EmailRouter(emails: users.emails, options: options),
            SessionsRouter(objects: objects, queries: queries, sessions: sessions),
            RolesRouter(roles: roles, objects: objects, queries: queries),
            ClassesRouter(objects: objects, queries: queries),
            SchemasRouter(schemas: schemas, queries: queries, lockSchemas: options.schema?.lockSchemas == true),
            InstallationsRouter(installations: services.installations, objects: objects, queries: queries),
            AppRouter(config: services.config, graphQLConfig: services.graphQLConfig, objects: objects, queries: queries, cloud: services.cloud),
            HooksRouter(cloud: services.cloud),
            PushRouter(push: services.push),
            LogsRouter(ring: LogRing.shared),
            AudiencesRouter(objects: objects, queries: queries),
            SecurityRouter(options: options),
            AggregateRouter(queries: queries),
        ]
        let limit: @Sendable (ParseRequest) async throws -> Void = { request in
            try await limiter?.check(method: request.method.rawValue, path: request.path, caller: RateLimitCaller(request.auth))
        }
        batch = BatchRouter(options: options, transactions: services.transactions, schemas: schemas, limit: limit)
    }

    /// Answers one API call in-process (tools and benchmarks): through the same router and middleware as a request over
    /// HTTP, with `request.auth` as who is asking.
    public func handle(_ request: ParseRequest) async throws -> ParseResponse {
        try await ParseTransport(api: self).handle(request)
    }

    /// Counts a request against the rate limits; throws `RateLimitExceeded` when a rule refuses it.
    func checkRateLimits(method: String, path: [String], caller: RateLimitCaller) async throws {
        try await limiter?.check(method: method, path: path, caller: caller)
    }

    /// Cloud functions' validator rate limits (`/functions/<name>`, per address) and triggers' (their class's routes and
    /// methods: beforeSave is POST and PUT).
    static func cloudRateLimits(_ code: CloudCode) -> [RateLimitRule] {
        var rules: [RateLimitRule] = []
        for (name, limit) in code.functionRateLimits.sorted(by: { $0.key < $1.key }) {
            rules.append(
                RateLimitRule(
                    requestPath: "/functions/\(name)", window: limit.requestTimeWindow, count: limit.requestCount,
                    message: limit.errorResponseMessage, includeMasterKey: limit.includeMasterKey))
        }
        for route in code.triggerRateLimits {
            var rule = RateLimitRule(
                requestPath: route.path, window: route.limit.requestTimeWindow, count: route.limit.requestCount, methods: route.methods,
                message: route.limit.errorResponseMessage, includeMasterKey: route.limit.includeMasterKey)
            rule.includesSubpaths = route.includesSubpaths
            rules.append(rule)
        }
        return rules
    }

    /// `/classes/_User...`, `/classes/_Session...` and `/classes/_Installation...` run the same routes (and rules) as
    /// `/users`, `/sessions` and `/installations`.
    static let classAliases = ["users": "classes/_User", "sessions": "classes/_Session", "installations": "classes/_Installation"]
}

/// No router owns the path.
struct RouteNotFound: Error {}
