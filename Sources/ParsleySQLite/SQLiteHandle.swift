import CParsleySQLite
import NIOConcurrencyHelpers
import ParsleyStorage

/// One connection to the SQLite engine, with a cache of prepared statements.
///
/// `@unchecked Sendable` is safe because a handle is only ever used by one task at a time: readers are
/// checked out of `ReaderPool` exclusively, and the writer belongs to the single writer loop. The connection is
/// also opened with `SQLITE_OPEN_FULLMUTEX`, so even a mistaken concurrent call would be serialised by SQLite.
final class SQLiteHandle: @unchecked Sendable {
    private let db: OpaquePointer
    private(set) var statements: [String: CachedStatement] = [:]
    /// When the running read must stop: `StatementWatchdog`.
    let deadline = NIOLockedValueBox(Deadline())
    static let statementCacheSize = 256

    struct Deadline {
        /// `DispatchTime` nanoseconds; 0 when no read runs under a deadline.
        var until: UInt64 = 0
        /// Whether the watchdog interrupted the read that runs under it.
        var fired = false
    }

    init(path: String) throws {
        var handle: OpaquePointer?
        let flags = PARSLEY_SQLITE_OPEN_READWRITE | PARSLEY_SQLITE_OPEN_CREATE | PARSLEY_SQLITE_OPEN_FULLMUTEX
        let rc = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == PARSLEY_SQLITE_OK, let handle else {
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw StoreError.database("cannot open SQLite database at \(path) (code \(rc))")
        }
        db = handle
        sqlite_nio_sqlite3_busy_timeout(db, 10_000)
        _ = parsley_sqlite_enable_qpsg(db)
        SQLiteFunctionInstaller.install(on: db)
    }

    deinit { close() }

    private var closed = false

    func close() {
        guard !closed else { return }
        closed = true
        for (_, cached) in statements { sqlite_nio_sqlite3_finalize(cached.pointer) }
        statements = [:]
        sqlite_nio_sqlite3_close_v2(db)
    }

    /// Has SQLite write the WAL's length in pages to `pages` after each commit, and stop checkpointing by itself.
    func watchWAL(_ pages: UnsafeMutablePointer<Int32>) { parsley_sqlite_watch_wal(db, pages) }

    /// Asks the running statement to stop (safe from any thread).
    func interrupt() { sqlite_nio_sqlite3_interrupt(db) }

    /// Runs one statement, returning all rows.
    func query(_ sql: String, _ binds: [SQLValue]) throws -> [SQLRow] {
        try SQLFragment(unsafeSQL: sql, binds).checkSize()
        return try run(try statement(sql).pointer, binds)
    }

    /// Runs a prepared statement of this connection once with `binds`, returning all rows.
    func run(_ stmt: OpaquePointer, _ binds: [SQLValue]) throws -> [SQLRow] {
        defer {
            sqlite_nio_sqlite3_reset(stmt)
            sqlite_nio_sqlite3_clear_bindings(stmt)
        }
        for (i, value) in binds.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite_nio_sqlite3_bind_null(stmt, index)
            case .integer(let v): rc = sqlite_nio_sqlite3_bind_int64(stmt, index, v)
            case .real(let v): rc = sqlite_nio_sqlite3_bind_double(stmt, index, v)
            case .text(let s), .json(let s):
                var s = s
                rc = s.withUTF8 { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { chars in
                        if let base = chars.baseAddress { return parsley_sqlite_bind_text(stmt, index, base, Int32(chars.count)) }
                        return "".withCString { parsley_sqlite_bind_text(stmt, index, $0, 0) }
                    }
                }
            }
            guard rc == PARSLEY_SQLITE_OK else { throw error(rc) }
        }
        var rows: [SQLRow] = []
        let columns = sqlite_nio_sqlite3_column_count(stmt)
        while true {
            let rc = sqlite_nio_sqlite3_step(stmt)
            if rc == PARSLEY_SQLITE_DONE { break }
            guard rc == PARSLEY_SQLITE_ROW else { throw error(rc) }
            var row: SQLRow = []
            row.reserveCapacity(Int(columns))
            for c in 0..<columns {
                switch sqlite_nio_sqlite3_column_type(stmt, c) {
                case PARSLEY_SQLITE_INTEGER: row.append(.integer(sqlite_nio_sqlite3_column_int64(stmt, c)))
                case PARSLEY_SQLITE_FLOAT: row.append(.real(sqlite_nio_sqlite3_column_double(stmt, c)))
                case PARSLEY_SQLITE_NULL: row.append(.null)
                default:
                    let count = Int(sqlite_nio_sqlite3_column_bytes(stmt, c))
                    if let text = sqlite_nio_sqlite3_column_text(stmt, c) {
                        row.append(.text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)))
                    } else {
                        row.append(.text(""))
                    }
                }
            }
            rows.append(row)
        }
        return rows
    }

    func statement(_ sql: String) throws -> CachedStatement {
        if let cached = statements[sql] { return cached }
        if statements.count >= Self.statementCacheSize { clearStatements() }
        var stmt: OpaquePointer?
        let rc = sqlite_nio_sqlite3_prepare_v3(db, sql, -1, UInt32(PARSLEY_SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == PARSLEY_SQLITE_OK, let stmt else { throw error(rc) }
        let cached = CachedStatement(pointer: stmt, sql: sql)
        statements[sql] = cached
        return cached
    }

    /// Drops cached statements (after DDL changed a table they refer to, SQLite re-prepares anyway; this
    /// just frees memory).
    func clearStatements() {
        for (_, cached) in statements { sqlite_nio_sqlite3_finalize(cached.pointer) }
        statements = [:]
    }

    /// The typed error for a failed call (`SQLiteErrors`), read from the connection before anything else runs on it.
    private func error(_ rc: Int32) -> StoreError {
        let message = String(cString: sqlite_nio_sqlite3_errmsg(db))
        let extended = sqlite_nio_sqlite3_extended_errcode(db)
        return SQLiteErrors.storeError(code: rc, extended: extended, message: message) { table, columns in
            self.uniqueIndex(table: table, columns: columns)
        }
    }

    /// The unique index of `table` on exactly `columns`, in order (SQLite's message names the columns, not the index).
    private func uniqueIndex(table: String, columns: [String]) -> String? {
        for index in names("SELECT name FROM pragma_index_list(?) WHERE \"unique\" = 1", table)
        where names("SELECT name FROM pragma_index_info(?) ORDER BY seqno", index) == columns {
            return index
        }
        return nil
    }

    /// The text of the first column of each row of a statement with one text parameter; empty on any failure.
    /// Prepared outside the statement cache: this runs while a failed cached statement waits for its reset, and
    /// a full cache would finalize that statement.
    private func names(_ sql: String, _ parameter: String) -> [String] {
        var stmt: OpaquePointer?
        guard sqlite_nio_sqlite3_prepare_v3(db, sql, -1, 0, &stmt, nil) == PARSLEY_SQLITE_OK, let stmt else { return [] }
        defer { sqlite_nio_sqlite3_finalize(stmt) }
        var parameter = parameter
        let bound = parameter.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                chars.baseAddress.map { parsley_sqlite_bind_text(stmt, 1, $0, Int32(chars.count)) } ?? PARSLEY_SQLITE_OK
            }
        }
        guard bound == PARSLEY_SQLITE_OK else { return [] }
        var out: [String] = []
        while sqlite_nio_sqlite3_step(stmt) == PARSLEY_SQLITE_ROW {
            guard let text = sqlite_nio_sqlite3_column_text(stmt, 0) else { continue }
            let count = Int(sqlite_nio_sqlite3_column_bytes(stmt, 0))
            out.append(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        }
        return out
    }
}
