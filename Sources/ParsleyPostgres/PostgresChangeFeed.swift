import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ParsleyCore
import ParsleyStorage
import PostgresNIO

/// Cache invalidation between server processes through PostgreSQL `LISTEN`/`NOTIFY` on one channel. Messages
/// are `<process id>|<sequence>|<topic>`: a process ignores its own topics but uses their echo to know the
/// database has delivered them. A dedicated connection listens; when it is lost, subscribers are told `"*"`
/// (everything may be stale) and it reconnects.
final class PostgresChangeFeed: Sendable {
    /// `parsley_cache`, or `parsley_cache_<prefix>` for an app with a `collectionPrefix`: apps sharing a database
    /// through prefixes hear neither each other's cache messages nor each other's change events.
    static func channel(tablePrefix: String) -> String { tablePrefix.isEmpty ? "parsley_cache" : "parsley_cache_" + tablePrefix }
    let channel: String
    let processId = ObjectID.make(length: 12)
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private struct State {
        var subscribers: [AsyncStream<String>.Continuation] = []
        var sequence: Int = 0
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        var listening = false
        var stopped = false
        /// Own messages heard before their sender started waiting (kept small).
        var echoed: Set<Int> = []
    }
    private let state = NIOLockedValueBox(State())
    let publish: @Sendable (String) async throws -> Void
    /// Change events arrive on the same connection, marked `E|`.
    let events: PostgresChangeChannel
    /// Sees each topic another process announced (and `"*"`) before the subscribers do, on the listening task.
    let heard: @Sendable (String) -> Void

    init(
        configuration: PostgresConnection.Configuration, logger: Logger, channel: String = PostgresChangeFeed.channel(tablePrefix: ""),
        events: PostgresChangeChannel,
        heard: @escaping @Sendable (String) -> Void = { _ in }, publish: @escaping @Sendable (String) async throws -> Void
    ) {
        self.configuration = configuration
        self.logger = logger
        self.channel = channel
        self.events = events
        self.heard = heard
        self.publish = publish
    }

    /// Ends the streams and the waits (after `listen()` has returned, or if it never ran).
    func stop() async {
        state.withLockedValue { $0.stopped = true }
        let subscribers = state.withLockedValue { s in
            let subs = s.subscribers
            s.subscribers = []
            for (_, c) in s.waiting { c.resume() }
            s.waiting = [:]
            return subs
        }
        for s in subscribers { s.finish() }
        events.finish()
    }

    func changes() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        state.withLockedValue { $0.subscribers.append(continuation) }
        return stream
    }

    func broadcast(_ topic: String) async {
        let seq = state.withLockedValue { s -> Int in
            s.sequence += 1
            return s.sequence
        }
        do {
            try await publish("\(processId)|\(seq)|\(topic)")
        } catch {
            logger.warning("cache change not broadcast", metadata: ["topic": "\(topic)", "error": "\(error)"])
            return
        }
        // Wait for the echo (bounded), so the answer to this request leaves after the other processes were told.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.echo(of: seq) }
            group.addTask { try? await Task.sleep(for: .milliseconds(500)) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns when this process has heard its message `seq` back, the listener is down, or the task is cancelled.
    /// Exactly one of the echo, a lost connection or the cancellation resumes the wait: each takes the waiter out
    /// of the table under the lock; an echo that arrives before the wait starts is remembered in `echoed`.
    private func echo(of seq: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLockedValue { s -> Bool in
                    if s.echoed.remove(seq) != nil { return true }
                    guard s.listening, !s.stopped, !Task.isCancelled else { return true }
                    s.waiting[seq] = c
                    return false
                }
                if resumeNow { c.resume() }
            }
        } onCancel: {
            state.withLockedValue { $0.waiting.removeValue(forKey: seq) }?.resume()
        }
    }

    private func deliver(_ payload: String) {
        let parts = payload.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return }
        if parts[0] == processId {
            let seq = Int(parts[1]) ?? -1
            let waiter = state.withLockedValue { s -> CheckedContinuation<Void, Never>? in
                if let w = s.waiting.removeValue(forKey: seq) { return w }
                if s.echoed.count > 1000 { s.echoed.removeAll() }
                s.echoed.insert(seq)
                return nil
            }
            waiter?.resume()
            return
        }
        let topic = String(parts[2])
        heard(topic)
        let subscribers = state.withLockedValue { $0.stopped ? [] : $0.subscribers }
        for s in subscribers { s.yield(topic) }
    }

    private func everythingStale() {
        let (subscribers, stopped) = state.withLockedValue { ($0.stopped ? [] : $0.subscribers, $0.stopped) }
        if !stopped { heard("*") }
        for s in subscribers { s.yield("*") }
        if !stopped { events.gap() }
    }

    /// Listens (reconnecting when the connection is lost) until the task is cancelled.
    func listen() async {
        var attempt = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: Int.random(in: 1...Int.max), logger: logger
                ).get()
                do {
                    try await connection.listen(on: channel) { notifications in
                        state.withLockedValue { $0.listening = true }
                        if attempt > 0 { everythingStale() }
                        attempt = 0
                        for try await n in notifications {
                            if n.payload.hasPrefix("E|") {
                                await events.received(n.payload.dropFirst(2))
                            } else {
                                deliver(n.payload)
                            }
                        }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled { break }
                logger.warning("cache change listener lost its connection; retrying", metadata: ["error": "\(String(reflecting: error))"])
            }
            let waiters = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
                s.listening = false
                let w = Array(s.waiting.values)
                s.waiting = [:]
                return w
            }
            for w in waiters { w.resume() }
            attempt += 1
            everythingStale()
            try? await Task.sleep(for: .milliseconds(min(5000, 100 * attempt)))
        }
        state.withLockedValue { $0.listening = false }
    }
}
