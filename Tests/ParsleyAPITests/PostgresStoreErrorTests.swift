import Foundation
import ParsleyPostgres
import ParsleyStorage
import Testing

/// The PostgreSQL backend reports its failures as typed `StoreError` cases, from SQLSTATEs (never message text):
/// unique violations name the index or constraint, and broken patterns, statement timeouts and over-deep
/// statements have their own cases, as on SQLite (Tests/ParsleyStorageTests/SQLiteStoreErrorTests.swift).
@Suite("PostgreSQL store errors", .enabled(if: Backend.all.contains(.postgres), "PostgreSQL is not available"))
struct PostgresStoreErrorTests {
    func write(_ database: any SQLDatabase, _ statements: [SQLFragment]) async throws {
        _ = try await database.write { db in
            for statement in statements { try await db.query(statement) }
        }
    }

    /// The error `statement` fails with (nil when it succeeds).
    func failure(_ database: any SQLDatabase, _ statement: SQLFragment) async -> StoreError? {
        do {
            try await write(database, [statement])
            return nil
        } catch {
            return error as? StoreError
        }
    }

    @Test("a unique index on an expression, on columns, and a primary key are named; other constraints are not unique violations")
    func uniqueViolations() async throws {
        try await TestDatabase.with(.postgres, logger: TestDatabase.logger) { db in
            let database = db.database
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
            try await write(database, [#"CREATE TABLE "N" ("x" TEXT NOT NULL)"#])
            let notNull = await failure(database, #"INSERT INTO "N" ("x") VALUES (NULL)"#)
            guard case .database(let message)? = notNull else {
                Issue.record("expected StoreError.database, got \(String(describing: notNull))")
                return
            }
            #expect(message.hasPrefix("23502"), "the SQLSTATE leads the message: \(message)")
            // A failed write left nothing behind: the transaction was rolled back.
            let rows = try await database.read { try await $0.query(#"SELECT count(*)::text FROM "T""#) }
            #expect(rows.first?.first?.text == "1")
        }
    }

    @Test("a pattern that does not compile is invalidRegex; a statement past its timeout is timeout; an over-deep one is tooComplex")
    func regexTimeoutAndComplexity() async throws {
        try await TestDatabase.with(.postgres, logger: TestDatabase.logger, statementTimeout: .milliseconds(300)) { db in
            let database = db.database
            let regex = SQLFragment(unsafeSQL: "SELECT ? ~ ?", [.text("subject"), .text("(unclosed")])
            await #expect(throws: StoreError.invalidRegex) { _ = try await database.read { db in try await db.query(regex) } }
            await #expect(throws: StoreError.timeout) { _ = try await database.read { db in try await db.query("SELECT pg_sleep(3)") } }
            let deep = SQLFragment(unsafeSQL: "SELECT 1" + String(repeating: " + 1", count: 100_000))
            await #expect(throws: StoreError.tooComplex) { _ = try await database.read { db in try await db.query(deep) } }
            // The connection that timed out is still good for the next statement.
            let one = try await database.read { try await $0.query("SELECT 1::text") }
            #expect(one.first?.first?.text == "1")
        }
    }
}
