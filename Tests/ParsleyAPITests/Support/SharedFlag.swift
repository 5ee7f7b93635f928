import Synchronization

/// A flag that a test and the tasks it starts share: one sets or clears it, the others look.
final class SharedFlag: Sendable {
    private let raised: Mutex<Bool>

    init(_ raised: Bool = false) { self.raised = Mutex(raised) }

    var isSet: Bool { raised.withLock { $0 } }
    func set() { raised.withLock { $0 = true } }
    func clear() { raised.withLock { $0 = false } }
}

/// Polls `condition` every 5 ms for at most `limit`; throws when it never held.
func waitUntil(upTo limit: Duration = .seconds(10), _ condition: () -> Bool) async throws {
    let started = ContinuousClock.now
    while !condition() {
        guard ContinuousClock.now - started < limit else { throw ConditionNeverHeld(limit: limit) }
        try await Task.sleep(for: .milliseconds(5))
    }
}

struct ConditionNeverHeld: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "the condition did not hold within \(limit)" }
}
