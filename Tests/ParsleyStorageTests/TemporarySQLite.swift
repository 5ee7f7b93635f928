import Foundation
import Logging
import ParsleySQLite
import ParsleyStorage

/// A SQLite database of one reader in a new temporary folder, served while `body` runs and removed after.
enum TemporarySQLite {
    static func with(_ name: String, _ body: (SQLiteDatabase) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try await SQLiteDatabase.open(path: folder.appendingPathComponent("db.sqlite").path, readers: 1, logger: Logger(label: "test"))
        try await database.serving { try await body(database) }
    }

    /// The steps of SQLite's plan for `statement` (the detail column of `EXPLAIN QUERY PLAN`).
    static func plan(_ database: SQLiteDatabase, _ statement: SQLFragment) async throws -> [String] {
        let explain = SQLFragment(unsafeSQL: "EXPLAIN QUERY PLAN " + statement.sql, statement.binds)
        return try await database.read { try await $0.query(explain) }.compactMap { row -> String? in
            if case .text(let detail)? = row.last { return detail }
            return nil
        }
    }
}
