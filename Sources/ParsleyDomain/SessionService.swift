import NIOConcurrencyHelpers
public import ParsleyCore
public import ParsleyStorage

/// `_Session` objects: revocable `r:` tokens with an expiry, resolved on every authenticated request through
/// an in-memory cache that logout, revocation, password changes and user deletion invalidate.
public final class SessionService: Sendable {
    let store: SQLStore
    let schemas: SchemaService
    let objects: ObjectService
    let options: ParseServerOptions

    public struct Session: Sendable {
        public var objectId: String
        public var userId: String
        public var token: String
        public var expiresAt: ParseDate?
        public var installationId: String?
    }

    /// Sessions by token, each trusted for `CacheTrust.sessions` from when its lookup started.
    private let cache = NIOLockedValueBox(TrustedEntries<Session>())

    public init(store: SQLStore, schemas: SchemaService, objects: ObjectService, options: ParseServerOptions) {
        self.store = store
        self.schemas = schemas
        self.objects = objects
        self.options = options
    }

    /// The session of a token. - Throws: 209 when unknown, revoked or expired.
    public func resolve(_ token: String) async throws -> Session {
        let session: Session
        // Trusted for `CacheTrust.sessions` from when its lookup started: a session revoked on another node fails here
        // by then, even if that node's announcement never arrives.
        let now = ContinuousClockEpoch.millisecondsSince1970()
        let (found, generation) = cache.withLockedValue { ($0.value(token, now: now), $0.generation) }
        if let found {
            session = found
        } else {
            guard let found = try await lookup(token) else {
                invalidate(token: token)
                throw ParseError(.invalidSessionToken, "Invalid session token")
            }
            session = found
            cache.withLockedValue {
                $0.store(found, for: token, started: now, trust: CacheTrust.milliseconds(CacheTrust.sessions), generation: generation)
            }
        }
        if let expires = session.expiresAt, expires < .now {
            invalidate(token: token)
            throw ParseError(.invalidSessionToken, "Session token is expired.")
        }
        if options.accounts.extendSessionOnUse { return try await extendIfHalfSpent(session) }
        return session
    }

    /// `extendSessionOnUse`: once less than half of `sessionLength` is left (Parse Server: last updated more than half a
    /// session length ago), the session lasts a full `sessionLength` from now.
    func extendIfHalfSpent(_ session: Session) async throws -> Session {
        let length = options.accounts.sessionLength * 1000
        guard let expires = session.expiresAt, expires.milliseconds - ParseDate.now.milliseconds <= length / 2 else { return session }
        var extended = session
        let until = ParseDate(milliseconds: ParseDate.now.milliseconds + length)
        extended.expiresAt = until
        do {
            _ = try await objects.update(
                "_Session", objectId: session.objectId, UpdateObject(["expiresAt": ["__type": "Date", "iso": .string(until.iso)]]), auth: .master,
                rules: .init(trusted: true))
        } catch let e as ParseError where e.code == .objectNotFound {
            return session  // revoked meanwhile: the next request finds out
        }
        cache.withLockedValue { $0.replace(session.token, with: extended) }
        return extended
    }

    func lookup(_ token: String) async throws -> Session? {
        guard let schema = schemas.schema("_Session"), let userSchema = schemas.schema("_User") else { return nil }
        // A session whose user is gone is no session: one statement asks for both (`user IN (SELECT objectId FROM _User)`).
        let predicate = QueryNode.and([
            .field(FieldPath(field: "sessionToken"), .equals(.string(token))),
            .field(FieldPath(field: "user"), .inQuery(SubQuery(className: "_User", predicate: .all))),
        ])
        let spec = FindSpec(schema: schema, predicate: predicate, limit: 1, readPrincipals: nil, schemas: ["_User": userSchema])
        guard let row = try await store.find(spec).first, let id = row["objectId"]?.stringValue,
            let user = row["user"].flatMap(Pointer.init(json:))
        else { return nil }
        let expires = row["expiresAt"]?["iso"]?.stringValue.flatMap(ParseDate.init(iso:))
        return Session(objectId: id, userId: user.objectId, token: token, expiresAt: expires, installationId: row["installationId"]?.stringValue)
    }

    /// Creates a session for a user; a previous session of the same user on the same installation is replaced.
    public func create(userId: String, installationId: String?, action: String, authProvider: String) async throws -> Session {
        let token = "r:" + ObjectID.hexToken(length: 32)
        let expires =
            options.accounts.expireInactiveSessions
            ? ParseDate(milliseconds: ParseDate.now.milliseconds + options.accounts.sessionLength * 1000) : nil
        if let installationId { try await revokeAll(userId: userId, installationId: installationId) }
        var body: [String: JSONValue] = [
            "sessionToken": .string(token),
            "user": Pointer(className: "_User", objectId: userId).json,
            "createdWith": ["action": .string(action), "authProvider": .string(authProvider)],
            "restricted": false,
        ]
        if let expires { body["expiresAt"] = ["__type": "Date", "iso": .string(expires.iso)] }
        if let installationId { body["installationId"] = .string(installationId) }
        let created = try await objects.create(
            "_Session", CreateObject(body), auth: .master,
            rules: .init(defaultACL: ACL(readers: [userId], writers: [userId]), trusted: true))
        return Session(
            objectId: created["objectId"]?.stringValue ?? "", userId: userId, token: token, expiresAt: expires, installationId: installationId)
    }

    /// Deletes the sessions of a user (optionally only those of one installation, or all but one token), each
    /// through the write pipeline (one transaction: all or none).
    public func revokeAll(userId: String, installationId: String? = nil, except keep: String? = nil) async throws {
        var conditions: [String: JSONValue] = ["user": Pointer(className: "_User", objectId: userId).json]
        if let installationId { conditions["installationId"] = .string(installationId) }
        if let keep { conditions["sessionToken"] = ["$ne": .string(keep)] }
        try await delete(where: .object(conditions))
    }

    /// Deletes one session by token, through the write pipeline.
    public func revoke(token: String) async throws {
        try await delete(where: ["sessionToken": .string(token)])
        invalidate(token: token)
    }

    private func delete(where conditions: JSONValue) async throws {
        guard let schema = schemas.schema("_Session") else { return }
        let predicate = try QueryParser(now: .now).parse(conditions, className: "_Session")
        let spec = FindSpec(schema: schema, predicate: predicate, keys: ["sessionToken"], readPrincipals: nil, schemas: [:])
        let rows = try await store.find(spec)
        guard !rows.isEmpty else { return }
        let objects = self.objects
        try await store.transaction { _ in
            for id in rows.compactMap({ $0["objectId"]?.stringValue }) {
                do {
                    try await objects.delete("_Session", objectId: id, auth: .master, trusted: true)
                } catch let e as ParseError where e.code == .objectNotFound {
                    // Gone already (another request revoked it).
                }
            }
        }
        let tokens = rows.compactMap { $0["sessionToken"]?.stringValue }
        cache.withLockedValue { $0.forget(tokens) }
        await announceRevoked(tokens)
    }

    public func invalidate(token: String) {
        // (Only a token this node holds counts as forgotten: unknown tokens do not stop other lookups from caching.)
        cache.withLockedValue { c in if c.holds(token) { c.forget([token]) } }
    }

    /// Forgets every cached session (after `_Session` rows changed through the generic API).
    public func invalidateAll() async {
        cache.withLockedValue { $0.forgetAll() }
        await broadcaster?.broadcast("sessions")
    }

    /// Forgets every cached session in this process only (another process announced a change).
    public func forgetCached() {
        cache.withLockedValue { $0.forgetAll() }
    }

    var broadcaster: (any ChangeBroadcasting)? { store.database as? any ChangeBroadcasting }

    /// Tells the other server processes that these sessions are gone (before the request is answered).
    func announceRevoked(_ tokens: [String]) async {
        guard let broadcaster, !tokens.isEmpty else { return }
        if tokens.count > 20 {
            await broadcaster.broadcast("sessions")
        } else {
            for t in tokens { await broadcaster.broadcast("session:" + t) }
        }
    }

    /// Makes sure `_Session` exists with a unique token index.
    public func bootstrap() async throws {
        _ = try await schemas.ensure("_Session", fields: [:], auth: .master, allowClassCreation: true)
        try await store.createSessionIndexes()
    }
}
