import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import ParsleyCore
public import ParsleyStorage
import SQLiteNIO

/// The embedded database: one SQLite file in WAL mode with `synchronous=FULL`, one writer connection that
/// commits concurrent writes together (group commit), and a pool of reader connections.
///
/// Durability: a `write` returns only after the COMMIT that contains it has been synced to the WAL, so an
/// acknowledged write survives a crash of the process or the machine.
public final class SQLiteDatabase: SQLDatabase {
    public let dialect: any SQLDialect = SQLiteDialect()
    let writer: SQLiteConnection
    let readers: ReaderPool
    let queue = WriteQueue()
    let threadPool: NIOThreadPool
    let logger: Logger
    private let loop = NIOLockedValueBox<Task<Void, Never>?>(nil)

    /// Opens (creating if needed) the database at `path`.
    public static func open(path: String, readers readerCount: Int = 4, logger: Logger) async throws -> SQLiteDatabase {
        let threadPool = NIOThreadPool(numberOfThreads: readerCount + 1)
        threadPool.start()
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let writer = try await SQLiteConnection.open(storage: .file(path: path), threadPool: threadPool, logger: logger, on: eventLoop)
        for pragma in [
            "PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA busy_timeout=10000", "PRAGMA temp_store=MEMORY",
            "PRAGMA cache_size=-32000",
        ] {
            _ = try await writer.query(pragma)
        }
        for f in SQLiteFunctions.all() { try await writer.install(customFunction: f) }
        var readerConnections: [SQLiteConnection] = []
        for _ in 0..<readerCount {
            let c = try await SQLiteConnection.open(storage: .file(path: path), threadPool: threadPool, logger: logger, on: eventLoop)
            _ = try await c.query("PRAGMA busy_timeout=10000")
            _ = try await c.query("PRAGMA cache_size=-16000")
            for f in SQLiteFunctions.all() { try await c.install(customFunction: f) }
            readerConnections.append(c)
        }
        let db = SQLiteDatabase(writer: writer, readers: ReaderPool(readerConnections), threadPool: threadPool, logger: logger)
        db.startWriter()
        return db
    }

    init(writer: SQLiteConnection, readers: ReaderPool, threadPool: NIOThreadPool, logger: Logger) {
        self.writer = writer
        self.readers = readers
        self.threadPool = threadPool
        self.logger = logger
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        let connection = await readers.checkout()
        defer { readers.checkin(connection) }
        return try await body(SQLiteExecutor(connection: connection))
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        if let current = WriteScope.executor { return try await body(current) }
        let box = ResultBox<T>()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = WriteJob(
                run: { executor in box.value = try await body(executor) },
                finish: { error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let value = box.value {
                        continuation.resume(returning: value)
                    } else {
                        continuation.resume(throwing: StoreError.database("write produced no result"))
                    }
                }
            )
            if !queue.enqueue(job) { job.finish(StoreError.database("database is closed")) }
        }
    }

    public func close() async throws {
        queue.close()
        let task = loop.withLockedValue { $0 }
        await task?.value
        try await writer.close()
        for c in readers.all { try await c.close() }
        try await threadPool.shutdownGracefully()
    }

    private func startWriter() {
        let task = Task { [self] in await writerLoop() }
        loop.withLockedValue { $0 = task }
    }

    /// Takes every queued job, runs them in one transaction (each in its own savepoint when there are
    /// several, so one failure does not undo the others), commits once, then answers them all.
    private func writerLoop() async {
        let executor = SQLiteExecutor(connection: writer)
        while let jobs = await queue.next() {
            var outcomes: [(any Error)?] = []
            outcomes.reserveCapacity(jobs.count)
            do {
                _ = try await executor.query("BEGIN IMMEDIATE")
            } catch {
                for job in jobs { job.finish(error) }
                continue
            }
            if jobs.count == 1 {
                do {
                    try await jobs[0].run(executor)
                    outcomes.append(nil)
                } catch {
                    _ = try? await executor.query("ROLLBACK")
                    jobs[0].finish(error)
                    continue
                }
            } else {
                for job in jobs {
                    do {
                        _ = try await executor.query("SAVEPOINT job")
                        try await job.run(executor)
                        _ = try await executor.query("RELEASE job")
                        outcomes.append(nil)
                    } catch {
                        _ = try? await executor.query("ROLLBACK TO job")
                        _ = try? await executor.query("RELEASE job")
                        outcomes.append(error)
                    }
                }
            }
            do {
                _ = try await executor.query("COMMIT")
                for (job, outcome) in zip(jobs, outcomes) { job.finish(outcome) }
            } catch {
                logger.error("commit failed: \(error)")
                _ = try? await executor.query("ROLLBACK")
                for job in jobs { job.finish(error) }
            }
        }
    }
}

/// Runs statements on one sqlite-nio connection, translating driver errors into `StoreError`.
struct SQLiteExecutor: SQLExecutor {
    let connection: SQLiteConnection

    func query(_ fragment: SQLFragment) async throws -> [SQLRow] {
        let binds: [SQLiteData] = fragment.binds.map { value in
            switch value {
            case .null: return .null
            case .integer(let i): return .integer(Int(i))
            case .real(let d): return .float(d)
            case .text(let s): return .text(s)
            }
        }
        let rows = RowCollector()
        do {
            try await connection.query(fragment.sql, binds) { row in
                rows.append(row.columns.map { column in
                    switch column.data {
                    case .null: return SQLValue.null
                    case .integer(let i): return .integer(Int64(i))
                    case .float(let d): return .real(d)
                    case .text(let s): return .text(s)
                    case .blob(let b): return .text(String(buffer: b))
                    }
                })
            }
        } catch let error as SQLiteError {
            switch error.reason {
            case .constraint, .constraintUniqueFailed, .constraintPrimaryKeyFailed: throw StoreError.duplicateValue(error.message)
            default:
                if error.message.contains("RegexTimeout") { throw StoreError.timeout }
                throw StoreError.database(error.message)
            }
        }
        return rows.rows
    }
}

/// Collects rows delivered on the connection's thread. The callback runs synchronously inside the query
/// call on one thread at a time, so the lock is uncontended.
final class RowCollector: @unchecked Sendable {
    private var storage: [SQLRow] = []
    private let lock = NIOLock()
    func append(_ row: SQLRow) { lock.withLock { storage.append(row) } }
    var rows: [SQLRow] { lock.withLock { storage } }
}

/// Holds a write job's result between the transaction and the caller's continuation.
final class ResultBox<T>: @unchecked Sendable {
    // Written by the writer loop before `finish`, read in `finish`: strictly sequential.
    var value: T?
}

struct WriteJob: Sendable {
    let run: @Sendable (any SQLExecutor) async throws -> Void
    let finish: @Sendable ((any Error)?) -> Void
}

/// The queue of pending writes; `next()` hands the writer everything queued so far.
final class WriteQueue: Sendable {
    private struct State {
        var jobs: [WriteJob] = []
        var waiter: CheckedContinuation<[WriteJob]?, Never>?
        var closed = false
    }
    private let state = NIOLockedValueBox(State())

    func enqueue(_ job: WriteJob) -> Bool {
        let (accepted, waiter, batch): (Bool, CheckedContinuation<[WriteJob]?, Never>?, [WriteJob]) = state.withLockedValue { s in
            if s.closed { return (false, nil, []) }
            if let w = s.waiter {
                s.waiter = nil
                return (true, w, [job])
            }
            s.jobs.append(job)
            return (true, nil, [])
        }
        waiter?.resume(returning: batch)
        return accepted
    }

    func next() async -> [WriteJob]? {
        await withCheckedContinuation { continuation in
            let ready: [WriteJob]?? = state.withLockedValue { s in
                if !s.jobs.isEmpty {
                    let jobs = s.jobs
                    s.jobs = []
                    return .some(jobs)
                }
                if s.closed { return .some(nil) }
                s.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func close() {
        let waiter = state.withLockedValue { s -> CheckedContinuation<[WriteJob]?, Never>? in
            s.closed = true
            let w = s.waiter
            s.waiter = nil
            return w
        }
        waiter?.resume(returning: nil)
    }
}

/// Reader connections handed out one request at a time.
final class ReaderPool: Sendable {
    let all: [SQLiteConnection]
    private struct State {
        var free: [Int]
        var waiters: [CheckedContinuation<Int, Never>] = []
    }
    private let state: NIOLockedValueBox<State>

    init(_ connections: [SQLiteConnection]) {
        all = connections
        state = NIOLockedValueBox(State(free: Array(connections.indices)))
    }

    func checkout() async -> SQLiteConnection {
        let index = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let got: Int? = state.withLockedValue { s in
                if let i = s.free.popLast() { return i }
                s.waiters.append(continuation)
                return nil
            }
            if let got { continuation.resume(returning: got) }
        }
        return all[index]
    }

    func checkin(_ connection: SQLiteConnection) {
        guard let index = all.firstIndex(where: { $0 === connection }) else { return }
        let waiter: CheckedContinuation<Int, Never>? = state.withLockedValue { s in
            if !s.waiters.isEmpty { return s.waiters.removeFirst() }
            s.free.append(index)
            return nil
        }
        waiter?.resume(returning: index)
    }
}
