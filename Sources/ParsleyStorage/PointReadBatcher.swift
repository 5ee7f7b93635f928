import Synchronization

/// Coalesces concurrent lookups of single objects by `objectId` into one `IN (...)` statement.
///
/// At most `concurrency` lookups run at once. A lookup that arrives while all of them are busy waits in a batch
/// with the other waiting lookups whose statement is the same but for the id (same class, columns and read
/// permissions); when a running lookup finishes, the oldest batch runs as one statement and each waiter gets the
/// row with its own id. Under light load nothing waits and nothing changes. A batch only ever starts after each of
/// its lookups arrived, so a lookup still sees every write acknowledged before it was asked.
///
/// Worth it where a statement's round trip costs far more than a row (a database over the network): PostgreSQL.
public final class PointReadBatcher: Sendable {
    /// The statement of one lookup without its id parameter: lookups with equal keys can share a statement.
    struct Key: Equatable {
        var sql: String
        var binds: ArraySlice<SQLValue>
    }

    struct Waiter {
        var id: String
        var continuation: CheckedContinuation<Turn, any Error>
    }

    /// What a waiting lookup is told when it resumes.
    enum Turn {
        /// A slot is free: run your own statement.
        case run
        /// Run one statement for yourself and these waiters, and hand each its row.
        case lead([Waiter])
        /// Another lookup ran the statement: these are your rows.
        case rows([SQLRow])
    }

    struct Batch {
        var key: Key
        var waiters: [Waiter]
    }

    struct State {
        var running = 0
        /// Oldest first.
        var waiting: [Batch] = []
    }

    /// The most ids in one statement (the statement shapes are 1, 2, 4 ... `maxBatch` ids, so a handful of
    /// prepared statements serve every batch).
    static let maxBatch = 64

    let concurrency: Int
    private let state = Mutex(State())
    private let sharedLookups = Atomic<Int>(0)

    public init(concurrency: Int) {
        self.concurrency = max(1, concurrency)
    }

    /// Lookups answered by a statement shared with at least one other lookup, since the start (metrics).
    public var coalesced: Int { sharedLookups.load(ordering: .relaxed) }

    /// The rows of `statement`, a lookup of `id` whose first parameter is that id. `batched` builds the same
    /// statement for a list of ids (each distinct id appears; the list may repeat ids).
    func read(
        id: String, statement: SQLFragment, database: any SQLDatabase, batched: (_ ids: [String]) throws -> SQLFragment
    ) async throws -> [SQLRow] {
        let turn: Turn
        if state.withLock({ claim(&$0) }) {
            turn = .run
        } else {
            let key = Key(sql: statement.sql, binds: statement.binds.dropFirst())
            turn = try await withCheckedThrowingContinuation { continuation in
                let free = state.withLock { s in
                    // A slot may have come free since the first look.
                    if claim(&s) { return true }
                    let waiter = Waiter(id: id, continuation: continuation)
                    if let i = s.waiting.lastIndex(where: { $0.key == key && $0.waiters.count < Self.maxBatch }) {
                        s.waiting[i].waiters.append(waiter)
                    } else {
                        s.waiting.append(Batch(key: key, waiters: [waiter]))
                    }
                    return false
                }
                if free { continuation.resume(returning: .run) }
            }
        }
        switch turn {
        case .rows(let rows):
            return rows
        case .run:
            defer { handOver() }
            return try await database.read { db in try await db.query(statement) }
        case .lead(let others):
            defer { handOver() }
            var ids = [id]
            ids.reserveCapacity(Self.bucket(others.count + 1))
            for waiter in others where !ids.contains(waiter.id) { ids.append(waiter.id) }
            sharedLookups.add(others.count + 1, ordering: .relaxed)
            let distinct = ids.count
            while ids.count < Self.bucket(distinct) { ids.append(id) }
            let rows: [SQLRow]
            do {
                let statement = try batched(ids)
                rows = try await database.read { db in try await db.query(statement) }
            } catch {
                for waiter in others { waiter.continuation.resume(throwing: error) }
                throw error
            }
            for waiter in others { waiter.continuation.resume(returning: .rows(Self.rows(rows, id: waiter.id))) }
            return Self.rows(rows, id: id)
        }
    }

    /// Takes a slot if one is free.
    private func claim(_ s: inout State) -> Bool {
        guard s.running < concurrency else { return false }
        s.running += 1
        return true
    }

    /// Passes the finished lookup's slot to the oldest waiting batch, or frees it.
    private func handOver() {
        let next: Batch? = state.withLock { s in
            guard !s.waiting.isEmpty else {
                s.running -= 1
                return nil
            }
            return s.waiting.removeFirst()
        }
        guard let next, let first = next.waiters.first else { return }
        if next.waiters.count == 1 {
            first.continuation.resume(returning: .run)
        } else {
            first.continuation.resume(returning: .lead(Array(next.waiters.dropFirst())))
        }
    }

    /// The rows for one id (the object's id is the first column).
    static func rows(_ rows: [SQLRow], id: String) -> [SQLRow] {
        rows.filter { $0.first == .text(id) }
    }

    /// The smallest power of two holding `count` ids.
    static func bucket(_ count: Int) -> Int {
        var size = 1
        while size < count { size *= 2 }
        return size
    }
}
