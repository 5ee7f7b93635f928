import Dispatch
import NIOConcurrencyHelpers

/// Checkpoints the WAL beside the writer instead of inside its COMMIT.
///
/// SQLite's automatic checkpoint runs in the COMMIT that takes the WAL past 1,000 pages: that commit copies the
/// pages into the database file and syncs it before it returns, and every write queued behind it waits (the journal
/// mix saw groups of writes answered 100-130 ms late). Here the writer only notes the WAL's length after each
/// commit (SQLite's WAL hook). Past 1,000 pages a connection of its own copies them (a PASSIVE checkpoint: what no
/// reader still needs, never waiting for a lock) on a queue of its own, while writes go on appending. Once it is
/// done, the writer copies the few pages appended meanwhile itself, after its next COMMIT: then the WAL is copied
/// whole, and the next write starts it over from the top, as the automatic checkpoint would have. Without that last
/// step the WAL would only start over when a background checkpoint happened to finish between two commits, and
/// would grow under steady writes. Durability is unchanged: a commit is synced in the WAL before it is answered.
final class WALCheckpointer: @unchecked Sendable {
    // @unchecked: `walPages` is written by SQLite in the writer's COMMIT and read right after it by the same thread,
    // as is `phase` (the writer loop); `handle` is used only on `queue`; `copied` is locked.
    static let pages: Int32 = 1000

    enum Phase: Equatable {
        /// The WAL is shorter than `pages` since it started over.
        case waiting
        /// The background checkpoint runs, or has run and the writer has not finished it yet.
        case copying
        /// The writer finished a checkpoint at this length; the WAL did not start over (a reader still used it).
        case finished(at: Int32)
    }

    private let handle: SQLiteHandle
    let queue = DispatchQueue(label: "parsley.sqlite.checkpoint")
    private let copied = NIOLockedValueBox(false)
    private let walPages: UnsafeMutablePointer<Int32>
    private(set) var phase = Phase.waiting
    /// The WAL's length in pages after the last commit.
    private(set) var lastPages: Int32 = 0

    init(path: String, writer: SQLiteHandle) throws {
        handle = try SQLiteHandle(path: path)
        walPages = .allocate(capacity: 1)
        walPages.initialize(to: 0)
        writer.watchWAL(walPages)
    }

    /// After the writer's COMMIT, on its thread.
    func committed(writer: SQLiteHandle) {
        let pages = walPages.pointee
        if pages < lastPages { phase = .waiting }  // the WAL started over
        lastPages = pages
        switch phase {
        case .waiting:
            if pages >= Self.pages { copyInBackground() }
        case .copying:
            guard copied.withLockedValue({ $0 }) else { return }
            _ = try? writer.query("PRAGMA wal_checkpoint(PASSIVE)", [])
            phase = .finished(at: pages)
        case .finished(let at):
            if pages >= at + Self.pages { copyInBackground() }
        }
    }

    private func copyInBackground() {
        phase = .copying
        copied.withLockedValue { $0 = false }
        queue.async { [self] in
            _ = try? handle.query("PRAGMA wal_checkpoint(PASSIVE)", [])
            copied.withLockedValue { $0 = true }
        }
    }

    /// Whether the last background checkpoint is done (tests).
    var backgroundDone: Bool { copied.withLockedValue { $0 } }

    /// Once the writer is closed: waits for a running checkpoint, then closes the connection.
    func close() {
        queue.sync {
            handle.close()
            walPages.deallocate()
        }
    }
}
