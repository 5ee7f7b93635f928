import Foundation
import Logging
import ParsleyStorage
import Testing

@testable import ParsleySQLite

/// Reads that are not point lookups run on the thread pool until their statement has proven quick, then where they
/// are asked for; a run of the same statement that turns out long is interrupted at the budget, answered from the
/// pool in full, and sends the statement back to the pool.
@Suite("SQLite quick reads")
struct SQLiteQuickReadsTests {
    /// One statement whose cost its bind sets: the count of 1...n.
    static let count = #"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?) SELECT count(*) FROM s"#

    /// A new database with one reader connection, served while `body` runs.
    static func withDatabase(statementTimeout: Duration, _ body: (SQLiteDatabase) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-quick-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try await SQLiteDatabase.open(
            path: folder.appendingPathComponent("db.sqlite").path, readers: 1, statementTimeout: statementTimeout, logger: Logger(label: "test"))
        try await database.serving { try await body(database) }
    }

    @Test("a statement proven quick runs here; a long run of it is finished on the pool and sends it back there")
    func provenQuickThenLong() async throws {
        try await Self.withDatabase(statementTimeout: .seconds(60)) { database in
            func count(_ n: Int64) async throws -> SQLRow? {
                try await database.read { try await $0.query(SQLFragment(unsafeSQL: Self.count, [.integer(n)])) }.first
            }
            for n in 1...Int64(QuickReads.provenAfter) {
                let row = try await count(n)
                #expect(row == [.integer(n)])
            }
            var places = database.readPlaces.counts
            #expect(places == (0, QuickReads.provenAfter, 0), "unproven: every run on the pool")

            let ten = try await count(10)
            #expect(ten == [.integer(10)])
            places = database.readPlaces.counts
            #expect(places == (1, QuickReads.provenAfter, 0), "proven quick: run here")

            // Millions of steps: far past the budget here, well inside the statement timeout on the pool.
            let long: Int64 = 3_000_000
            let all = try await count(long)
            #expect(all == [.integer(long)], "answered in full")
            places = database.readPlaces.counts
            #expect(places == (1, QuickReads.provenAfter + 1, 1), "interrupted here at the budget, run again on the pool")

            let five = try await count(5)
            #expect(five == [.integer(5)])
            places = database.readPlaces.counts
            #expect(places == (1, QuickReads.provenAfter + 2, 1), "back on the pool until it proves quick again")
        }
    }

    @Test("a statement with a regular expression stays on the pool, however quick its runs")
    func regularExpressionsStayOnThePool() async throws {
        try await Self.withDatabase(statementTimeout: .seconds(60)) { database in
            let regex = SQLiteDialect().regexMatch(SQLFragment(unsafeSQL: "'journal entry'"), "^jour", options: "")
            let runs = QuickReads.provenAfter * 2
            for _ in 0..<runs {
                let rows = try await database.read { try await $0.query(SQLFragment(unsafeSQL: "SELECT ") + regex) }
                #expect(rows.first == [.integer(1)])
            }
            #expect(database.readPlaces.counts == (0, runs, 0))
        }
    }

    @Test("a read proven quick still ends at the statement timeout when that is shorter than the budget")
    func shortStatementTimeout() async throws {
        try await Self.withDatabase(statementTimeout: .milliseconds(10)) { database in
            func count(_ n: Int64) async throws -> [SQLRow] {
                try await database.read { try await $0.query(SQLFragment(unsafeSQL: Self.count, [.integer(n)])) }
            }
            // Until the statement has proven quick and one read ran here. On a loaded machine even these tiny counts
            // can pass 10 ms (CI: the other backend's tests on the same 2 cores); such a run only starts the proof again.
            var runs: Int64 = 0
            while database.readPlaces.counts.inPlace == 0, runs < 200 {
                runs += 1
                do {
                    _ = try await count(runs)
                } catch StoreError.timeout {
                    continue
                }
            }
            #expect(database.readPlaces.counts.inPlace == 1)
            await #expect(throws: StoreError.timeout) { _ = try await count(1_000_000_000) }
        }
    }
}
