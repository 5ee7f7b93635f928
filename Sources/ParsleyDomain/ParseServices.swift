import Logging
import ParsleyCore
public import ParsleyStorage

/// The Parse services of one server over one store, built together so they share the schema cache, the write
/// pipeline and the role and session caches. The API layer (ParsleyHTTP) routes requests to them and never sees
/// the store itself; `open(options:database:adapters:)` gives services ready to serve. The adapters to the outside
/// world (webhook transport, identity providers, the folder file store) come from the caller, usually
/// `Adapters.standard` of ParsleyAdapters.
public struct ParseServices: Sendable {
    public let options: ParseServerOptions
    public let store: SQLStore
    /// Dashboard sign-ins in the database, when it is shared (`dashboardSessionRecords`).
    let dashboardRecords: DashboardSessionRecords?
    public let schemas: SchemaService
    public let objects: ObjectService
    public let queries: QueryService
    public let sessions: SessionService
    public let users: UserService
    public let roles: RoleService
    public let config: ConfigService
    public let graphQLConfig: GraphQLConfigService
    public let installations: InstallationService
    /// Runs transactional batches.
    public let transactions: Transactions
    /// Nil unless `idempotencyOptions` are set.
    public let idempotency: IdempotencyService?
    /// The app's cloud code (functions and triggers; empty unless the app registered some).
    public let cloud: CloudRuntime
    /// `/push` and the push queue.
    public let push: PushService
    /// LiveQuery's connections and subscriptions (off unless `liveQuery.classNames` names classes).
    public let liveQuery: LiveQueryHub
    /// What the services were built with to reach the outside world.
    public let adapters: Adapters
    /// Where file bytes live (`options.files.adapter`).
    public let fileStore: any FileStore

    /// Committed object writes of every server process on the database (`ParseServerOptions.changeEvents`).
    public var changes: ChangeFeed { objects.changes }

    /// The file rules over the configured file store (cheap to build).
    public var files: FileService { FileService(options: options, store: fileStore, known: objects.knownFiles) }

    /// Builds the services without touching the database (see `open` for a store that may be new).
    public init(options: ParseServerOptions, store: SQLStore, schemas: SchemaService, cloud code: CloudCode = CloudCode(), adapters: Adapters) {
        // Writes publish change events for the classes something consumes: after-triggers run from this process's
        // events, LiveQuery's from the committed writes of every node. Writes to other classes skip the reads that
        // events cost.
        let liveQuery = options.liveQuery
        let triggered = Set(code.triggers.keys.filter { $0.name.isAfter }.map(\.className))
        // (LiveQuery also hears `_Session` writes, live or not: a deleted session ends the subscriptions made with it.)
        let publishing: @Sendable (String) -> Bool = { className in
            triggered.contains(className) || liveQuery.isLive(className) || (liveQuery.isEnabled && className == "_Session")
        }
        let cloud = CloudRuntime(
            code: code, webhookKey: options.webhookKey, webhookTimeout: options.webhookTimeout, webhookTransport: adapters.webhookTransport,
            logLevels: options.cloudLogLevels)
        self.cloud = cloud
        self.options = options
        self.store = store
        self.dashboardRecords = store.isShared ? DashboardSessionRecords(store: store) : nil
        self.schemas = schemas
        self.adapters = adapters
        let fileStore = adapters.fileStore(for: options, database: store.database)
        self.fileStore = fileStore
        let objects = ObjectService(
            store: store, schemas: schemas, options: options, fileStore: fileStore, hooks: cloud.writeHooks, publishing: publishing)
        let queries = QueryService(store: store, schemas: schemas, options: options, hooks: cloud.queryHooks)
        let sessions = SessionService(store: store, schemas: schemas, objects: objects, options: options)
        self.objects = objects
        self.queries = queries
        self.sessions = sessions
        self.users = UserService(
            store: store, schemas: schemas, objects: objects, queries: queries, sessions: sessions, options: options,
            providers: AuthProviders(adapters.identityProviders(options.accounts)), loginHooks: cloud.loginHooks)
        let roles = RoleService(store: store, schemas: schemas)
        self.roles = roles
        self.config = ConfigService(store: store)
        self.graphQLConfig = GraphQLConfigService(store: store)
        self.installations = InstallationService(objects: objects, queries: queries)
        self.transactions = Transactions(store: store)
        // The paths were checked when the options were read (ServerSettings); a bad one turns idempotency off here.
        self.idempotency = (try? IdempotencyService(options: options, objects: objects, queries: queries)) ?? nil
        self.push = PushService(objects: objects, queries: queries, settings: options.push)
        cloud.attach(objects: objects, queries: queries, roles: self.roles, push: push, mail: options.email.adapter)
        self.liveQuery = LiveQueryHub(
            options: options, store: store, schemas: schemas, sessions: sessions, roles: roles, changes: objects.changes, cloud: cloud,
            queries: queries, objects: objects)
    }

    /// Services over `database` without touching it: `prepare()` must run (with the database's `run()` going)
    /// before the first request. `parsley serve` prepares them before its HTTP server starts listening.
    public init(options: ParseServerOptions, database: any SQLDatabase, cloud: CloudCode = CloudCode(), adapters: Adapters) {
        let store = SQLStore(database: database)
        self.init(
            options: options, store: store,
            schemas: SchemaService(
                store: store, protectedFields: options.protectedFields, protectedFieldsOwnerExempt: options.protectedFieldsOwnerExempt), cloud: cloud,
            adapters: adapters)
    }

    /// Services over `database`, ready to serve (commands and tests).
    public static func open(
        options: ParseServerOptions, database: any SQLDatabase, cloud: CloudCode = CloudCode(), adapters: Adapters
    ) async throws -> ParseServices {
        let services = ParseServices(options: options, database: database, cloud: cloud, adapters: adapters)
        try await services.prepare()
        return services
    }

    /// Prepares a database that may be new: the backend's functions, the schema table, the schema cache, the
    /// system classes with their indexes, and the file store.
    public func prepare() async throws {
        try await store.bootstrap()
        try await schemas.reload()
        try await bootstrap()
        try await files.store.prepare()
        try await cloud.reloadWebhooks()
        // Parse Server's `schema` option: the definitions are applied before the first request is answered.
        if let defined = options.schema { try await defined.apply(to: schemas, logger: Logger(label: "parsley")) }
    }

    /// Whether rate limits are counted in the database (several nodes may share it) rather than in memory.
    public var countsRequestsInDatabase: Bool { store.isShared }

    /// `amount` more requests under `key` in its current window of `windowMilliseconds`: the window's count after
    /// them, and when the window started (milliseconds since 1970).
    public func countRequests(_ key: String, amount: Int, windowMilliseconds: Int64) async throws -> (count: Int, windowStart: Int64) {
        try await store.addToCounter(key, amount: amount, now: ContinuousClockEpoch.millisecondsSince1970(), windowMilliseconds: windowMilliseconds)
    }

    /// Forgets request counts whose window started more than `olderThan` milliseconds ago.
    public func pruneRequestCounts(olderThan milliseconds: Int64) async throws {
        try await store.pruneCounters(before: ContinuousClockEpoch.millisecondsSince1970() - milliseconds)
    }

    /// Creates the system classes the server relies on.
    public func bootstrap() async throws {
        try await users.bootstrap()
        try await sessions.bootstrap()
        try await config.bootstrap()
        try await graphQLConfig.bootstrap()
        try await roles.prepareClass()
        try await installations.bootstrap()
        try await idempotency?.bootstrap()
        // Rate-limit counters shared by the nodes of one database (RateLimiter.SharedCounters).
        if store.isShared {
            try await store.createCounterTable()
            try await store.createDashboardSessionTable()
        }
    }

    /// The dashboard's sign-ins shared through the database, when other nodes may share it (nil: kept in memory).
    public var dashboardSessionRecords: DashboardSessionRecords? { dashboardRecords }

    /// On a database several processes share, drops the schemas, roles and sessions another process changed, until
    /// the task is cancelled (a background service of the server, `ParseAPIBackground`).
    public func followCacheChanges() async {
        guard let broadcaster = store.database as? any ChangeBroadcasting else { return }
        let logger = Logger(label: "parsley.cache")
        for await topic in broadcaster.changes() {
            if topic == "*" || topic.hasPrefix("schema:") {
                do { try await schemas.reload() } catch { logger.warning("schema reload failed: \(error)") }
            }
            if topic == "*" || topic == "roles" { roles.forgetCached() }
            if topic == "*" || topic == "sessions" { sessions.forgetCached() }
            if topic.hasPrefix("session:") { sessions.invalidate(token: String(topic.dropFirst("session:".count))) }
            if topic.hasPrefix("dashboard-session:") { dashboardRecords?.ended(String(topic.dropFirst("dashboard-session:".count))) }
            if topic == "*" || topic == "hooks" {
                do { try await cloud.reloadWebhooks() } catch { logger.warning("webhooks reload failed: \(error)") }
            }
        }
    }

    /// The database's kind and pool use now (the dashboard's health page).
    public var databaseStatus: (kind: String, readersBusy: Int, readers: Int, writesQueued: Int) {
        let usage = store.database.poolUsage
        let name = String(describing: type(of: store.database))
        return (name.contains("Postgres") ? "PostgreSQL" : "SQLite", usage.readersBusy, usage.readers, usage.writesQueued)
    }

    /// Throws when the database does not answer a trivial statement (the health check).
    public func pingDatabase() async throws {
        try await store.ping()
    }
}
