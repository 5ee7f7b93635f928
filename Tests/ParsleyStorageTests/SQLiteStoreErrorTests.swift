import Foundation
import Logging
import ParsleySQLite
import ParsleyStorage
import Testing

/// The SQLite backend reports its failures as typed `StoreError` cases: unique violations name the index (which
/// SQLite's own message does not always do), broken patterns and over-deep statements have their own cases.
@Suite("SQLite store errors")
struct SQLiteStoreErrorTests {
    /// Runs `body` on a new database in a temporary folder.
    func withDatabase(_ body: (SQLiteDatabase) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-store-errors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try await SQLiteDatabase.open(path: folder.appendingPathComponent("db.sqlite").path, readers: 1, logger: Logger(label: "test"))
        try await database.serving { try await body(database) }
    }

    func write(_ database: SQLiteDatabase, _ statements: [SQLFragment]) async throws {
        _ = try await database.write { db in
            for statement in statements { try await db.query(statement) }
        }
    }

    /// The error `statement` fails with (nil when it succeeds).
    func failure(_ database: SQLiteDatabase, _ statement: SQLFragment) async -> StoreError? {
        do {
            try await write(database, [statement])
            return nil
        } catch {
            return error as? StoreError
        }
    }

    @Test("a unique index on an expression, on columns, and a primary key are named")
    func uniqueViolations() async throws {
        try await withDatabase { database in
            try await write(
                database,
                [
                    #"CREATE TABLE "T" ("objectId" TEXT PRIMARY KEY, "name" TEXT, "email" TEXT, "a" TEXT, "b" TEXT)"#,
                    #"CREATE UNIQUE INDEX "T_email_lower" ON "T" (lower("email"))"#,
                    #"CREATE UNIQUE INDEX "T_name" ON "T" ("name")"#,
                    #"CREATE UNIQUE INDEX "T_a_b" ON "T" ("a", "b")"#,
                    #"INSERT INTO "T" VALUES ('1', 'ann', 'ann@example.com', 'x', 'y')"#,
                ])
            #expect(
                await failure(database, #"INSERT INTO "T" ("objectId", "email") VALUES ('2', 'ANN@example.com')"#)
                    == .uniqueViolation(index: "T_email_lower"))
            #expect(await failure(database, #"INSERT INTO "T" ("objectId", "name") VALUES ('3', 'ann')"#) == .uniqueViolation(index: "T_name"))
            #expect(await failure(database, #"INSERT INTO "T" ("objectId", "a", "b") VALUES ('4', 'x', 'y')"#) == .uniqueViolation(index: "T_a_b"))
            #expect(await failure(database, #"INSERT INTO "T" ("objectId") VALUES ('1')"#) == .uniqueViolation(index: "T_pkey"))
            // Other constraints are not unique violations.
            try await write(database, [#"CREATE TABLE "N" ("x" TEXT NOT NULL)"#])
            let notNull = await failure(database, #"INSERT INTO "N" ("x") VALUES (NULL)"#)
            guard case .database? = notNull else {
                Issue.record("expected StoreError.database, got \(String(describing: notNull))")
                return
            }
        }
    }

    @Test("a unique index over values stored twice cannot be created")
    func uniqueIndexOverDuplicates() async throws {
        try await withDatabase { database in
            try await write(
                database,
                [
                    #"CREATE TABLE "R" ("objectId" TEXT PRIMARY KEY, "name" TEXT)"#,
                    #"INSERT INTO "R" VALUES ('1', 'admin'), ('2', 'admin')"#,
                ])
            let error = await failure(database, #"CREATE UNIQUE INDEX "R_name" ON "R" ("name")"#)
            guard case .uniqueViolation? = error else {
                Issue.record("expected StoreError.uniqueViolation, got \(String(describing: error))")
                return
            }
        }
    }

    @Test("a pattern that does not compile is invalidRegex; an over-deep expression is tooComplex")
    func regexAndComplexity() async throws {
        try await withDatabase { database in
            let regex = SQLFragment(unsafeSQL: "SELECT parsley_regex(?, ?, ?)", [.text("(unclosed"), .text(""), .text("subject")])
            await #expect(throws: StoreError.invalidRegex) { _ = try await database.read { db in try await db.query(regex) } }
            let deep = SQLFragment(unsafeSQL: "SELECT 1" + String(repeating: " + 1", count: 1_100))
            await #expect(throws: StoreError.tooComplex) { _ = try await database.read { db in try await db.query(deep) } }
        }
    }
}
