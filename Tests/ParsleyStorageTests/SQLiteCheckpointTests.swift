import Foundation
import Logging
import ParsleyStorage
import Testing

@testable import ParsleySQLite

/// The WAL is checkpointed beside the writer (`WALCheckpointer`), not inside the COMMIT that takes it past 1,000
/// pages: the COMMIT returns with the WAL long, a connection of its own copies what it can in the background, the
/// writer copies the rest after its next commit, and the WAL starts over.
@Suite("SQLite checkpoints")
struct SQLiteCheckpointTests {
    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("a WAL past 1,000 pages is checkpointed beside the writer, finished by it, and starts over")
    func walIsCheckpointedBesideTheWriter() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("db.sqlite").path
        let database = try await SQLiteDatabase.open(path: path, readers: 1, logger: Logger(label: "test"))
        try await database.serving {
            try await database.writeStatement(SQLFragment(unsafeSQL: "CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)", []))
            let before = Self.size(path)
            // A reader that keeps its snapshot from before the big write: the background checkpoint cannot copy
            // the pages written after it, so only the writer's own step can finish the job once the reader is done.
            let reader = try SQLiteHandle(path: path)
            defer { reader.close() }
            _ = try reader.query("BEGIN", [])
            _ = try reader.query("SELECT count(*) FROM t", [])
            // Held until the write is answered: the COMMIT must not have copied the WAL itself.
            database.checkpointer.queue.suspend()
            // About 1,300 pages of 4 KiB in one commit: past the checkpoint's threshold.
            let rows = "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1300)"
            try await database.writeStatement(SQLFragment(unsafeSQL: rows + " INSERT INTO t(body) SELECT zeroblob(4000) FROM s", []))
            #expect(Self.size(path + "-wal") > 4_000_000, "the commit went to the WAL")
            #expect(Self.size(path) < before + 4_000_000, "the COMMIT did not checkpoint")
            #expect(database.checkpointer.phase == .copying)
            database.checkpointer.queue.resume()
            try await Self.waitUntil { database.checkpointer.backgroundDone }
            _ = try reader.query("COMMIT", [])

            // The next commit copies the rest; the write after it starts the WAL over.
            for _ in 0..<3 {
                try await database.writeStatement(SQLFragment(unsafeSQL: "INSERT INTO t(body) VALUES (x'00')", []))
            }
            #expect(Self.size(path) >= before + 4_000_000, "the pages reached the database file while it stayed open")
            #expect(database.checkpointer.lastPages < 10, "the WAL started over (\(database.checkpointer.lastPages) pages)")
            #expect(database.checkpointer.phase == .waiting)
            let count = try await database.read { try await $0.query(SQLFragment(unsafeSQL: "SELECT count(*) FROM t", [])) }
            #expect(count.first == [.integer(1303)])
        }
    }
}
