import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// How the event loops' threads share the cores with the `RequestScheduler`'s.
///
/// A request thread wakes an event loop for each response it hands over (and for each statement it sends to
/// PostgreSQL). By default Linux lets the woken thread preempt the waker, so the request thread lost its core in the
/// middle of a job, and that job's request waited out the event loop's slice while the other request thread went on
/// with younger work: the tail the oldest-first order is there to remove. As `SCHED_BATCH` threads the event loops
/// keep their fair share of the CPU but no longer preempt on waking; they run on a free core or at the next tick.
///
/// Measured in turns (README, "Event loops that wait their turn"): the journal mix's p99 on SQLite went from 21-24 ms to
/// 16-18 ms, get by id against the shared bare server from 0.60 to 0.74. Lowering the loops' priority instead (nice
/// 5) helped SQLite less and made PostgreSQL's p99 worse, as its round trips ride on the loops; a second request
/// thread per core added throughput but not a better p99.
enum EventLoopPolicy {
    /// Sets each loop of `group` to `SCHED_BATCH` (Linux; elsewhere nothing). Needs no privilege.
    static func yieldOnWakeUp(_ group: MultiThreadedEventLoopGroup) {
        #if os(Linux)
            for loop in group.makeIterator() {
                loop.execute { batchCurrentThread() }
            }
        #endif
    }

    #if os(Linux)
        /// Linux's `SCHED_BATCH` (`sched.h` defines it only with `_GNU_SOURCE`, which Swift's Glibc module lacks).
        private static let schedBatch: Int32 = 3

        /// `SCHED_BATCH` for the calling thread (pid 0 is the caller; its static priority must be 0).
        static func batchCurrentThread() {
            var parameters = sched_param()
            parameters.sched_priority = 0
            _ = sched_setscheduler(0, schedBatch, &parameters)
        }

        /// Whether the calling thread is a `SCHED_BATCH` thread.
        static var currentThreadIsBatch: Bool { sched_getscheduler(0) == schedBatch }
    #endif
}
