public import ParsleyCore

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
    /// Runs `body` on a read connection.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T
    /// Runs `body` inside a write transaction; its effects are durable when this returns, and rolled back
    /// entirely if `body` throws.
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T
    func close() async throws
}

/// Errors a backend reports, translated from its driver.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    case duplicateValue(String)
    case timeout
    case database(String)

    public var description: String {
        switch self {
        case .duplicateValue(let m): return "duplicate value: \(m)"
        case .timeout: return "statement timeout"
        case .database(let m): return m
        }
    }
}
