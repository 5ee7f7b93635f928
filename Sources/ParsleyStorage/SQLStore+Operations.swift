import ParsleyCore

/// Names of the indexes the server creates on its system classes. A `StoreError.uniqueViolation` names the
/// index that refused a value, so callers match these to answer with the right Parse error.
public enum SystemIndex {
    /// Unique, case-insensitive usernames (`lower(username)`).
    public static let userUsername = "_User_username_lower"
    /// Unique, case-insensitive emails (`lower(email)`).
    public static let userEmail = "_User_email_lower"
    /// Plain index on `_User.username` (log-in by exact name).
    public static let userUsernameLookup = "_User_username"
    /// Unique session tokens.
    public static let sessionToken = "_Session_token"
    /// Sessions of a user (log-out everywhere, revocation).
    public static let sessionUser = "_Session_user"
    /// Unique role names.
    public static let roleName = "_Role__unique_name"
    /// Installations by `installationId` (the upsert of `POST /installations`) and by `deviceToken` (a token moves
    /// to the newest installation), and a push's `user` targeting.
    public static let installationId = "_Installation_installationId"
    public static let installationToken = "_Installation_deviceToken"
    public static let installationUser = "_Installation_user"
}

extension SQLStore {
    // MARK: Health and maintenance

    /// Runs a trivial statement on a read connection: throws when the database does not answer.
    public func ping() async throws {
        _ = try await database.read { db in try await db.query("SELECT 1") }
    }

    /// Deletes every object of a class in one write, bypassing the write pipeline (no events, no triggers):
    /// Parse Server's `/purge`. Join tables of relations keep their rows, as they did.
    public func purge(className: String) async throws {
        _ = try await database.write { [self] db in try await writer(db).deleteAll(className: className) }
    }

    /// Whether the table of a class holds at least one object (read on a read connection).
    public func hasObjects(className: String) async throws -> Bool {
        let statement = SQLFragment(unsafeSQL: "SELECT 1 FROM \(dialect.table(className)) LIMIT 1")
        return try await !database.read { db in try await db.query(statement) }.isEmpty
    }

    // MARK: Roles

    /// The names of the roles whose `users` relation holds `userId`, then, when `throughRoles`, repeatedly those
    /// whose `roles` relation holds a role found so far; distinct, non-null, sorted. One recursive query over the
    /// `_Role` join tables; `UNION` makes cycles terminate. The caller checks that `_Role` has the relations.
    public func roleNames(forUser userId: String, throughRoles: Bool) async throws -> [String] {
        let q = dialect.quote
        let users = dialect.table(WhereCompiler.joinTable(field: "users", owner: "_Role"))
        let roles = dialect.table(WhereCompiler.joinTable(field: "roles", owner: "_Role"))
        // Join-table columns are created unquoted (SQLWriter.addColumn), so they are named unquoted here too.
        let (owning, related) = ("owningId", "relatedId")
        var sql = "WITH RECURSIVE \(q("r"))(\(q("id"))) AS (SELECT \(owning) FROM \(users) WHERE \(related) = ?"
        if throughRoles {
            sql += " UNION SELECT \(q("j")).\(owning) FROM \(roles) AS \(q("j")) JOIN \(q("r")) ON \(q("j")).\(related) = \(q("r")).\(q("id"))"
        }
        sql += ") SELECT DISTINCT \(q("name")) FROM \(dialect.table("_Role")) WHERE \(q("objectId")) IN (SELECT \(q("id")) FROM \(q("r")))"
        sql += " AND \(q("name")) IS NOT NULL ORDER BY \(q("name"))"
        let statement = SQLFragment(unsafeSQL: sql, [.text(userId)])
        let rows = try await database.read { db in try await db.query(statement) }
        return rows.compactMap { $0.first?.text }
    }

    // MARK: Indexes of system classes

    /// `_User`'s unique case-insensitive indexes on `username` and `email` (`SystemIndex.userUsername`,
    /// `.userEmail`) and a plain one on `username`. The table must exist.
    public func createUserIndexes() async throws {
        let q = dialect.quote
        _ = try await database.write { db in
            if let lock = dialect.tableCreationLock { try await db.query(lock) }
            try await db.query(
                SQLFragment(
                    unsafeSQL:
                        "CREATE UNIQUE INDEX IF NOT EXISTS \(dialect.table(SystemIndex.userUsername)) ON \(dialect.table("_User")) (lower(\(q("username"))))"
                ))
            try await db.query(
                SQLFragment(
                    unsafeSQL:
                        "CREATE UNIQUE INDEX IF NOT EXISTS \(dialect.table(SystemIndex.userEmail)) ON \(dialect.table("_User")) (lower(\(q("email"))))"
                ))
            try await db.query(
                SQLFragment(
                    unsafeSQL:
                        "CREATE INDEX IF NOT EXISTS \(dialect.table(SystemIndex.userUsernameLookup)) ON \(dialect.table("_User")) (\(q("username")))")
            )
        }
    }

    /// `_Session`'s unique index on `sessionToken` and a plain one on `user`. The table must exist.
    public func createSessionIndexes() async throws {
        let q = dialect.quote
        _ = try await database.write { db in
            if let lock = dialect.tableCreationLock { try await db.query(lock) }
            try await db.query(
                SQLFragment(
                    unsafeSQL:
                        "CREATE UNIQUE INDEX IF NOT EXISTS \(dialect.table(SystemIndex.sessionToken)) ON \(dialect.table("_Session")) (\(q("sessionToken")))"
                ))
            try await db.query(
                SQLFragment(
                    unsafeSQL: "CREATE INDEX IF NOT EXISTS \(dialect.table(SystemIndex.sessionUser)) ON \(dialect.table("_Session")) (\(q("user")))"))
        }
    }

    /// `_Installation`'s lookup indexes (`SystemIndex.installationId`, `.installationToken`, `.installationUser`). The
    /// table must exist with those columns.
    public func createInstallationIndexes() async throws {
        let q = dialect.quote
        _ = try await database.write { db in
            if let lock = dialect.tableCreationLock { try await db.query(lock) }
            for (name, column) in [
                (SystemIndex.installationId, "installationId"), (SystemIndex.installationToken, "deviceToken"),
                (SystemIndex.installationUser, "user"),
            ] {
                try await db.query(
                    SQLFragment(unsafeSQL: "CREATE INDEX IF NOT EXISTS \(dialect.table(name)) ON \(dialect.table("_Installation")) (\(q(column)))"))
            }
        }
    }

    /// `_Role`'s unique index on `name` (`SystemIndex.roleName`). The table must exist.
    /// - Throws: `StoreError.uniqueViolation` when names are already stored twice.
    public func createRoleNameIndex() async throws {
        let q = dialect.quote
        let statement = SQLFragment(
            unsafeSQL: "CREATE UNIQUE INDEX IF NOT EXISTS \(dialect.table(SystemIndex.roleName)) ON \(dialect.table("_Role")) (\(q("name")))")
        let lock = dialect.tableCreationLock
        _ = try await database.write { db in
            if let lock { try await db.query(lock) }
            return try await db.query(statement)
        }
    }
}
