public import ParsleyStorage

/// Runs work in one database transaction for callers that do not handle the store (transactional batches):
/// every write inside joins it (`Transaction.current`), and the writes' change events and other after-commit
/// actions run once it has committed, in order, and not at all if it rolls back.
public struct Transactions: Sendable {
    let store: SQLStore

    public init(store: SQLStore) {
        self.store = store
    }

    /// Runs `body` inside one write transaction (or inside the current one); everything it wrote is rolled back
    /// if it throws.
    public func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        // The request's context is set again inside: the store may run the body on its writer's task (see below).
        let request = RequestInfo.current
        return try await store.transaction { _ in try await RequestInfo.$current.withValue(request) { try await body() } }
    }

    /// As `run`, with the webhooks called inside (a batch's `beforeSave` hooks) given `hookBudget` in all rather than
    /// their timeout each: on SQLite the transaction holds the database's one writer, so what a slow hook service can
    /// make every other write wait is bounded by one webhook timeout, not by the number of sub-requests. A hook
    /// called once the budget is spent fails at once (141 timed out) and the transaction rolls back.
    public func run<T: Sendable>(hookBudget: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + hookBudget
        // Set inside the transaction's body (with the request's context): the store may run it on its writer's task,
        // where the caller's task-locals are not seen.
        let request = RequestInfo.current
        return try await store.transaction { _ in
            try await RequestInfo.$current.withValue(request) { try await Self.$hookDeadline.withValue(deadline) { try await body() } }
        }
    }

    /// When the webhooks of the transaction the current task runs in must have answered (nil outside one).
    @TaskLocal public static var hookDeadline: ContinuousClock.Instant?
}
