import Synchronization

/// Coalesces reads of the same key (a class's schema, the list of schema versions) without ever answering a
/// caller with a read that is too old for it: a caller joins the read that is running only if it started no
/// earlier than the caller allows (`notBefore`); otherwise it waits for the next read, which all callers that
/// arrive meanwhile share. So however many requests miss at once, each key has at most one read running and one
/// waiting, and every caller gets what the database held at a moment it accepts.
final class FreshReads<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    typealias Waiter = CheckedContinuation<Result<Value, any Error>, Never>
    private struct Slot {
        var running: (started: ContinuousClock.Instant, waiters: [Waiter])?
        var queued: [Waiter] = []
        /// A task runs reads of the key until nobody waits.
        var draining = false
    }
    private let slots = Mutex<[Key: Slot]>([:])

    /// The value of a read of `key` that started at or after `notBefore` (default: now, i.e. after this call).
    func read(
        _ key: Key, notBefore: ContinuousClock.Instant = .now, _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let result = await withCheckedContinuation { (c: Waiter) in
            let start = slots.withLock { s -> Bool in
                var slot = s[key] ?? Slot()
                defer { s[key] = slot }
                if let running = slot.running, running.started >= notBefore {
                    slot.running?.waiters.append(c)
                    return false
                }
                slot.queued.append(c)
                if slot.draining { return false }
                slot.draining = true
                return true
            }
            // (Task-local values, a transaction among them, stay with their caller.)
            if start { Task.detached { await self.drain(key, body) } }
        }
        return try result.get()
    }

    /// Runs reads of `key` while callers wait for one.
    private func drain(_ key: Key, _ body: @escaping @Sendable () async throws -> Value) async {
        while true {
            let started = ContinuousClock.now
            let go = slots.withLock { s -> Bool in
                guard var slot = s[key], !slot.queued.isEmpty else {
                    s[key] = nil
                    return false
                }
                slot.running = (started, slot.queued)
                slot.queued = []
                s[key] = slot
                return true
            }
            guard go else { return }
            let result: Result<Value, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            let waiters = slots.withLock { s -> [Waiter] in
                let w = s[key]?.running?.waiters ?? []
                s[key]?.running = nil
                return w
            }
            for w in waiters { w.resume(returning: result) }
        }
    }
}
