import ParsleyCore

/// Runs SQL on one connection.
public protocol SQLExecutor: Sendable {
    /// Runs one statement and returns its rows.
    /// - Throws: `StoreError`.
    @discardableResult func query(_ fragment: SQLFragment) async throws -> [SQLRow]
}

/// A SQL database as the storage layer needs it: reads on any connection, writes serialised through one
/// transaction at a time (the backend may commit several writers' work together).
public protocol SQLDatabase: Sendable {
    var dialect: any SQLDialect { get }
    /// Runs `body` on a read connection, or inside `Transaction.current` when there is one (reads see the
    /// transaction's own changes, on every backend).
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T
    /// Runs `body` inside a write transaction; its effects are durable when this returns, and rolled back
    /// entirely if `body` throws. Inside `Transaction.current` the body joins it. The backend sets
    /// `Transaction.current` for the body and calls `Transaction.committed()` right after its COMMIT.
    func write<T: Sendable>(_ body: @escaping @Sendable (Transaction) async throws -> T) async throws -> T
    /// Runs one statement as a write transaction of its own, with `write`'s guarantees (durable when this returns,
    /// nothing stored if it fails; inside `Transaction.current` it joins it). PostgreSQL runs it without BEGIN and
    /// COMMIT (one round trip instead of three): for a write that is one statement and has nothing to roll back after it.
    @discardableResult func writeStatement(_ statement: SQLFragment) async throws -> [SQLRow]
    /// The backend's long-lived work (PostgreSQL's connection pool and change listener, SQLite's writer), until
    /// the calling task is cancelled: a service of the server's ServiceGroup (`DatabaseService`), or beside a
    /// command or a test (`serving`). Statements issued before it starts wait for it; once it has returned,
    /// writes queued on SQLite have committed and new ones fail.
    func run() async
    /// Makes the database ready for Parsley (PostgreSQL: creates the SQL functions); needs `run()` running.
    /// Cheap after the first call.
    func prepare() async throws
    /// Releases what `open` took (files, thread pools), after `run()` has returned or if it never ran.
    func close() async throws
    /// Connections in use, connections available, and writes waiting or running (for metrics).
    var poolUsage: (readersBusy: Int, readers: Int, writesQueued: Int) { get }
    /// Coalesces concurrent lookups of one object by id into shared statements (nil: each runs its own).
    var pointReads: PointReadBatcher? { get }
    /// Reads by where they ran since the start, for a backend that runs some on the caller's thread (SQLite's
    /// proven-quick finds; nil elsewhere): in place, on its thread pool, begun in place and moved past their budget.
    var readPlaceCounts: (inPlace: Int, onPool: Int, overBudget: Int)? { get }
    /// Carries committed change events to every server process on this database.
    var changeChannel: any ChangeChannel { get }
}

extension SQLDatabase {
    public var pointReads: PointReadBatcher? { nil }
    public var readPlaceCounts: (inPlace: Int, onPool: Int, overBudget: Int)? { nil }
    @discardableResult public func writeStatement(_ statement: SQLFragment) async throws -> [SQLRow] {
        try await write { try await $0.query(statement) }
    }
    public func prepare() async throws {}

    /// Runs `body` while `run()` works beside it in a child task, then stops it and closes the database: how
    /// commands and tests use a database outside the server's ServiceGroup.
    public func serving<T>(_ body: () async throws -> T) async throws -> T {
        let outcome: Result<T, any Error> = await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.run() }
            let outcome: Result<T, any Error>
            do {
                try await prepare()
                outcome = .success(try await body())
            } catch {
                outcome = .failure(error)
            }
            group.cancelAll()
            await group.waitForAll()
            return outcome
        }
        let closed = await Result { try await close() }
        let value = try outcome.get()
        try closed.get()
        return value
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing call.
    init(_ body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// Errors a backend reports, translated from its driver's codes inside the backend module, so callers tell
/// them apart by case, never by message text.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A unique index refused a second equal value. `index` is the index's name as it was created (see
    /// `SystemIndex`); a primary key is named `<table>_pkey`, as PostgreSQL names it.
    case uniqueViolation(index: String)
    /// A `$regex` pattern the database's regular-expression engine does not accept.
    case invalidRegex
    /// The statement ran past its time budget (statement timeout, or a regular expression that ran too long).
    case timeout
    /// The statement is more than the database can plan or run (expressions nested too deeply and the like).
    case tooComplex
    /// Any other failure, with the driver's message.
    case database(String)

    public var description: String {
        switch self {
        case .uniqueViolation(let index): return "duplicate value in unique index \(index)"
        case .invalidRegex: return "invalid regular expression"
        case .timeout: return "statement timeout"
        case .tooComplex: return "statement too complex"
        case .database(let m): return m
        }
    }
}

/// A database that several server processes share: each announces the cached data it changed (schemas, roles,
/// sessions), and hears what the others changed, so no process serves a cache another has made stale.
public protocol ChangeBroadcasting: Sendable {
    /// Tells the other processes that `topic` changed. Returns once the database has delivered the message
    /// (this process hears its own message back), or after a short timeout.
    func broadcast(_ topic: String) async
    /// Topics other processes announced. `"*"` means everything may be stale (after a lost connection).
    func changes() -> AsyncStream<String>
}
