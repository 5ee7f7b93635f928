public import Logging
import NIOConcurrencyHelpers
import NIOPosix
import ParsleyCore
public import ParsleyStorage
import Synchronization

/// The embedded database: one SQLite file in WAL mode with `synchronous=FULL`, one writer connection that
/// commits concurrent writes together (group commit), and a pool of reader connections.
///
/// Durability: a `write` returns only after the COMMIT that contains it has been synced, so an acknowledged
/// write survives a crash of the process or the machine.
///
/// Threads: reads that are cheap (primary-key lookups, and reads whose statement has proven quick, `QuickReads`) run
/// on the calling task; reads that can take long run on a dedicated thread pool and are cancelled after
/// `statementTimeout`. The writer loop, with each write's statements and the COMMIT's fsync, runs on a thread of its
/// own (`WriterThread`), and the WAL is checkpointed by a connection of its own beside it (`WALCheckpointer`), so
/// the threads serving HTTP never wait on the disk.
public final class SQLiteDatabase: SQLDatabase {
    public let dialect: any SQLDialect
    public let changeChannel: any ChangeChannel = LocalChangeChannel()
    let writer: SQLiteHandle
    let readers: ReaderPool
    let queue = WriteQueue()
    let threadPool: NIOThreadPool
    let logger: Logger
    let statementTimeout: Duration
    let watchdog: StatementWatchdog
    let readPlaces = ReadPlaces()
    let writerThread = WriterThread()
    let checkpointer: WALCheckpointer
    /// Whether `run()` is working, and who waits for it to end (`close`).
    private let writerState = NIOLockedValueBox<(running: Bool, ended: [CheckedContinuation<Void, Never>])>((false, []))

    /// Opens (creating if needed) the database at `path`.
    /// `tablePrefix`: Parse Server's `collectionPrefix`, before every table and index name.
    public static func open(
        path: String, readers readerCount: Int = 4, statementTimeout: Duration = .seconds(15), tablePrefix: String = "", logger: Logger
    ) async throws -> SQLiteDatabase {
        let threadPool = NIOThreadPool(numberOfThreads: readerCount + 1)
        threadPool.start()
        let (writer, readers, checkpointer) = try await threadPool.runIfActive {
            let writer = try SQLiteHandle(path: path)
            for pragma in [
                "PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA temp_store=MEMORY", "PRAGMA cache_size=-32000",
                "PRAGMA journal_size_limit=67108864",
            ] {
                _ = try writer.query(pragma, [])
            }
            var readers: [SQLiteHandle] = []
            for _ in 0..<readerCount {
                let r = try SQLiteHandle(path: path)
                _ = try r.query("PRAGMA cache_size=-16000", [])
                _ = try r.query("PRAGMA temp_store=MEMORY", [])
                readers.append(r)
            }
            return (writer, readers, try WALCheckpointer(path: path, writer: writer))
        }
        return SQLiteDatabase(
            writer: writer, readers: ReaderPool(readers), checkpointer: checkpointer, threadPool: threadPool, statementTimeout: statementTimeout,
            logger: logger, tablePrefix: tablePrefix)
    }

    init(
        writer: SQLiteHandle, readers: ReaderPool, checkpointer: WALCheckpointer, threadPool: NIOThreadPool, statementTimeout: Duration,
        logger: Logger, tablePrefix: String = ""
    ) {
        self.checkpointer = checkpointer
        self.dialect = SQLiteDialect(tablePrefix: tablePrefix)
        self.writer = writer
        self.readers = readers
        self.threadPool = threadPool
        self.statementTimeout = statementTimeout
        self.watchdog = StatementWatchdog(readers: readers.all, timeout: statementTimeout)
        self.logger = logger
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        // Inside a write transaction, reads see its uncommitted changes (as on PostgreSQL).
        if let current = Transaction.current { return try await body(current) }
        let handle = await readers.checkout()
        defer { readers.checkin(handle) }
        return try await body(ReaderExecutor(handle: handle, threadPool: threadPool, timeout: statementTimeout, places: readPlaces))
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (Transaction) async throws -> T) async throws -> T {
        if let current = Transaction.current { return try await body(current) }
        let box = ResultBox<T>()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = WriteJob(
                run: { executor in
                    let transaction = Transaction(executor)
                    box.transaction = transaction
                    box.value = try await Transaction.$current.withValue(transaction) { try await body(transaction) }
                },
                // The writer finishes a group's jobs in order right after its COMMIT: commit hooks run in commit order.
                finish: { error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let value = box.value {
                        box.transaction?.committed()
                        continuation.resume(returning: value)
                    } else {
                        continuation.resume(throwing: StoreError.database("write produced no result"))
                    }
                }
            )
            if !queue.enqueue(job) { job.finish(StoreError.database("database is closed")) }
        }
    }

    /// The writer: commits queued writes in groups until cancelled, then commits what was queued before the
    /// cancellation and refuses the rest.
    public func run() async {
        writerState.withLockedValue { $0.running = true }
        await withTaskExecutorPreference(writerThread) {
            await withTaskCancellationHandler {
                await writerLoop()
            } onCancel: {
                queue.close()
            }
        }
        let waiting = writerState.withLockedValue { s in
            s.running = false
            defer { s.ended = [] }
            return s.ended
        }
        for w in waiting { w.resume() }
    }

    public func close() async throws {
        queue.close()
        // A writer still running finishes what it took; writes it never saw are refused.
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let resumeNow = writerState.withLockedValue { s in
                if s.running { s.ended.append(c) }
                return !s.running
            }
            if resumeNow { c.resume() }
        }
        for job in queue.takeAll() { job.finish(StoreError.database("database is closed")) }
        watchdog.stop()
        let (writer, readers) = (self.writer, self.readers)
        try await threadPool.runIfActive {
            writer.close()
            for r in readers.all { r.close() }
        }
        checkpointer.close()
        try await threadPool.shutdownGracefully()
    }

    /// Takes every queued job, runs them in one transaction (each in its own savepoint when there are
    /// several, so one failure does not undo the others), commits once, then answers them all.
    private func writerLoop() async {
        let executor = WriterExecutor(handle: writer)
        while let jobs = await queue.next() {
            do {
                _ = try writer.query("BEGIN IMMEDIATE", [])
            } catch {
                for job in jobs { job.finish(error) }
                continue
            }
            var outcomes: [(any Error)?] = []
            outcomes.reserveCapacity(jobs.count)
            if jobs.count == 1 {
                do {
                    try await jobs[0].run(executor)
                    outcomes.append(nil)
                } catch {
                    _ = try? writer.query("ROLLBACK", [])
                    jobs[0].finish(error)
                    continue
                }
            } else {
                for job in jobs {
                    do {
                        _ = try writer.query("SAVEPOINT job", [])
                        try await job.run(executor)
                        _ = try writer.query("RELEASE job", [])
                        outcomes.append(nil)
                    } catch {
                        _ = try? writer.query("ROLLBACK TO job", [])
                        _ = try? writer.query("RELEASE job", [])
                        outcomes.append(error)
                    }
                }
            }
            do {
                // On the writer's own thread (`WriterThread`): the fsync blocks no thread that serves HTTP.
                _ = try writer.query("COMMIT", [])
                checkpointer.committed(writer: writer)
                for (job, outcome) in zip(jobs, outcomes) { job.finish(outcome) }
            } catch {
                logger.error("commit failed: \(error)")
                _ = try? writer.query("ROLLBACK", [])
                for job in jobs { job.finish(error) }
            }
        }
    }
}

/// The writer's statements run inline: they touch cached pages; the fsync happens at COMMIT, off this thread.
struct WriterExecutor: SQLExecutor {
    let handle: SQLiteHandle
    func query(_ fragment: SQLFragment) async throws -> [SQLRow] {
        try handle.query(fragment.sql, fragment.binds)
    }
}

/// Reads: point lookups inline, reads that have proven quick inline under a short deadline (`QuickReads`),
/// everything else on the thread pool under a statement timeout.
struct ReaderExecutor: SQLExecutor {
    let handle: SQLiteHandle
    let threadPool: NIOThreadPool
    let timeout: Duration
    let places: ReadPlaces

    func query(_ fragment: SQLFragment) async throws -> [SQLRow] {
        if fragment.isPointLookup { return try handle.query(fragment.sql, fragment.binds) }
        switch try handle.readIfProvenQuick(fragment, budget: min(QuickReads.budget, timeout)) {
        case .rows(let rows):
            places.here.add(1, ordering: .relaxed)
            return rows
        case .overBudget: places.overBudget.add(1, ordering: .relaxed)
        case .notProven: break
        }
        let handle = self.handle
        let rows = try await handle.withDeadline(timeout) {
            try await threadPool.runIfActive { try handle.countedRead(fragment) }
        }
        places.onPool.add(1, ordering: .relaxed)
        return rows
    }
}

/// Holds a write job's result between the transaction and the caller's continuation.
final class ResultBox<T>: @unchecked Sendable {
    // Written by the writer loop before `finish`, read in `finish`: strictly sequential.
    var value: T?
    var transaction: Transaction?
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
        let (accepted, waiter): (Bool, CheckedContinuation<[WriteJob]?, Never>?) = state.withLockedValue { s in
            if s.closed { return (false, nil) }
            if let w = s.waiter {
                s.waiter = nil
                return (true, w)
            }
            s.jobs.append(job)
            return (true, nil)
        }
        waiter?.resume(returning: [job])
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

    /// Removes and returns the jobs nobody took (after `close`).
    func takeAll() -> [WriteJob] {
        state.withLockedValue { s in
            defer { s.jobs = [] }
            return s.jobs
        }
    }

    /// Writes waiting for the writer (metrics).
    var pending: Int { state.withLockedValue { $0.jobs.count } }

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
    let all: [SQLiteHandle]
    private struct State {
        var free: [Int]
        var waiters: [CheckedContinuation<Int, Never>] = []
    }
    private let state: NIOLockedValueBox<State>

    init(_ handles: [SQLiteHandle]) {
        all = handles
        state = NIOLockedValueBox(State(free: Array(handles.indices)))
    }

    /// Connections checked out now (metrics).
    var busy: Int { state.withLockedValue { all.count - $0.free.count } }

    func checkout() async -> SQLiteHandle {
        if let index = state.withLockedValue({ $0.free.popLast() }) { return all[index] }
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

    func checkin(_ handle: SQLiteHandle) {
        guard let index = all.firstIndex(where: { $0 === handle }) else { return }
        let waiter: CheckedContinuation<Int, Never>? = state.withLockedValue { s in
            if !s.waiters.isEmpty { return s.waiters.removeFirst() }
            s.free.append(index)
            return nil
        }
        waiter?.resume(returning: index)
    }
}

extension SQLiteDatabase {
    /// Reader connections in use, readers in the pool, writes waiting for the writer (for metrics).
    public var poolUsage: (readersBusy: Int, readers: Int, writesQueued: Int) {
        (readers.busy, readers.all.count, queue.pending)
    }

    public var readPlaceCounts: (inPlace: Int, onPool: Int, overBudget: Int)? { readPlaces.counts }

    /// A consistent copy of the database file at `path` written to `destination` with `VACUUM INTO`, through a
    /// connection of its own: safe while a server writes to the same file (WAL readers never block writers).
    /// `destination` must not exist yet.
    public static func backup(path: String, to destination: String) throws {
        let handle = try SQLiteHandle(path: path)
        defer { handle.close() }
        _ = try handle.query("VACUUM INTO ?", [.text(destination)])
    }
}
