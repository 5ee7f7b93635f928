import Dispatch

/// The writer's own thread. The writer loop, and every write's body it runs, executes here instead of on Swift's
/// shared cooperative threads.
///
/// Why: the writer is the one serial step every write passes, and it blocks on its COMMIT's fsync. On a thread of its
/// own it syncs there (no hop to the thread pool and back), and its awaits never wait behind the requests' work.
/// (Measured in the journal mix, the writer was idle two thirds of the time either way: the 30-50 ms writes there
/// came from the requests' own suspensions, which `RequestScheduler` in ParsleyHTTP orders, and from the automatic
/// checkpoint, which `WALCheckpointer` replaces.)
///
/// A serial dispatch queue outside the cooperative pool (the pool is the global concurrent queue's threads here),
/// so the writer also blocks on its COMMIT's fsync without holding a thread that serves HTTP.
final class WriterThread: TaskExecutor {
    private let queue = DispatchQueue(label: "parsley.sqlite.writer")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
