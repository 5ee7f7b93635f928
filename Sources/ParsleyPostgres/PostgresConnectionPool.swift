import Logging
import NIOCore
import NIOPosix
import ParsleyStorage
import PostgresNIO
import Synchronization

/// The statement connections: at most `maximum`, opened on demand, the most recently used lent first, closed after
/// `idleTimeout` unused. A lease and a release are a few instructions under one lock. A lease that waits longer than
/// `leaseTimeout` for a connection fails (every connection stayed busy: a stuck database must not hang requests).
///
/// Written instead of postgres-nio's `PostgresClient` pool, whose state machine schedules a keep-alive and an idle
/// timer each time a connection goes back (two child tasks each, on the shared executor) and cancels them at the
/// next lease: several thread wake-ups per statement. Here one sweep in `run()` closes the connections that were
/// idle too long.
final class PostgresConnectionPool: Sendable {
    struct Idle {
        let connection: PostgresConnection
        let since: ContinuousClock.Instant
    }
    /// What a waiting lease is given: a connection another statement released, or leave to open one (a connection
    /// closed and freed a place).
    enum Grant: Sendable {
        case connection(PostgresConnection)
        case open
    }
    struct Waiter {
        let id: Int
        let since: ContinuousClock.Instant
        let continuation: CheckedContinuation<Grant, any Error>
    }
    struct State: ~Copyable {
        /// Last in, first out: the warm connections are used and the cold ones age out.
        var idle: [Idle] = []
        /// Open or opening, lent or idle.
        var count = 0
        var waiters: [Waiter] = []
        var nextID = 0
        var closed = false
    }

    let maximum: Int
    let idleTimeout: Duration
    let leaseTimeout: Duration
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let state = Mutex(State())

    init(
        configuration: PostgresConnection.Configuration, maximum: Int, idleTimeout: Duration, leaseTimeout: Duration,
        logger: Logger
    ) {
        self.configuration = configuration
        self.maximum = max(1, maximum)
        self.idleTimeout = idleTimeout
        self.leaseTimeout = leaseTimeout
        self.logger = logger
    }

    /// Runs `body` on a connection of the pool; the connection goes back when it returns or throws.
    func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await lease()
        do {
            let result = try await body(connection)
            release(connection)
            return result
        } catch {
            release(connection)
            throw error
        }
    }

    func lease() async throws -> PostgresConnection {
        // An idle connection or a place to open one; else the id the wait is queued (and cancelled) under.
        enum First {
            case granted(Grant)
            case wait(id: Int)
        }
        let first: First = try state.withLock { s in
            if let grant = try Self.take(&s, maximum: maximum) { return .granted(grant) }
            s.nextID += 1
            return .wait(id: s.nextID)
        }
        let id: Int
        switch first {
        case .granted(.connection(let connection)): return connection
        case .granted(.open): return try await open()
        case .wait(let waitID): id = waitID
        }
        // The pool is looked at again under the lock that queues the waiter: a connection released in between is
        // not missed (a wait decided under one lock and queued under another could sit beside an idle connection).
        let grant = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                let now: Result<Grant, any Error>? = state.withLock { s in
                    do {
                        if Task.isCancelled { throw CancellationError() }
                        if let grant = try Self.take(&s, maximum: maximum) { return .success(grant) }
                    } catch {
                        return .failure(error)
                    }
                    s.waiters.append(Waiter(id: id, since: .now, continuation: continuation))
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> Waiter? in
                guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
        switch grant {
        case .connection(let connection): return connection
        case .open: return try await open()
        }
    }

    /// An idle connection (the most recent), or a place to open one; nil when all `maximum` are in use.
    private static func take(_ s: inout State, maximum: Int) throws -> Grant? {
        if s.closed { throw closedError }
        while let idle = s.idle.popLast() {
            if !idle.connection.isClosed { return .connection(idle.connection) }
            s.count -= 1
        }
        guard s.count < maximum else { return nil }
        s.count += 1
        return .open
    }

    /// A place in `count` is free (its connection closed, or could not be opened): it passes to the oldest waiter,
    /// who opens a connection of its own, or it is given up.
    private static func passPlace(_ s: inout State) -> Waiter? {
        if !s.closed, !s.waiters.isEmpty { return s.waiters.removeFirst() }
        s.count -= 1
        return nil
    }

    /// Gives the connection to the oldest waiter, or keeps it idle. A closed connection frees its place (the oldest
    /// waiter opens one of its own); after `close()`, a released connection is closed.
    func release(_ connection: PostgresConnection) {
        enum After {
            case nothing
            case grant(Waiter, Grant)
            case close
        }
        let after: After = state.withLock { s in
            if connection.isClosed || s.closed {
                if let waiter = Self.passPlace(&s) { return .grant(waiter, .open) }
                return connection.isClosed ? .nothing : .close
            }
            if !s.waiters.isEmpty { return .grant(s.waiters.removeFirst(), .connection(connection)) }
            s.idle.append(Idle(connection: connection, since: .now))
            return .nothing
        }
        switch after {
        case .nothing: break
        case .grant(let waiter, let grant): waiter.continuation.resume(returning: grant)
        case .close: connection.close().whenComplete { _ in }
        }
    }

    /// Opens a connection for a lease that holds a place in `count`; gives the place back if it fails.
    private func open() async throws -> PostgresConnection {
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        do {
            return try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id, logger: logger)
        } catch {
            // The waiter it passes to tries for itself: the server may be back.
            state.withLock { Self.passPlace(&$0) }?.continuation.resume(returning: .open)
            throw error
        }
    }

    /// Every quarter of the shorter of `idleTimeout` and `leaseTimeout`, until cancelled: closes the connections idle
    /// longer than `idleTimeout` and fails the leases that waited longer than `leaseTimeout`. Then closes the pool: the
    /// idle connections close, waiting leases fail, and connections in use close when released.
    func run() async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: min(idleTimeout, leaseTimeout) / 4)
            } catch {
                break
            }
            let now = ContinuousClock.now
            let (idleSince, waitingSince) = (now - idleTimeout, now - leaseTimeout)
            let (stale, expired) = state.withLock { s -> ([PostgresConnection], [Waiter]) in
                let old = s.idle.filter { $0.since < idleSince }.map(\.connection)
                s.idle.removeAll { $0.since < idleSince }
                s.count -= old.count
                let expired = s.waiters.filter { $0.since < waitingSince }
                s.waiters.removeAll { $0.since < waitingSince }
                return (old, expired)
            }
            if !expired.isEmpty {
                logger.error("PostgreSQL: \(expired.count) statement(s) found no free connection within \(leaseTimeout) (all \(maximum) busy)")
            }
            for waiter in expired { waiter.continuation.resume(throwing: busyError) }
            for connection in stale { try? await connection.close() }
        }
        await close()
    }

    /// What a lease that waited past `leaseTimeout` fails with (an internal error to the client, as a database outage).
    private var busyError: StoreError {
        StoreError.database("no PostgreSQL connection was free within \(leaseTimeout): all \(maximum) stayed busy")
    }

    func close() async {
        let (idle, waiters) = state.withLock { s in
            s.closed = true
            let idle = s.idle.map(\.connection)
            s.count -= idle.count
            s.idle = []
            defer { s.waiters = [] }
            return (idle, s.waiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: Self.closedError) }
        for connection in idle { try? await connection.close() }
    }

    static let closedError = StoreError.database("the server is stopping: its PostgreSQL connections are closed")
}
