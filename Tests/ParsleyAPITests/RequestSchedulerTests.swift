import Dispatch
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import ParsleyHTTP

/// The API port's work runs oldest request first (`RequestScheduler`): a request that waited on something goes
/// before requests that arrived after it, where Swift's shared executor would have put it behind them.
@Suite("Request scheduler")
struct RequestSchedulerTests {
    /// Holds the calling thread until `gate` is signalled (a request that keeps the scheduler's one thread busy).
    static func hold(_ gate: DispatchSemaphore) { gate.wait() }

    /// What ran, in order.
    final class Order: Sendable {
        private let names = Mutex<[String]>([])
        func append(_ name: String) { names.withLock { $0.append(name) } }
        var all: [String] { names.withLock { $0 } }
    }

    /// A request's wait, ended by the test.
    final class Parked: Sendable {
        private let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)
        func wait() async { await withCheckedContinuation { c in continuation.withLock { $0 = c } } }
        var isWaiting: Bool { continuation.withLock { $0 != nil } }
        func resume() { continuation.withLock { $0 }?.resume() }
    }

    /// Runs `body` while a request on `busy` holds the scheduler's only thread, then lets that request end.
    static func whileBusy(_ busy: ConnectionExecutor, _ body: () -> Void) async throws {
        let gate = DispatchSemaphore(value: 0)
        let holding = SharedFlag()
        let busyRequest = Task(executorPreference: busy) {
            holding.set()
            hold(gate)
        }
        try await waitUntil { holding.isSet }
        body()
        gate.signal()
        await busyRequest.value
    }

    /// A scheduler with one thread and three connections on it, stopped after `body`.
    static func withConnections(
        _ body: (ConnectionExecutor, ConnectionExecutor, ConnectionExecutor, Order) async throws -> Void
    ) async throws {
        let scheduler = RequestScheduler(threads: 1)
        defer { scheduler.stop() }
        let connections = (0..<3).map { _ in ConnectionExecutor(scheduler: scheduler) }
        try await body(connections[0], connections[1], connections[2], Order())
    }

    @Test("an older request's work that becomes ready later runs before a newer request's")
    func olderRequestFirst() async throws {
        try await Self.withConnections { older, busy, newer, order in
            let parked = Parked()

            // A request arrives, starts, and waits on something (as on the writer's COMMIT).
            let olderRequest = Task(executorPreference: older) {
                older.begin()
                await parked.wait()
                order.append("older")
                older.end()
            }
            try await waitUntil { parked.isWaiting }

            // Another request keeps the only thread busy while a new request arrives, then the older one's wait ends.
            var newerRequest: Task<Void, Never>?
            try await Self.whileBusy(busy) {
                newerRequest = Task(executorPreference: newer) { order.append("newer") }
                parked.resume()
            }
            await olderRequest.value
            await newerRequest?.value
            #expect(order.all == ["older", "newer"])
        }
    }

    @Test("between requests a connection's work takes its turn as a new arrival")
    func idleConnectionQueuesAsNew() async throws {
        try await Self.withConnections { first, busy, second, order in
            // `first` served a request long ago and ended it: its next wake-up is no older than anyone's.
            let served = Task(executorPreference: first) {
                first.begin()
                first.end()
            }
            await served.value

            var arrivals: [Task<Void, Never>] = []
            try await Self.whileBusy(busy) {
                arrivals.append(Task(executorPreference: second) { order.append("second") })
                arrivals.append(Task(executorPreference: first) { order.append("first") })
            }
            for arrival in arrivals { await arrival.value }
            #expect(order.all == ["second", "first"], "arrivals in the order they came")
        }
    }

    #if os(Linux)
        @Test("the event loops do not preempt the request threads: loops are SCHED_BATCH, request threads are not")
        func eventLoopsYieldOnWakeUp() async throws {
            let scheduler = RequestScheduler.shared
            for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() {
                // Runs after the policy's job on the same loop (a loop runs its jobs in order).
                let batch = try await loop.submit { EventLoopPolicy.currentThreadIsBatch }.get()
                #expect(batch, "event loop \(loop) is not SCHED_BATCH")
            }
            let request = Task(executorPreference: ConnectionExecutor(scheduler: scheduler)) {
                EventLoopPolicy.currentThreadIsBatch
            }
            #expect(await request.value == false, "a request thread must keep the default policy")
        }
    #endif
}
