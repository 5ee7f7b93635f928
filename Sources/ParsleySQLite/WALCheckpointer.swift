import Dispatch
import NIOConcurrencyHelpers

/// Checkpoints the WAL beside the writer instead of inside its COMMIT.
///
/// SQLite's automatic checkpoint runs in the COMMIT that takes the WAL past 1,000 pages: that commit copies the
/// pages into the database file and syncs it before it returns, and every write queued behind it waits (the journal
/// mix saw groups of writes answered 100-130 ms late). Here the writer only notes the WAL's length after each
/// commit (SQLite's WAL hook), and past 1,000 pages a connection of its own runs a PASSIVE checkpoint on a queue of
/// its own, while writes go on appending to the WAL. A PASSIVE checkpoint copies what no reader still needs and
/// never waits for a lock; the WAL starts over from the top at a write after a checkpoint that copied it all, as
/// before. Durability is unchanged: a commit is synced in the WAL before it is answered.
final class WALCheckpointer: @unchecked Sendable {
    // @unchecked: `walPages` is written by SQLite in the writer's COMMIT and read right after it by the same thread
    // (the writer loop); `handle` is used only on `queue`.
    static let pages: Int32 = 1000
    private let handle: SQLiteHandle
    let queue = DispatchQueue(label: "parsley.sqlite.checkpoint")
    private let running = NIOLockedValueBox(false)
    private let walPages: UnsafeMutablePointer<Int32>

    init(path: String, writer: SQLiteHandle) throws {
        handle = try SQLiteHandle(path: path)
        walPages = .allocate(capacity: 1)
        walPages.initialize(to: 0)
        writer.watchWAL(walPages)
    }

    /// After the writer's COMMIT, on its thread: starts a checkpoint when the WAL is long and none runs.
    func committed() {
        guard walPages.pointee >= Self.pages else { return }
        let start = running.withLockedValue { running in
            if running { return false }
            running = true
            return true
        }
        guard start else { return }
        queue.async { [self] in
            _ = try? handle.query("PRAGMA wal_checkpoint(PASSIVE)", [])
            running.withLockedValue { $0 = false }
        }
    }

    /// Once the writer is closed: waits for a running checkpoint, then closes the connection.
    func close() {
        queue.sync {
            handle.close()
            walPages.deallocate()
        }
    }
}
