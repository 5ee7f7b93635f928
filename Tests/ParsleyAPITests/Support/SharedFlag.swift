import Synchronization

/// A flag that a test and the tasks it starts share: one sets or clears it, the others look.
final class SharedFlag: Sendable {
    private let raised: Mutex<Bool>

    init(_ raised: Bool = false) { self.raised = Mutex(raised) }

    var isSet: Bool { raised.withLock { $0 } }
    func set() { raised.withLock { $0 = true } }
    func clear() { raised.withLock { $0 = false } }

    /// Returns once the flag is set (looked at every 10 ms); throws when `limit` passes first.
    func wait(upTo limit: Duration = .seconds(10)) async throws {
        let started = ContinuousClock.now
        while !isSet {
            guard ContinuousClock.now - started < limit else { throw NotSet(limit: limit) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    struct NotSet: Error, CustomStringConvertible {
        let limit: Duration
        var description: String { "the flag was not set within \(limit)" }
    }
}
