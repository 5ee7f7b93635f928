import Foundation
import Logging
import ParsleyStorage
import Testing

@testable import ParsleySQLite

/// The WAL is checkpointed beside the writer (`WALCheckpointer`), not inside the COMMIT that takes it past 1,000
/// pages: the COMMIT returns with the WAL long, then the database file gets the pages while the database stays open.
@Suite("SQLite checkpoints")
struct SQLiteCheckpointTests {
    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test("a WAL past 1,000 pages is copied into the database file by the background checkpoint")
    func walIsCheckpointedInTheBackground() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("db.sqlite").path
        let database = try await SQLiteDatabase.open(path: path, readers: 1, logger: Logger(label: "test"))
        try await database.serving {
            try await database.writeStatement(SQLFragment(unsafeSQL: "CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)", []))
            let before = Self.size(path)
            // Held until the write is answered: the COMMIT must not have copied the WAL itself.
            database.checkpointer.queue.suspend()
            // About 1,300 pages of 4 KiB in one commit: past the checkpoint's threshold.
            let rows = "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1300)"
            try await database.writeStatement(SQLFragment(unsafeSQL: rows + " INSERT INTO t(body) SELECT zeroblob(4000) FROM s", []))
            #expect(Self.size(path + "-wal") > 4_000_000, "the commit went to the WAL")
            #expect(Self.size(path) < before + 4_000_000, "the COMMIT did not checkpoint")
            database.checkpointer.queue.resume()
            var after = Self.size(path)
            let deadline = ContinuousClock.now + .seconds(20)
            while after < before + 4_000_000, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                after = Self.size(path)
            }
            #expect(after >= before + 4_000_000, "the pages reached the database file while it stayed open (\(before) -> \(after) bytes)")
            // Writes and reads go on after the checkpoint.
            try await database.writeStatement(SQLFragment(unsafeSQL: "INSERT INTO t(body) VALUES (x'00')", []))
            let count = try await database.read { try await $0.query(SQLFragment(unsafeSQL: "SELECT count(*) FROM t", [])) }
            #expect(count.first == [.integer(1301)])
        }
    }
}
