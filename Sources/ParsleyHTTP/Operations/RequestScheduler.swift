import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Runs the API port's work oldest request first.
///
/// Swift's shared executor runs every task's work in the order it became ready. A request that waits on something
/// (a read on the thread pool, the writer's COMMIT, a file's metadata) goes back to the end of that queue, behind every
/// request that arrived meanwhile: with 64 connections on 2 cores, a write that waited three times passed the whole
/// queue three times (30-50 ms in the journal mix), and a read that never waited passed once. Here every request gets
/// a number when it arrives, and of the work that is ready, the oldest request's runs first: a request waits once, for
/// the requests before it, however often it suspends.
///
/// Nothing is held back: a request waiting on I/O holds no place, and every ready job runs as soon as a thread is
/// free and no older request has work ready. The threads are the scheduler's own, one per core, shared by every
/// server of the process; a connection's task, its request's child tasks and the actors they call run on them (task
/// executor preference, SE-0417).
///
/// The process's event loops do not preempt these threads when they wake (`EventLoopPolicy`): a job runs to its
/// end rather than being cut off each time it hands an event loop a response to write.
final class RequestScheduler: Sendable {
    /// The process's scheduler (its threads live as long as the process).
    static let shared: RequestScheduler = {
        EventLoopPolicy.yieldOnWakeUp(MultiThreadedEventLoopGroup.singleton)
        let scheduler = RequestScheduler()
        sharedStarted.store(true, ordering: .releasing)
        return scheduler
    }()
    /// Whether `shared` exists (a metrics scrape reads it without starting it).
    private static let sharedStarted = Atomic(false)
    static var sharedIfStarted: RequestScheduler? { sharedStarted.load(ordering: .acquiring) ? shared : nil }

    private struct Entry {
        let request: UInt64
        let order: UInt64
        let job: UnownedJob
        let executor: ConnectionExecutor
    }

    private struct State {
        var heap: [Entry] = []
        var nextRequest: UInt64 = 1
        var nextOrder: UInt64 = 0
        var idle = 0
        var stopping = false
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    nonisolated(unsafe) private var state = State()
    let threadCount: Int

    /// `threads`: by default one per core as NIO counts them (its event loops' number), which heeds a container's CPU
    /// quota where `ProcessInfo.activeProcessorCount` gives the host's cores: more request threads than cores cost
    /// throughput and p99 (README, "Event loops that wait their turn").
    init(threads: Int? = nil) {
        threadCount = max(threads ?? System.coreCount, 1)
        for i in 0..<threadCount {
            let thread = Thread { [self] in
                // Named from the thread itself (on Linux a name set before `start()` never reaches the OS thread),
                // within the 15 bytes Linux keeps.
                Thread.current.name = "parsley-req-\(i)"
                work()
            }
            thread.start()
        }
    }

    /// Queues a connection's job under its request's number; `request` 0 (no request under way): a new number, as an
    /// arrival.
    fileprivate func enqueue(_ job: UnownedJob, request: UInt64, executor: ConnectionExecutor) {
        condition.lock()
        var number = request
        if number == 0 {
            number = state.nextRequest
            state.nextRequest &+= 1
            executor.arrived(number)
        }
        push(Entry(request: number, order: state.nextOrder, job: job, executor: executor))
        state.nextOrder &+= 1
        let wake = state.idle > 0
        condition.unlock()
        if wake { condition.signal() }
    }

    /// Jobs ready to run and waiting for a thread, and threads at work (for metrics).
    var usage: (jobsReady: Int, threadsBusy: Int, threads: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (state.heap.count, threadCount - state.idle, threadCount)
    }

    /// Ends the threads once no work is queued (a test's scheduler; the shared one lives as long as the process).
    func stop() {
        condition.lock()
        state.stopping = true
        condition.unlock()
        condition.broadcast()
    }

    private func work() {
        while true {
            condition.lock()
            while state.heap.isEmpty, !state.stopping {
                state.idle += 1
                condition.wait()
                state.idle -= 1
            }
            if state.heap.isEmpty {
                condition.unlock()
                return
            }
            let entry = pop()
            condition.unlock()
            entry.job.runSynchronously(on: entry.executor.asUnownedTaskExecutor())
        }
    }

    private static func before(_ a: Entry, _ b: Entry) -> Bool {
        a.request != b.request ? a.request < b.request : a.order < b.order
    }

    private func push(_ entry: Entry) {
        state.heap.append(entry)
        var i = state.heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.before(state.heap[i], state.heap[parent]) else { break }
            state.heap.swapAt(i, parent)
            i = parent
        }
    }

    private func pop() -> Entry {
        let top = state.heap[0]
        let last = state.heap.removeLast()
        guard !state.heap.isEmpty else { return top }
        state.heap[0] = last
        var i = 0
        let n = state.heap.count
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var m = i
            if l < n, Self.before(state.heap[l], state.heap[m]) { m = l }
            if r < n, Self.before(state.heap[r], state.heap[m]) { m = r }
            if m == i { return top }
            state.heap.swapAt(i, m)
            i = m
        }
    }
}

/// One connection's executor. Between requests its jobs (the wake-up when a request arrives) take a new number;
/// while a request is served (`begin` to `end`) they all keep the number the request arrived with.
final class ConnectionExecutor: TaskExecutor {
    let scheduler: RequestScheduler
    private let current = Atomic<UInt64>(0)
    private let lastArrival = Atomic<UInt64>(0)

    init(scheduler: RequestScheduler) {
        self.scheduler = scheduler
    }

    func enqueue(_ job: consuming ExecutorJob) {
        scheduler.enqueue(UnownedJob(job), request: current.load(ordering: .acquiring), executor: self)
    }

    fileprivate func arrived(_ number: UInt64) { lastArrival.store(number, ordering: .releasing) }

    /// A request starts: the connection's work keeps the number of the wake-up that brought it.
    func begin() { current.store(lastArrival.load(ordering: .acquiring), ordering: .releasing) }

    /// The request is answered.
    func end() { current.store(0, ordering: .releasing) }

    @TaskLocal static var serving: ConnectionExecutor?
}
