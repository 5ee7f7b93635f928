/// The embedded dashboard's sign-ins in the database (`_DashboardSession`), for servers that share it: a browser
/// signed in through one node is signed in on every node. Rows are keyed by a hash of the cookie's value, never the
/// value itself.
public struct StoredDashboardSession: Sendable, Equatable {
    public var csrfToken: String
    public var readOnly: Bool
    public var username: String?
    /// Milliseconds since 1970 of the last use some node recorded.
    public var lastUsed: Int64

    public init(csrfToken: String, readOnly: Bool, username: String?, lastUsed: Int64) {
        self.csrfToken = csrfToken
        self.readOnly = readOnly
        self.username = username
        self.lastUsed = lastUsed
    }
}

extension SQLStore {
    static let dashboardSessionTable = "_DashboardSession"

    var dashboardSessions: String { dialect.table(Self.dashboardSessionTable) }

    /// Creates `_DashboardSession` if needed.
    public func createDashboardSessionTable() async throws {
        let statement = SQLFragment(
            unsafeSQL: "CREATE TABLE IF NOT EXISTS \(dashboardSessions) (key TEXT PRIMARY KEY, csrfToken TEXT NOT NULL, readOnly BIGINT NOT NULL, "
                + "username TEXT, lastUsed BIGINT NOT NULL)")
        let lock = dialect.tableCreationLock
        _ = try await database.write { db in
            if let lock { try await db.query(lock) }
            return try await db.query(statement)
        }
    }

    public func saveDashboardSession(_ key: String, _ session: StoredDashboardSession) async throws {
        let statement = SQLFragment(
            unsafeSQL: "INSERT INTO \(dashboardSessions) (key, csrfToken, readOnly, username, lastUsed) VALUES (?, ?, ?, ?, ?)",
            [
                .text(key), .text(session.csrfToken), .integer(session.readOnly ? 1 : 0), session.username.map(SQLValue.text) ?? .null,
                .integer(session.lastUsed),
            ])
        _ = try await database.write { db in try await db.query(statement) }
    }

    /// The session stored under `key`, nil when there is none.
    public func dashboardSession(_ key: String) async throws -> StoredDashboardSession? {
        let statement = SQLFragment(
            unsafeSQL: "SELECT csrfToken, readOnly, username, lastUsed FROM \(dashboardSessions) WHERE key = ?", [.text(key)])
        let rows = try await database.read { db in try await db.query(statement) }
        guard let row = rows.first, row.count == 4, let csrf = row[0].text else { return nil }
        func number(_ value: SQLValue) -> Int64 {
            switch value {
            case .integer(let n): return n
            case .real(let d): return Int64(d)
            case .text(let t): return Int64(t) ?? 0
            default: return 0
            }
        }
        return StoredDashboardSession(csrfToken: csrf, readOnly: number(row[1]) != 0, username: row[2].text, lastUsed: number(row[3]))
    }

    public func touchDashboardSession(_ key: String, lastUsed: Int64) async throws {
        let statement = SQLFragment(unsafeSQL: "UPDATE \(dashboardSessions) SET lastUsed = ? WHERE key = ?", [.integer(lastUsed), .text(key)])
        _ = try await database.write { db in try await db.query(statement) }
    }

    public func deleteDashboardSession(_ key: String) async throws {
        let statement = SQLFragment(unsafeSQL: "DELETE FROM \(dashboardSessions) WHERE key = ?", [.text(key)])
        _ = try await database.write { db in try await db.query(statement) }
    }

    /// Deletes the sessions nobody used since `before`.
    public func pruneDashboardSessions(lastUsedBefore before: Int64) async throws {
        let statement = SQLFragment(unsafeSQL: "DELETE FROM \(dashboardSessions) WHERE lastUsed < ?", [.integer(before)])
        _ = try await database.write { db in try await db.query(statement) }
    }
}
