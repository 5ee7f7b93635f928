import ParsleyCore
import Synchronization

/// One write transaction: the connection its statements run on, and what is to happen once it has committed.
/// Reads and writes made inside it see its uncommitted changes on both backends. Rolled back, it runs none of
/// its commit hooks or after-commit actions.
///
/// Two kinds of follow-up: `onCommit` hooks are quick and synchronous, and the backend runs them right after its
/// COMMIT, before the next transaction's, so they observe commits in order (the in-process change channel);
/// `afterCommit` actions may wait, and run in the task that asked for the transaction once `SQLStore.transaction`
/// returns from the commit (cache invalidation across processes, consumers of change events).
public final class Transaction: SQLExecutor, Sendable {
    let executor: any SQLExecutor
    private let hooks = Mutex<[@Sendable () -> Void]>([])
    private let actions = Mutex<[@Sendable () async -> Void]>([])

    /// For backends: wraps the connection of a write transaction they opened.
    public init(_ executor: any SQLExecutor) {
        self.executor = executor
    }

    @discardableResult public func query(_ fragment: SQLFragment) async throws -> [SQLRow] {
        try await executor.query(fragment)
    }

    /// Runs `hook` as soon as the outermost transaction has committed, in commit order across transactions.
    public func onCommit(_ hook: @escaping @Sendable () -> Void) {
        hooks.withLock { $0.append(hook) }
    }

    /// Runs `action` after the outermost transaction has committed, in the order the actions were added.
    public func afterCommit(_ action: @escaping @Sendable () async -> Void) {
        actions.withLock { $0.append(action) }
    }

    /// For backends: call once, right after COMMIT succeeded (and never after a rollback).
    public func committed() {
        let run = hooks.withLock { h in
            defer { h = [] }
            return h
        }
        for hook in run { hook() }
    }

    func takeActions() -> [@Sendable () async -> Void] {
        actions.withLock { a in
            defer { a = [] }
            return a
        }
    }

    /// The write transaction the current task is inside, if any: a write started within it joins it instead of
    /// queueing a new one (SQLite has one writer, which the outer transaction holds), and its follow-ups wait for
    /// the outer commit.
    @TaskLocal public static var current: Transaction?
}

extension SQLStore {
    /// Runs `body` in a write transaction (or in the current one, see `Transaction.current`), then, once the
    /// transaction has committed, its after-commit actions.
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) async throws -> T) async throws -> T {
        if let current = Transaction.current { return try await body(current) }
        let (result, transaction) = try await database.write { transaction in
            (try await body(transaction), transaction)
        }
        for action in transaction.takeActions() { await action() }
        return result
    }
}
