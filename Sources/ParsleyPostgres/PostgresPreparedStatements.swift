import NIOConcurrencyHelpers
import ParsleyStorage
import PostgresNIO

/// Which statements run as named, server-side prepared statements, under which names.
///
/// A statement that PostgreSQL has parsed and planned once per connection costs it a third of an unnamed one
/// (parse, plan, execute every time): measured with pgbench on a get-by-id, 22 µs against 79 µs of server CPU.
/// postgres-nio keeps the per-connection bookkeeping (prepare on first use, then bind + execute); this type only
/// names the shapes. A shape is the SQL text plus the types of its parameters (the same text bound with a
/// number and with a string are two statements). Only SELECT, INSERT, UPDATE, DELETE and WITH statements with
/// parameters are named, and at most `limit` shapes per generation, so the statements cached on each connection
/// stay bounded. A schema change (here or announced by another process) starts a new generation: a statement
/// prepared against the old columns is never executed again, and connections leave its memory behind when the
/// pool closes them.
final class PreparedStatementNames: Sendable {
    /// The statement text and one letter per parameter type (the text is shared, not copied).
    private struct Shape: Hashable {
        let sql: String
        let types: String
    }
    private struct State {
        var names: [Shape: String] = [:]
        var generation = 0
    }
    private let state = NIOLockedValueBox(State())
    static let limit = 256

    /// The name for this statement, or nil when it should run unnamed.
    func name(sql: String, binds: [SQLValue]) -> String? {
        guard !binds.isEmpty, Self.isPreparable(sql) else { return nil }
        var types = ""
        for b in binds {
            switch b {
            case .null: types.append("n")
            case .integer: types.append("i")
            case .real: types.append("r")
            case .text: types.append("t")
            case .json: types.append("j")
            }
        }
        let key = Shape(sql: sql, types: types)
        return state.withLockedValue { s -> String? in
            if let known = s.names[key] { return known }
            guard s.names.count < Self.limit else { return nil }
            let name = "parsley_\(s.generation)_\(s.names.count)"
            s.names[key] = name
            return name
        }
    }

    /// Forgets every name (after a schema change).
    func newGeneration() {
        state.withLockedValue { s in
            s.generation += 1
            s.names.removeAll()
        }
    }

    static func isPreparable(_ sql: String) -> Bool {
        let head = sql.utf8.prefix(7).map { $0 | 0x20 }  // ASCII lower case
        for keyword in ["select ", "insert ", "update ", "delete ", "with "] where head.starts(with: keyword.utf8) { return true }
        return false
    }

    /// Whether a statement changes the schema (creating, altering or dropping anything).
    static func changesSchema(_ sql: String) -> Bool {
        let head = sql.utf8.prefix(7).map { $0 | 0x20 }
        for keyword in ["create ", "alter ", "drop "] where head.starts(with: keyword.utf8) { return true }
        return false
    }
}

/// One statement of any shape through postgres-nio's prepared-statement API, whose name and text are static
/// requirements: they come from a task-local value that `PostgresExecutor` sets around the call (postgres-nio
/// reads both synchronously on the calling task).
struct NamedStatement: PostgresPreparedStatement {
    @TaskLocal static var current: (name: String, sql: String) = ("", "")
    static var name: String { current.name }
    static var sql: String { current.sql }

    typealias Row = PostgresRow
    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
