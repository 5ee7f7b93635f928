import Dispatch

/// The writer's own thread. The writer loop, and every write's body it runs, executes here instead of on Swift's
/// shared cooperative threads.
///
/// Why: the writer is the one serial step every write passes. On the shared threads each of its awaits went to the
/// back of the queue of every request's work; with 2 cores busy serving reads, a group of writes waited there again
/// and again, and writes took 30-50 ms in the journal mix against 12 ms alone. On a thread of its own the writer
/// still shares the cores, but the operating system gives it its turn instead of a place behind every read.
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
