import Synchronization

/// A flag that a test and the tasks it starts share: one sets or clears it, the others look.
final class SharedFlag: Sendable {
    private let raised: Mutex<Bool>

    init(_ raised: Bool = false) { self.raised = Mutex(raised) }

    var isSet: Bool { raised.withLock { $0 } }
    func set() { raised.withLock { $0 = true } }
    func clear() { raised.withLock { $0 = false } }
}
