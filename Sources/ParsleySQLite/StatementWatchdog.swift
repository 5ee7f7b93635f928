import Dispatch
import NIOConcurrencyHelpers

/// Interrupts reads that run past the statement timeout. One repeating timer looks at every reader connection,
/// instead of a timer armed (and a dispatch source made) for each query: a profile of the journal workload had
/// those per-query timers at 3-5% of the server's time.
///
/// A connection's deadline is set and cleared under its lock, and the interrupt is sent under the same lock, so it
/// can only reach the statement it was meant for: a statement that finished has cleared its deadline first, and
/// SQLite forgets an interrupt once no statement of the connection runs.
final class StatementWatchdog: @unchecked Sendable {
    // @unchecked: the timer is only resumed in `init` and cancelled in `stop`, both safe from any thread.
    private let timer: any DispatchSourceTimer

    init(readers: [SQLiteHandle], timeout: Duration) {
        // Interrupted at most a quarter of the timeout (and never more than a second) late, and a read run where it was
        // asked for (`QuickReads`) at most half its budget late: in practice every 10 ms.
        let quarter = min(max(Self.nanoseconds(timeout) / 4, 10_000_000), 1_000_000_000)
        let interval = DispatchTimeInterval.nanoseconds(Int(min(quarter, Self.nanoseconds(QuickReads.budget) / 2)))
        // A queue of its own, not a global one: Swift's tasks run on the global queue's threads here, and a read run
        // where it was asked for holds one of them until it is interrupted; a serial queue gets a thread of its own.
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "parsley.sqlite.watchdog"))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
        timer.setEventHandler {
            let now = DispatchTime.now().uptimeNanoseconds
            for reader in readers { reader.interruptIfPast(now) }
        }
        timer.resume()
    }

    func stop() { timer.cancel() }

    static func nanoseconds(_ d: Duration) -> UInt64 {
        UInt64(max(d.components.seconds, 0)) * 1_000_000_000 + UInt64(max(d.components.attoseconds, 0) / 1_000_000_000)
    }
}

extension SQLiteHandle {
    /// Runs `body` (a statement on this connection) under a deadline `timeout` from now.
    func withDeadline<T>(_ timeout: Duration, _ body: () async throws -> T) async throws -> T {
        let until = DispatchTime.now().uptimeNanoseconds &+ StatementWatchdog.nanoseconds(timeout)
        deadline.withLockedValue { $0 = Deadline(until: until) }
        defer { deadline.withLockedValue { $0 = Deadline() } }
        return try await body()
    }

    func interruptIfPast(_ now: UInt64) {
        deadline.withLockedValue { deadline in
            if deadline.until != 0, deadline.until <= now {
                deadline.fired = true
                interrupt()
            }
        }
    }
}
