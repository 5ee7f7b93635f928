import Dispatch
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

    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test("an older request's work that becomes ready later runs before a newer request's")
    func olderRequestFirst() async throws {
        let scheduler = RequestScheduler(threads: 1)
        defer { scheduler.stop() }
        let older = ConnectionExecutor(scheduler: scheduler)
        let busy = ConnectionExecutor(scheduler: scheduler)
        let newer = ConnectionExecutor(scheduler: scheduler)
        let order = Order()
        let parked = Parked()

        // A request arrives, starts, and waits on something (as on the writer's COMMIT).
        let olderRequest = Task(executorPreference: older) {
            older.begin()
            await parked.wait()
            order.append("older")
            older.end()
        }
        try await Self.waitUntil { parked.isWaiting }

        // Another request keeps the only thread busy while the rest happens.
        let gate = DispatchSemaphore(value: 0)
        let holding = SharedFlag()
        let busyRequest = Task(executorPreference: busy) {
            holding.set()
            Self.hold(gate)
        }
        try await Self.waitUntil { holding.isSet }

        // A new request arrives first; then the older request's wait ends.
        let newerRequest = Task(executorPreference: newer) { order.append("newer") }
        parked.resume()
        gate.signal()

        await busyRequest.value
        await olderRequest.value
        await newerRequest.value
        #expect(order.all == ["older", "newer"])
    }

    @Test("between requests a connection's work takes its turn as a new arrival")
    func idleConnectionQueuesAsNew() async throws {
        let scheduler = RequestScheduler(threads: 1)
        defer { scheduler.stop() }
        let first = ConnectionExecutor(scheduler: scheduler)
        let busy = ConnectionExecutor(scheduler: scheduler)
        let second = ConnectionExecutor(scheduler: scheduler)
        let order = Order()
        // `first` served a request long ago and ended it: its next wake-up is no older than anyone's.
        let served = Task(executorPreference: first) {
            first.begin()
            first.end()
        }
        await served.value

        let gate = DispatchSemaphore(value: 0)
        let holding = SharedFlag()
        let busyRequest = Task(executorPreference: busy) {
            holding.set()
            Self.hold(gate)
        }
        try await Self.waitUntil { holding.isSet }
        let secondArrival = Task(executorPreference: second) { order.append("second") }
        let firstArrival = Task(executorPreference: first) { order.append("first") }
        gate.signal()

        await busyRequest.value
        await secondArrival.value
        await firstArrival.value
        #expect(order.all == ["second", "first"], "arrivals in the order they came")
    }
}
