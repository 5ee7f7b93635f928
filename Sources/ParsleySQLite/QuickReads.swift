import CParsleySQLite
import Dispatch
import NIOConcurrencyHelpers
import ParsleyStorage
import Synchronization

/// A prepared statement of a connection, and how its last reads went.
final class CachedStatement {
    let pointer: OpaquePointer
    /// Its runs in a row (up to `QuickReads.provenAfter`) that took at most `QuickReads.quickSteps` steps of SQLite's
    /// engine. Only reads count: the writer's statements always run where they are called.
    var quickRuns = 0
    /// Whether it calls a function whose one call may take long (`QuickReads.longCalls`): never run here.
    let callsLong: Bool

    init(pointer: OpaquePointer, sql: String) {
        self.pointer = pointer
        callsLong = QuickReads.longCalls.contains { sql.contains($0) }
    }
}

/// Where a read that is not a point lookup runs. A query that may scan runs on the database's thread pool, so a
/// slow one never holds a thread that serves HTTP. But the hop there and back is two thread switches, and most
/// finds an app sends are index lookups of a few rows: the journal's "my entries" ran 36-53% faster without it.
///
/// So each reader connection watches each of its statements (one statement is one query shape: the binds change,
/// the SQL does not). A statement whose last `provenAfter` runs on the pool each took at most `quickSteps` steps
/// of SQLite's engine (a count that does not depend on the load of the machine, as a time would) has proven quick,
/// and runs where it is asked for, under a deadline of `budget`. A run past the deadline is interrupted by the
/// watchdog and run again on the pool under the statement timeout; a run over `quickSteps` steps, or any failure,
/// sends the statement back to the pool until it proves quick again. The worst a read can cost a thread serving
/// HTTP is about `budget` plus one watchdog tick, once per `provenAfter` quick runs of its shape.
///
/// Steps do not count the time spent inside a function: a statement that calls one of `longCalls` (a regular
/// expression may take up to its own budget of 250 ms on one row, before SQLite can see an interrupt) stays on the pool.
enum QuickReads {
    static let quickSteps: Int32 = 20_000
    static let provenAfter = 8
    static let budget: Duration = .milliseconds(20)
    static let longCalls = ["parsley_regex(", "parsley_text_score(", "parsley_polygon_contains("]
}

/// Reads (not point lookups) by where they ran: for tests and `/metrics`.
final class ReadPlaces: Sendable {
    let here = Atomic(0)
    let onPool = Atomic(0)
    /// Reads begun here that ran past the budget and were run again on the pool.
    let overBudget = Atomic(0)

    var counts: (inPlace: Int, onPool: Int, overBudget: Int) {
        (here.load(ordering: .relaxed), onPool.load(ordering: .relaxed), overBudget.load(ordering: .relaxed))
    }
}

/// What `readIfProvenQuick` did.
enum QuickRead {
    case rows([SQLRow])
    /// Its statement has not proven quick: nothing ran.
    case notProven
    /// It ran past the budget and was interrupted: nothing was read.
    case overBudget
}

extension SQLiteHandle {
    /// A read on the thread pool, counted for `QuickReads`.
    func countedRead(_ read: SQLFragment) throws -> [SQLRow] {
        try read.checkSize()
        return try counted(try statement(read.sql), read.binds)
    }

    /// The read run here, under a deadline of `budget`, when its statement has proven quick.
    func readIfProvenQuick(_ read: SQLFragment, budget: Duration) throws -> QuickRead {
        guard let cached = statements[read.sql], cached.quickRuns >= QuickReads.provenAfter, !cached.callsLong else { return .notProven }
        try read.checkSize()
        let until = DispatchTime.now().uptimeNanoseconds &+ StatementWatchdog.nanoseconds(budget)
        deadline.withLockedValue { $0 = Deadline(until: until) }
        defer { deadline.withLockedValue { $0 = Deadline() } }
        do {
            return .rows(try counted(cached, read.binds))
        } catch StoreError.timeout where deadline.withLockedValue({ $0.fired }) {
            return .overBudget
        }
    }

    private func counted(_ cached: CachedStatement, _ binds: [SQLValue]) throws -> [SQLRow] {
        _ = sqlite_nio_sqlite3_stmt_status(cached.pointer, PARSLEY_SQLITE_STMTSTATUS_VM_STEP, 1)
        var quick = false
        defer { cached.quickRuns = quick ? min(cached.quickRuns + 1, QuickReads.provenAfter) : 0 }
        let rows = try run(cached.pointer, binds)
        quick = sqlite_nio_sqlite3_stmt_status(cached.pointer, PARSLEY_SQLITE_STMTSTATUS_VM_STEP, 1) <= QuickReads.quickSteps
        return rows
    }
}
