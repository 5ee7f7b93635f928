/// Fixed-window counters in the database (`_RateLimit`), so that every server process on one database counts a
/// client's requests together: one upsert per count, answered with the window's new total.
extension SQLStore {
    static let counterTable = "_RateLimit"

    /// Whether other server processes may share this database (PostgreSQL): then counters belong in it.
    public var isShared: Bool { database is any ChangeBroadcasting }

    /// Creates `_RateLimit` if needed.
    public func createCounterTable() async throws {
        let statement = SQLFragment(
            unsafeSQL: "CREATE TABLE IF NOT EXISTS \(dialect.table(Self.counterTable)) (key TEXT PRIMARY KEY, windowStart BIGINT NOT NULL, "
                + "count BIGINT NOT NULL)")
        let lock = dialect.tableCreationLock
        _ = try await database.write { db in
            if let lock { try await db.query(lock) }
            return try await db.query(statement)
        }
    }

    /// Counts one more under `key` in the window that started at most `windowMilliseconds` before `now` (a new window
    /// starts when the last one is over); the count so far in the window, this one included.
    public func incrementCounter(_ key: String, now: Int64, windowMilliseconds: Int64) async throws -> Int {
        try await addToCounter(key, amount: 1, now: now, windowMilliseconds: windowMilliseconds).count
    }

    /// Adds `amount` under `key` in its current window (a new window, starting at `now`, when the last one is over);
    /// the window's count after the addition and when the window started (milliseconds since 1970).
    public func addToCounter(_ key: String, amount: Int, now: Int64, windowMilliseconds: Int64) async throws -> (count: Int, windowStart: Int64) {
        let table = dialect.table(Self.counterTable)
        let expired = now - windowMilliseconds
        let statement = SQLFragment(
            unsafeSQL: "INSERT INTO \(table) (key, windowStart, count) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
                + "count = CASE WHEN \(table).windowStart <= ? THEN excluded.count ELSE \(table).count + excluded.count END, "
                + "windowStart = CASE WHEN \(table).windowStart <= ? THEN excluded.windowStart ELSE \(table).windowStart END "
                + "RETURNING count, windowStart",
            [.text(key), .integer(now), .integer(Int64(amount)), .integer(expired), .integer(expired)])
        let rows = try await database.write { db in try await db.query(statement) }
        guard let row = rows.first, row.count >= 2, let count = Self.integer(row[0]), let start = Self.integer(row[1]) else {
            throw StoreError.database("the counter upsert returned no count")
        }
        return (Int(count), start)
    }

    private static func integer(_ value: SQLValue) -> Int64? {
        switch value {
        case .integer(let n): return n
        case .real(let n): return Int64(n)
        case .text(let n): return Int64(n)
        default: return nil
        }
    }

    /// The count under `key` in its current window (0 when there is none, or it is over), without counting.
    public func counterValue(_ key: String, now: Int64, windowMilliseconds: Int64) async throws -> Int {
        let statement = SQLFragment(
            unsafeSQL: "SELECT count FROM \(dialect.table(Self.counterTable)) WHERE key = ? AND windowStart > ?",
            [.text(key), .integer(now - windowMilliseconds)])
        let rows = try await database.read { db in try await db.query(statement) }
        switch rows.first?.first {
        case .integer(let count)?: return Int(count)
        case .real(let count)?: return Int(count)
        case .text(let count)?: return Int(count) ?? 0
        default: return 0
        }
    }

    /// Deletes counters whose window started before `before`.
    public func pruneCounters(before: Int64) async throws {
        let statement = SQLFragment(
            unsafeSQL: "DELETE FROM \(dialect.table(Self.counterTable)) WHERE windowStart < ?", [.integer(before)])
        _ = try await database.write { db in try await db.query(statement) }
    }
}
