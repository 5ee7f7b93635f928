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
        try await store.transaction { _ in try await body() }
    }
}
