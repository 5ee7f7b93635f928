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

    private struct Cache {
        /// Role names by user id.
        var users = TrustedEntries<[String]>()
        /// No caching until then (a role write inside a transaction that has not committed yet).
        var suspendedUntil: Int64 = 0
        /// Whether any role has a user, and until when that is trusted: while no role has one, every user has no
        /// role, and one read a while answers for all of them instead of one per user.
        var anyMembers = false
        var anyMembersUntil: Int64 = 0
    }
    private let cache = NIOLockedValueBox(Cache())
    /// Entries also expire (`CacheTrust.roles` after their read started), so a role change made on another node is
    /// seen by then even when its announcement is late or lost.
    static let timeToLive: Int64 = CacheTrust.milliseconds(CacheTrust.roles)

    public init(store: SQLStore, schemas: SchemaService) {
        self.store = store
        self.schemas = schemas
    }

    /// The names (without `role:`) of every role the user has, directly or through inheritance, sorted.
    public func roleNames(forUser userId: String) async throws -> [String] {
        let now = ContinuousClockEpoch.millisecondsSince1970()
        let (cached, generation) = cache.withLockedValue { ($0.users.value(userId, now: now), $0.users.generation) }
        if let cached { return cached }
        guard try await anyMembers(now: now, generation: generation) else { return [] }
        let names = try await resolve(userId)
        cache.withLockedValue { c in
            guard c.suspendedUntil <= now else { return }
            c.users.store(names, for: userId, started: now, trust: Self.timeToLive, generation: generation)
        }
        return names
    }

    /// Whether any role has a user (a `users` relation row), cached as the resolutions are.
    func anyMembers(now: Int64, generation: UInt64) async throws -> Bool {
        if let known = cache.withLockedValue({ $0.anyMembersUntil > now ? $0.anyMembers : nil }) { return known }
        guard let schema = schemas.schema("_Role"), case .relation("_User")? = schema.fields["users"] else { return false }
        let any = try await store.hasObjects(className: WhereCompiler.joinTable(field: "users", owner: "_Role"))
        cache.withLockedValue { c in
            guard c.users.generation == generation, c.suspendedUntil <= now else { return }
            c.anyMembers = any
            c.anyMembersUntil = now + Self.timeToLive
        }
        return any
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
            c.users.forgetAll()
            c.anyMembersUntil = 0
            if inTransaction { c.suspendedUntil = now + Self.timeToLive }
        }
    }

    func resolve(_ userId: String) async throws -> [String] {
        guard let schema = schemas.schema("_Role"), case .relation("_User")? = schema.fields["users"], schema.fields["name"] == .string else {
            return []
        }
        let throughRoles: Bool
        if case .relation("_Role")? = schema.fields["roles"] { throughRoles = true } else { throughRoles = false }
        return try await store.roleNames(forUser: userId, throughRoles: throughRoles)
    }

    /// Makes sure `_Role` exists with its unique index on `name` (duplicates fail with 137 in the database).
    public func prepareClass() async throws {
        try await schemas.ensure("_Role", fields: [:], auth: .master, allowClassCreation: true)
        do {
            try await store.createRoleNameIndex()
        } catch StoreError.uniqueViolation {
            // Names stored twice before the index existed: keep serving; role creation still checks names first.
        }
    }

    static let duplicateName = ParseError(.duplicateValue, "A duplicate value for a field with unique values was provided")

    /// `POST /roles`: the role validated at the edge (`CreateRole`, `RoleRules`); refuses a name that is taken (137, also when another
    /// request stores it first: the unique index), and creates it through the write pipeline with the caller's auth.
    public func create(_ role: CreateRole, auth: Auth, objects: ObjectService, queries: QueryService) async throws -> [String: JSONValue] {
        let name = role.name
        try await prepareClass()
        if try await queries.count("_Role", where: ["name": .string(name)], auth: .master) > 0 { throw Self.duplicateName }
        // Cached resolutions are dropped after the write, whatever its outcome (no await inside catch: the release
        // compiler crashed splitting such a coroutine).
        let outcome: Result<[String: JSONValue], any Error>
        do {
            outcome = .success(try await objects.create("_Role", CreateObject(role.fields), auth: auth, rules: .init(trusted: true)))
        } catch StoreError.uniqueViolation {
            outcome = .failure(Self.duplicateName)
        } catch {
            outcome = .failure(error)
        }
        await invalidate()
        return try outcome.get()
    }
}
