import NIOConcurrencyHelpers
public import ParsleyCore
public import ParsleyStorage

/// Resolves the roles of a user (§8.1): the roles whose `users` relation holds the user, then, repeatedly,
/// every role whose `roles` relation holds a role found so far (members of a role listed in P.`roles` get P).
/// One recursive SQL query over the join tables; `UNION` makes cycles terminate. Results are cached per user
/// until any `_Role` write calls `invalidate()`.
public final class RoleService: Sendable {
    let store: SQLStore
    let schemas: SchemaService

    private struct Entry {
        var names: [String]
        var expires: Int64
    }
    private struct Cache {
        var generation: UInt64 = 0
        var entries: [String: Entry] = [:]
        /// No caching until then (a role write inside a transaction that has not committed yet).
        var suspendedUntil: Int64 = 0
    }
    private let cache = NIOLockedValueBox(Cache())
    /// Entries also expire, so a change that reached the database without `invalidate()` is seen soon.
    static let timeToLive: Int64 = 5_000
    static let cacheLimit = 10_000

    public init(store: SQLStore, schemas: SchemaService) {
        self.store = store
        self.schemas = schemas
    }

    /// The names (without `role:`) of every role the user has, directly or through inheritance, sorted.
    public func roleNames(forUser userId: String) async throws -> [String] {
        let now = ContinuousClockEpoch.millisecondsSince1970()
        let (cached, generation) = cache.withLockedValue { c -> ([String]?, UInt64) in
            if let e = c.entries[userId], e.expires > now { return (e.names, c.generation) }
            return (nil, c.generation)
        }
        if let cached { return cached }
        let names = try await resolve(userId)
        cache.withLockedValue { c in
            guard c.generation == generation, c.suspendedUntil <= now else { return }
            if c.entries.count >= Self.cacheLimit { c.entries.removeAll() }
            c.entries[userId] = Entry(names: names, expires: now + Self.timeToLive)
        }
        return names
    }

    /// Forgets every cached resolution; call after any `_Role` write. Inside a transaction (a transactional
    /// batch) the change is not visible to readers until commit, so caching also pauses for a while.
    public func invalidate() async {
        forgetCached()
        guard let broadcaster = store.database as? any ChangeBroadcasting else { return }
        // Inside a transaction the other processes are told once it has committed (before, they would re-read
        // the old roles).
        if let transaction = Transaction.current {
            transaction.afterCommit { await broadcaster.broadcast("roles") }
        } else {
            await broadcaster.broadcast("roles")
        }
    }


    /// Forgets cached resolutions in this process only (another process announced a role change).
    public func forgetCached() {
        let inTransaction = Transaction.current != nil
        let now = ContinuousClockEpoch.millisecondsSince1970()
        cache.withLockedValue { c in
            c.generation &+= 1
            c.entries.removeAll()
            if inTransaction { c.suspendedUntil = now + Self.timeToLive }
        }
    }

    func resolve(_ userId: String) async throws -> [String] {
        guard let schema = schemas.schema("_Role"), case .relation("_User")? = schema.fields["users"], schema.fields["name"] == .string else {
            return []
        }
        let q = store.dialect.quote
        let users = q(WhereCompiler.joinTable(field: "users", owner: "_Role"))
        let roles = q(WhereCompiler.joinTable(field: "roles", owner: "_Role"))
        // Join-table columns are created unquoted (SQLWriter), so they are named unquoted here too.
        let (owning, related) = ("owningId", "relatedId")
        var sql = "WITH RECURSIVE \(q("r"))(\(q("id"))) AS (SELECT \(owning) FROM \(users) WHERE \(related) = ?"
        if case .relation("_Role")? = schema.fields["roles"] {
            sql += " UNION SELECT \(q("j")).\(owning) FROM \(roles) AS \(q("j")) JOIN \(q("r")) ON \(q("j")).\(related) = \(q("r")).\(q("id"))"
        }
        sql += ") SELECT DISTINCT \(q("name")) FROM \(q("_Role")) WHERE \(q("objectId")) IN (SELECT \(q("id")) FROM \(q("r")))"
        sql += " AND \(q("name")) IS NOT NULL ORDER BY \(q("name"))"
        let statement = SQLFragment(sql, [.text(userId)])
        let rows = try await store.database.read { db in try await db.query(statement) }
        return rows.compactMap { $0.first?.text }
    }

    /// Makes sure `_Role` exists with its unique index on `name` (duplicates fail with 137 in the database).
    public func prepareClass() async throws {
        try await schemas.ensure("_Role", fields: [:], auth: .master, allowClassCreation: true)
        let q = store.dialect.quote
        let statement = SQLFragment("CREATE UNIQUE INDEX IF NOT EXISTS \(q("_Role__unique_name")) ON \(q("_Role")) (\(q("name")))")
        do {
            _ = try await store.database.write { db in try await db.query(statement) }
        } catch StoreError.duplicateValue {
            // Names stored twice before the index existed: keep serving; role creation still checks names first.
        }
    }
}
