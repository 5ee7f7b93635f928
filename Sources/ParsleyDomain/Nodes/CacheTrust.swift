/// How long a server process trusts what it cached from a database that other processes (nodes) also write.
/// Announcements (`LISTEN/NOTIFY` on PostgreSQL) usually drop a stale entry at once, but correctness does not
/// depend on them: an entry older than its bound is checked against the database again before it is used, so a
/// change made on another node is seen by every request that arrives at least this long after its commit, however
/// late (or lost) the announcement is and however loaded the machine. The age counts from when the read of the
/// entry started, so a read that was slow to return cannot stretch the bound.
public enum CacheTrust {
    /// A session token: a revoked session (logout, password change, deleted user) fails with 209 on every node.
    public static let sessions: Duration = .seconds(2)
    /// A user's role names: a user added to or removed from a role gains or loses its rights on every node.
    public static let roles: Duration = .seconds(2)
    /// The class schemas (fields, class-level permissions, protected fields, indexes) on a database several processes
    /// share: their versions are compared with the database's. A class or field the cache does not know is re-read at
    /// once, whatever this bound.
    public static let schemas: Duration = .seconds(2)
    /// That a stored file exists, for the check of the File values a write names: a file deleted on another node is
    /// refused in writes on every node.
    public static let files: Duration = .seconds(2)

    static func milliseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }
}
