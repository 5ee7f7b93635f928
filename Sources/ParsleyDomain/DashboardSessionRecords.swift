public import ParsleyStorage
import Synchronization

/// The dashboard's sign-ins as the nodes of one database share them (`_DashboardSession`): saved at sign-in, read by a
/// node that has not seen the session yet, deleted at sign-out, which every node hears (`dashboard-session:<key>`)
/// and forgets at once. Only on a database several processes share; a single SQLite server keeps them in memory.
public final class DashboardSessionRecords: Sendable {
    let store: SQLStore
    private let listeners = Mutex<[@Sendable (String) -> Void]>([])

    init(store: SQLStore) { self.store = store }

    /// `forget(key)` runs when some node ends a session.
    public func onEnded(_ forget: @escaping @Sendable (String) -> Void) { listeners.withLock { $0.append(forget) } }

    func ended(_ key: String) {
        for listener in listeners.withLock({ $0 }) { listener(key) }
    }

    public func save(_ key: String, _ session: StoredDashboardSession) async throws { try await store.saveDashboardSession(key, session) }
    public func load(_ key: String) async throws -> StoredDashboardSession? { try await store.dashboardSession(key) }
    public func touch(_ key: String, lastUsed: Int64) async throws { try await store.touchDashboardSession(key, lastUsed: lastUsed) }

    /// Failed sign-ins from `address` in the current minute, counted by every node together (`_RateLimit`).
    public func failedSignIns(_ address: String) async throws -> Int {
        try await store.counterValue(Self.failureKey(address), now: ContinuousClockEpoch.millisecondsSince1970(), windowMilliseconds: 60_000)
    }

    /// One more failed sign-in from `address`; the count in the current minute.
    @discardableResult
    public func addFailedSignIn(_ address: String) async throws -> Int {
        try await store.incrementCounter(Self.failureKey(address), now: ContinuousClockEpoch.millisecondsSince1970(), windowMilliseconds: 60_000)
    }

    static func failureKey(_ address: String) -> String { "dashboard-sign-in-failures:" + address }

    /// Ends a session on every node; also drops the sessions idle for longer than `idleMilliseconds`.
    public func end(_ key: String, idleMilliseconds: Int64) async throws {
        try await store.deleteDashboardSession(key)
        await (store.database as? any ChangeBroadcasting)?.broadcast("dashboard-session:" + key)
        try? await store.pruneDashboardSessions(lastUsedBefore: ContinuousClockEpoch.millisecondsSince1970() - idleMilliseconds)
    }
}
