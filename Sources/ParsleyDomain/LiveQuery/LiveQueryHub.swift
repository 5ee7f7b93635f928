import Logging
import ParsleyCore
import ParsleyStorage
import Synchronization

/// Parse's LiveQuery on one node: the connections and their subscriptions, the protocol's messages
/// (`connect`, `subscribe`, `update`, `unsubscribe`), and the committed writes of every node (the change feed) turned
/// into events for each subscriber its permissions let see them (LiveQueryHub+Events.swift).
///
/// The transport (ParsleyHTTP's WebSocket upgrade) opens a `LiveConnection`, hands over each text frame
/// (`receive`) and writes the connection's `frames` to the socket until they end.
public final class LiveQueryHub: Sendable {
    let options: ParseServerOptions
    let schemas: SchemaService
    let store: SQLStore
    let sessions: SessionService
    let roles: RoleService
    let changes: ChangeFeed
    let cloud: CloudRuntime
    /// Reads the objects an event's `include` paths point to, as a find's include does.
    let queries: QueryService
    /// Writes sent over the socket (`save`, `delete`), through the same pipeline as REST's.
    let objects: ObjectService
    var permissions: Permissions { Permissions(store: store, schemas: schemas) }
    var triggers: LiveQueryTriggers { cloud.code.liveQueryTriggers }
    let logger = Logger(label: "parsley.livequery")

    let index = Mutex(SubscriptionIndex())
    let connections = Mutex<[String: LiveConnection]>([:])
    /// `isLive` answers per class (the option may hold regular expressions).
    let liveClasses = Mutex<[String: Bool]>([:])
    /// Counts a socket operation against the HTTP server's `rateLimit` rules as the REST request it stands for
    /// (`admitOperations`); nil: nothing limits them.
    let operationGate = Mutex<OperationGate?>(nil)
    let counters = Counters()

    /// What the hub has done, for metrics and the benchmark.
    public final class Counters: Sendable {
        let delivered = Atomic<Int>(0)
        let slowClients = Atomic<Int>(0)
        public var eventsDelivered: Int { delivered.load(ordering: .relaxed) }
        public var slowClientsDisconnected: Int { slowClients.load(ordering: .relaxed) }
    }

    init(
        options: ParseServerOptions, store: SQLStore, schemas: SchemaService, sessions: SessionService, roles: RoleService, changes: ChangeFeed,
        cloud: CloudRuntime, queries: QueryService, objects: ObjectService
    ) {
        self.queries = queries
        self.objects = objects
        self.options = options
        self.schemas = schemas
        self.store = store
        self.sessions = sessions
        self.roles = roles
        self.changes = changes
        self.cloud = cloud
    }

    /// What a socket operation is counted as: the REST method and path it stands for (`["classes", "Score", id]`),
    /// the caller's address, whether it holds the master key, and its session token. Throws a `ParseError` (100, what REST answers with its 429)
    /// when a rule refuses it.
    public typealias OperationGate =
        @Sendable (_ method: String, _ path: [String], _ address: String?, _ isMaster: Bool, _ sessionToken: String?) async throws -> Void

    /// Socket operations count against `gate` (the same counters as REST requests) from now on.
    public func admitOperations(_ gate: @escaping OperationGate) { operationGate.withLock { $0 = gate } }

    public var isEnabled: Bool { options.liveQuery.isEnabled }
    public var metrics: Counters { counters }
    public var connectionCount: Int { connections.withLock { $0.count } }
    public var subscriptionCount: Int { index.withLock { $0.count } }

    // MARK: Connections

    /// A new client connection (before its `connect` message), whose frames go to `outlet`. `address` is the peer's,
    /// for cloud code.
    public func open(address: String?, outlet: any LiveOutlet) -> LiveConnection {
        let c = LiveConnection(outlet: outlet, address: address)
        c.onOverflow { [counters] in counters.slowClients.add(1, ordering: .relaxed) }
        connections.withLock { $0[c.clientId] = c }
        return c
    }

    /// The socket closed: its subscriptions end.
    public func close(_ c: LiveConnection) {
        c.finish()
        connections.withLock { _ = $0.removeValue(forKey: c.clientId) }
        index.withLock { $0.removeClient(c.clientId) }
    }

    /// Handles one text frame from a client. Text that is not JSON is ignored (as Parse Server does).
    public func receive(_ text: String, from c: LiveConnection) async {
        guard let parsed = LiveQueryMessage.parse(text) else {
            logger.debug("LiveQuery message is not JSON", metadata: ["client": .string(c.clientId)])
            return
        }
        switch parsed {
        case .failure(let error):
            c.send(error, requestId: nil)
        case .success(.connect(let m)):
            await connect(m, c)
        case .success(.subscribe(let m)):
            await subscribe(m, c)
        case .success(.update(let m)):
            await subscribe(m, c)
        case .success(.unsubscribe(let requestId)):
            unsubscribe(requestId, c)
        case .success(.operation(let m)):
            await operate(m, c)
        }
    }

    func connect(_ m: LiveQueryMessage.Connect, _ c: LiveConnection) async {
        let keyError = LiveQueryError(code: 4, message: "Key in request is not valid")
        guard m.applicationId == options.applicationId else { return c.send(keyError, requestId: nil) }
        var isMaster = false
        if let key = m.masterKey {
            guard key == options.masterKey else { return c.send(keyError, requestId: nil) }
            isMaster = true
        }
        if !isMaster, options.requiresClientKey {
            let configured: [String: String?] = [
                "javascriptKey": options.javascriptKey, "clientKey": options.clientKey, "restAPIKey": options.restAPIKey,
                "windowsKey": options.dotNetKey,
            ]
            guard m.keys.contains(where: { name, value in configured[name] == value }) else { return c.send(keyError, requestId: nil) }
        }
        var userId: String?
        if let token = m.sessionToken {
            do { userId = try await sessions.resolve(token).userId } catch {
                return c.send(LiveQueryError(code: 209, message: "Invalid session token", reconnect: false), requestId: nil)
            }
        }
        let identity = LiveConnection.Identity(isMaster: isMaster, sessionToken: m.sessionToken, userId: userId, installationId: m.installationId)
        if let hook = triggers.beforeConnect {
            do {
                let auth = Auth(isMaster: isMaster, userId: userId, installationId: m.installationId, sessionToken: m.sessionToken)
                let request = LiveQueryConnectRequest(
                    caller: try await caller(auth, address: c.address), clientId: c.clientId, sessionToken: m.sessionToken, log: cloud.logger)
                try await CloudRuntime.answering { try await hook(request) }
            } catch {
                return c.send(refusal(error), requestId: nil)
            }
        }
        c.connected = identity
        c.send(.object(c.frame("connected")))
    }

    func subscribe(_ m: LiveQueryMessage.Subscribe, _ c: LiveConnection) async {
        guard let identity = c.connected else {
            return c.send(.notConnected("subscribing"), requestId: m.requestId)
        }
        do {
            let s = try await subscription(m, c, identity)
            index.withLock { $0.insert(s) }
            c.send(.object(c.frame("subscribed", requestId: m.requestId)))
        } catch {
            c.send(refusal(error), requestId: m.requestId)
        }
    }

    func unsubscribe(_ requestId: Int, _ c: LiveConnection) {
        guard c.connected != nil else {
            return c.send(.notConnected("unsubscribing"), requestId: requestId)
        }
        guard index.withLock({ $0.remove(LiveSubscription.Key(clientId: c.clientId, requestId: requestId)) }) != nil else {
            return c.send(
                LiveQueryError(
                    code: 2,
                    message:
                        "Cannot find subscription with clientId \(c.clientId) subscriptionId \(requestId). Make sure you subscribe to live query "
                        + "server before unsubscribing."
                ),
                requestId: requestId)
        }
        c.send(.object(c.frame("unsubscribed", requestId: requestId)))
    }

    /// Checks and secures a subscription as a find of the same query by the same caller would be: the class, the
    /// CLP's `find`, protected fields in the query, sub-queries, `_Session`'s own rows; then `beforeSubscribe`.
    func subscription(_ m: LiveQueryMessage.Subscribe, _ c: LiveConnection, _ identity: LiveConnection.Identity) async throws -> LiveSubscription {
        var token = identity.sessionToken
        var userId = identity.userId
        if let own = m.sessionToken, !identity.isMaster {
            token = own
            userId = try await sessions.resolve(own).userId
        } else if let token, !identity.isMaster {
            userId = try await sessions.resolve(token).userId
        }
        if identity.isMaster { (token, userId) = (nil, nil) }
        let roleNames = userId == nil ? [] : try await roles.roleNames(forUser: userId!)
        let auth = Auth(isMaster: identity.isMaster, userId: userId, roles: roleNames, installationId: identity.installationId, sessionToken: token)
        let className = m.className
        guard Naming.isValidClassName(className) else { throw ParseError.invalidClassName(className) }
        if !auth.isMaster {
            try Permissions.requireMasterOnlyAccess(.find, className)
            if className == "_Session", userId == nil { throw LiveQueryError(code: 209, message: "Invalid session token", reconnect: false) }
        }
        var whereValue = m.whereValue
        var (keys, watch) = (m.keys, m.watch)
        if let hook = triggers.beforeSubscribe[className] {
            var request = LiveQuerySubscribeRequest(
                caller: try await caller(auth, address: c.address), className: className, requestId: m.requestId, whereValue: whereValue,
                keys: keys, watch: watch, log: cloud.logger)
            try await CloudRuntime.answering { try await hook(&request) }
            (whereValue, keys, watch) = (request.whereValue, request.keys, request.watch)
        }
        // `requestComplexity` holds for a subscription's `where` and `include` as for a find's.
        try options.requestComplexity.checkWhere(whereValue, auth: auth)
        try options.requestComplexity.checkIncludes((m.include ?? []).map(QueryService.components), auth: auth)
        var parser = QueryParser(allowInternalFields: auth.isMaster, now: .now)
        parser.schemas = schemas.all()
        var predicate = try parser.parse(whereValue, className: className)
        if predicate.mentionsText {
            throw ParseError(.invalidQuery, "$text is not supported in LiveQuery subscriptions")
        }
        if let unsafe = predicate.regexPatterns.first(where: { !RegexSafety.isSafe($0.pattern) }) {
            throw ParseError(
                .invalidQuery,
                "$regex '\(unsafe.pattern.prefix(64))' is not allowed in LiveQuery subscriptions: nested quantifiers, quantified alternations and "
                    + "back-references can run for ever"
            )
        }
        let readFields = predicate.referencedFields.union(Self.topFields(watch ?? []))
        if !auth.isMaster {
            let permissions = self.permissions
            let clp = permissions.classLevelPermissions(className)
            _ = try permissions.authorize(.find, className, auth: auth, clp: clp)
            let hidden = clp.protectedFields(userId: userId, roles: roleNames).union(Permissions.alwaysProtected(className))
            try Permissions.denyProtected(hidden, in: predicate.referencedFields, className: className)
            try Self.denyWatch(watch ?? [], hidden: hidden, className: className)
            predicate = try permissions.secureSubqueries(predicate, auth: auth)
            if let own = Permissions.ownRowsOnly(className, auth: auth) { predicate = .and([predicate, own]) }
        }
        return LiveSubscription(
            key: LiveSubscription.Key(clientId: c.clientId, requestId: m.requestId), connection: c, className: className, predicate: predicate,
            keys: keys, watch: watch ?? [], include: m.include ?? [], readFields: readFields, sessionToken: token, userId: userId,
            isMaster: auth.isMaster,
            installationId: identity.installationId, equality: SubscriptionIndex.equality(of: predicate, schema: schemas.schema(className)))
    }

    /// 119 for a `watch` on a field the subscriber may not read (protected, internal, a credential): an update sent
    /// only when it changes would tell its changes (an oracle), as a query on it would.
    static func denyWatch(_ watch: [String], hidden: Set<String>, className: String) throws(ParseError) {
        for field in topFields(watch).sorted() where hidden.contains(field) || field.hasPrefix("_") || neverSent.contains(field) {
            throw ParseError(.operationForbidden, "This user is not allowed to watch \(field) on class \(className)")
        }
    }

    /// The top-level field of each name (`address.city` reads `address`).
    static func topFields(_ names: [String]) -> Set<String> {
        Set(names.map { name in name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? name })
    }

    /// The `error` frame for a refused connect or subscription: its own code for LiveQuery and Parse errors, 141
    /// for anything else; not worth reconnecting for.
    /// With `enableSanitizedErrorResponse`, a sanitizable refusal reads `Permission denied` as on REST (the detail is
    /// logged).
    func refusal(_ error: any Error) -> LiveQueryError {
        switch error {
        case let e as LiveQueryError: return e
        case let e as ParseError:
            let answered = e.answered(sanitize: options.enableSanitizedErrorResponse)
            if answered.message != e.message { logger.info("Sanitized error: \(e.message)") }
            return LiveQueryError(answered)
        default: return LiveQueryError(CloudRuntime.parseError(error))
        }
    }

    /// Cloud code's view of the subscriber (its `_User` object is read only when a trigger asks for one).
    func caller(_ auth: Auth, address: String?) async throws -> CloudCaller {
        var caller = try await cloud.caller(auth)
        caller.ip = address
        caller.installationId = auth.installationId
        return caller
    }

    /// Whether writes of `className` reach subscribers.
    func isLive(_ className: String) -> Bool {
        if let known = liveClasses.withLock({ $0[className] }) { return known }
        let live = options.liveQuery.isLive(className)
        liveClasses.withLock { $0[className] = live }
        return live
    }
}

extension QueryNode {
    /// Every `$regex` pattern, sub-queries included.
    var regexPatterns: [RegexPattern] {
        switch self {
        case .all, .relatedTo: return []
        case .and(let n), .or(let n), .nor(let n): return n.flatMap(\.regexPatterns)
        case .field(_, .regex(let p)): return [p]
        case .field(_, .containsAllMatching(let ps)): return ps
        case .field(_, .inQuery(let sub)), .field(_, .notInQuery(let sub)), .field(_, .select(let sub, _)), .field(_, .dontSelect(let sub, _)):
            return sub.predicate.regexPatterns
        case .field: return []
        }
    }

    /// Whether a `$text` condition appears anywhere (LiveQuery cannot evaluate one against an object's past).
    var mentionsText: Bool {
        switch self {
        case .all, .relatedTo: return false
        case .and(let n), .or(let n), .nor(let n): return n.contains { $0.mentionsText }
        case .field(_, .text): return true
        case .field: return false
        }
    }
}
