import Synchronization

/// Coalesces reads of the same key (a class's schema, the list of schema versions) without ever answering a
/// caller with a read that is too old for it: a caller joins the read that is running only if it started no
/// earlier than the caller allows (`notBefore`); otherwise it waits for the next read, which all callers that
/// arrive meanwhile share. So however many requests miss at once, each key has at most one read running and one
/// waiting, and every caller gets what the database held at a moment it accepts. The reads run in the callers' own
/// tasks: the first caller reads, and hands the next read to the first of those waiting for one.
final class FreshReads<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private enum Turn: Sendable {
        case done(Result<Value, any Error>)
        case lead
    }
    private typealias Waiter = CheckedContinuation<Turn, Never>
    private struct Slot {
        /// The read that runs: when it started, and who waits for its value.
        var running: (started: ContinuousClock.Instant, waiters: [Waiter])
        /// Who waits for the next read.
        var queued: [Waiter] = []
    }
    private let slots = Mutex<[Key: Slot]>([:])

    /// The value of a read of `key` that started at or after `notBefore` (default: now, i.e. after this call).
    func read(
        _ key: Key, notBefore: ContinuousClock.Instant = .now, _ body: @Sendable () async throws -> Value
    ) async throws -> Value {
        let turn = await withCheckedContinuation { (c: Waiter) in
            let leads = slots.withLock { s -> Bool in
                guard var slot = s[key] else {
                    s[key] = Slot(running: (.now, []))
                    return true
                }
                if slot.running.started >= notBefore {
                    slot.running.waiters.append(c)
                } else {
                    slot.queued.append(c)
                }
                s[key] = slot
                return false
            }
            if leads { c.resume(returning: .lead) }
        }
        if case .done(let result) = turn { return try result.get() }
        // This caller reads for everyone who joined, then hands the next read to the first who waits for one.
        let result: Result<Value, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        let (waiters, next) = slots.withLock { s -> ([Waiter], Waiter?) in
            guard var slot = s[key] else { return ([], nil) }
            let waiters = slot.running.waiters
            guard !slot.queued.isEmpty else {
                s[key] = nil
                return (waiters, nil)
            }
            let next = slot.queued.removeFirst()
            slot.running = (.now, slot.queued)
            slot.queued = []
            s[key] = slot
            return (waiters, next)
        }
        for w in waiters { w.resume(returning: .done(result)) }
        next?.resume(returning: .lead)
        return try result.get()
    }

    /// How many callers wait for a read of `key` (tests).
    func waiting(_ key: Key) -> Int {
        slots.withLock { s in s[key].map { $0.running.waiters.count + $0.queued.count } ?? 0 }
    }
}
