import Foundation
import Logging
import ParsleySQLite
import ParsleyStorage
import Testing

/// The row estimate behind counts of big classes must not read the table: SQLite answers it from the two ends of
/// the rowid b-tree (SEARCH), never a SCAN, and its value is the rowid span.
@Suite("SQLite row estimate")
struct SQLiteEstimateTests {
    @Test("the estimate is two lookups, not a scan, and counts the span of rowids")
    func estimate() async throws {
        try await TemporarySQLite.with("estimate") { database in
            _ = try await database.write { db in
                try await db.query(#"CREATE TABLE "Item" ("objectId" TEXT PRIMARY KEY, "category" TEXT)"#)
                try await db.query(#"CREATE INDEX "Item_category" ON "Item" ("category")"#)
                try await db.query(
                    #"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000) INSERT INTO "Item" SELECT 'o' || i, 'c' || (i "#
                        + #"% 7) FROM s"#
                )
                try await db.query(#"DELETE FROM "Item" WHERE "objectId" IN ('o10', 'o20')"#)
            }
            let estimate = SQLiteDialect().estimatedRowCount("Item")
            let rows = try await database.read { try await $0.query(estimate) }
            #expect(rows.first?.first == .integer(1000), "deleted rows in the middle still count; the ends set the span")
            let steps = try await TemporarySQLite.plan(database, estimate)
            #expect(!steps.isEmpty)
            #expect(!steps.contains { $0.hasPrefix("SCAN") && $0.contains("Item") }, "\(steps)")
        }
    }
}
