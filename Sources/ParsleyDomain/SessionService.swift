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

    private let cache = NIOLockedValueBox<[String: Session]>([:])
    static let cacheLimit = 10_000

    public init(store: SQLStore, schemas: SchemaService, objects: ObjectService, options: ParseServerOptions) {
        self.store = store
        self.schemas = schemas
        self.objects = objects
        self.options = options
    }

    /// The session of a token. - Throws: 209 when unknown, revoked or expired.
    public func resolve(_ token: String) async throws -> Session {
        let session: Session
        if let cached = cache.withLockedValue({ $0[token] }) {
            session = cached
        } else {
            guard let found = try await lookup(token) else { throw ParseError(.invalidSessionToken, "Invalid session token") }
            session = found
            cache.withLockedValue { c in
                if c.count >= Self.cacheLimit { c.removeAll() }
                c[token] = found
            }
        }
        if let expires = session.expiresAt, expires < .now {
            invalidate(token: token)
            throw ParseError(.invalidSessionToken, "Session token is expired.")
        }
        return session
    }

    func lookup(_ token: String) async throws -> Session? {
        guard let schema = schemas.schema("_Session") else { return nil }
        let spec = FindSpec(
            schema: schema, predicate: .field(FieldPath(field: "sessionToken"), .equals(.string(token))), limit: 1, readPrincipals: nil,
            schemas: [:])
        guard let row = try await store.find(spec).first, let id = row["objectId"]?.stringValue,
            let user = row["user"].flatMap(Pointer.init(json:))
        else { return nil }
        // A session whose user is gone is no session.
        guard let userSchema = schemas.schema("_User") else { return nil }
        let userSpec = FindSpec(
            schema: userSchema, predicate: .field(FieldPath(field: "objectId"), .equals(.string(user.objectId))), limit: 1, keys: [],
            readPrincipals: nil, schemas: [:])
        guard try await !store.find(userSpec).isEmpty else { return nil }
        let expires = row["expiresAt"]?["iso"]?.stringValue.flatMap(ParseDate.init(iso:))
        return Session(objectId: id, userId: user.objectId, token: token, expiresAt: expires, installationId: row["installationId"]?.stringValue)
    }

    /// Creates a session for a user; a previous session of the same user on the same installation is replaced.
    public func create(userId: String, installationId: String?, action: String, authProvider: String) async throws -> Session {
        let token = "r:" + ObjectID.hexToken(length: 32)
        let expires = ParseDate(milliseconds: ParseDate.now.milliseconds + options.sessionLength * 1000)
        if let installationId { try await revokeAll(userId: userId, installationId: installationId) }
        var body: [String: JSONValue] = [
            "sessionToken": .string(token),
            "user": Pointer(className: "_User", objectId: userId).json,
            "createdWith": ["action": .string(action), "authProvider": .string(authProvider)],
            "restricted": false,
            "expiresAt": ["__type": "Date", "iso": .string(expires.iso)],
        ]
        if let installationId { body["installationId"] = .string(installationId) }
        let created = try await objects.create(
            "_Session", body: .object(body), auth: .master,
            rules: .init(defaultACL: ACL(readers: [userId], writers: [userId]), trusted: true))
        return Session(
            objectId: created["objectId"]?.stringValue ?? "", userId: userId, token: token, expiresAt: expires, installationId: installationId)
    }

    /// Deletes the sessions of a user (optionally only those of one installation, or all but one token).
    public func revokeAll(userId: String, installationId: String? = nil, except keep: String? = nil) async throws {
        guard schemas.schema("_Session") != nil else { return }
        let q = store.dialect.quote
        var f = SQLFragment("DELETE FROM \(q("_Session")) WHERE \(q("user")) = ?", [.text(userId)])
        if let installationId {
            f.append(" AND \(q("installationId")) = ")
            f.append(bind: .text(installationId))
        }
        if let keep {
            f.append(" AND \(q("sessionToken")) <> ")
            f.append(bind: .text(keep))
        }
        f.append(" RETURNING \(q("sessionToken"))")
        let statement = f
        let rows = try await store.database.write { db in try await db.query(statement) }
        let tokens = rows.compactMap { $0.first?.text }
        cache.withLockedValue { c in for t in tokens { c[t] = nil } }
        await announceRevoked(tokens)
    }

    /// Deletes one session by token.
    public func revoke(token: String) async throws {
        let q = store.dialect.quote
        let f = SQLFragment("DELETE FROM \(q("_Session")) WHERE \(q("sessionToken")) = ?", [.text(token)])
        _ = try await store.database.write { db in try await db.query(f) }
        invalidate(token: token)
        await announceRevoked([token])
    }

    public func invalidate(token: String) {
        cache.withLockedValue { _ = $0.removeValue(forKey: token) }
    }

    /// Forgets every cached session (after `_Session` rows changed through the generic API).
    public func invalidateAll() {
        cache.withLockedValue { $0.removeAll() }
        if let broadcaster {
            Task { await broadcaster.broadcast("sessions") }
        }
    }

    /// Forgets every cached session in this process only (another process announced a change).
    public func forgetCached() {
        cache.withLockedValue { $0.removeAll() }
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
        let q = store.dialect.quote
        _ = try await store.database.write { db in
            try await db.query(SQLFragment("CREATE UNIQUE INDEX IF NOT EXISTS \(q("_Session_token")) ON \(q("_Session")) (\(q("sessionToken")))"))
            try await db.query(SQLFragment("CREATE INDEX IF NOT EXISTS \(q("_Session_user")) ON \(q("_Session")) (\(q("user")))"))
        }
    }
}
