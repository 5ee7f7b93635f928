import Synchronization

/// A message as its sender made it: the value itself (kept for subscribers in the same process, which need no
/// decoding) and its text (what travels to other processes, made only when something sends it there).
public protocol ChangePayload: Sendable {
    var text: String { get }
}

/// What a change channel delivers: a message committed by some server process on this database (as text, or as the
/// sender's own value in the process that wrote it), or word that messages may have been missed (the channel lost
/// its connection and is back).
public enum ChangeMessage: Sendable {
    case message(String)
    case payload(any ChangePayload)
    case gap
}

/// Carries messages (change events) from write transactions to every server process on the database, this one
/// included, once and only if their transaction commits, in commit order.
public protocol ChangeChannel: Sendable {
    /// Queues `message` inside `transaction`: it is delivered when the transaction commits, never if it rolls back.
    func send(_ message: any ChangePayload, in transaction: Transaction) async throws
    /// A new subscription: messages committed from now on, in commit order. The buffer is bounded (`limit`);
    /// `dropped` is called for each message a slow subscriber lost.
    func subscribe(limit: Int, dropped: @escaping @Sendable () -> Void) -> AsyncStream<ChangeMessage>
}

/// Subscribers of a channel, each with a bounded buffer.
public final class ChangeSubscribers: Sendable {
    private struct Subscriber {
        let continuation: AsyncStream<ChangeMessage>.Continuation
        let dropped: @Sendable () -> Void
    }
    private let subscribers = Mutex<[Int: Subscriber]>([:])
    private let nextId = Atomic<Int>(0)

    public init() {}

    public func subscribe(limit: Int, dropped: @escaping @Sendable () -> Void) -> AsyncStream<ChangeMessage> {
        let (stream, continuation) = AsyncStream<ChangeMessage>.makeStream(bufferingPolicy: .bufferingOldest(max(1, limit)))
        let id = nextId.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[id] = Subscriber(continuation: continuation, dropped: dropped) }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    public func deliver(_ message: ChangeMessage) {
        let current = subscribers.withLock { Array($0.values) }
        for s in current {
            if case .dropped = s.continuation.yield(message) { s.dropped() }
        }
    }

    public func finish() {
        let current = subscribers.withLock { s in
            defer { s = [:] }
            return Array(s.values)
        }
        for s in current { s.continuation.finish() }
    }
}

/// The channel of a database only this process writes (SQLite): messages go to this process's subscribers
/// from the commit hook, so in commit order.
public final class LocalChangeChannel: ChangeChannel {
    let subscribers = ChangeSubscribers()

    public init() {}

    public func send(_ message: any ChangePayload, in transaction: Transaction) async throws {
        transaction.onCommit { [subscribers] in subscribers.deliver(.payload(message)) }
    }

    public func subscribe(limit: Int, dropped: @escaping @Sendable () -> Void) -> AsyncStream<ChangeMessage> {
        subscribers.subscribe(limit: limit, dropped: dropped)
    }
}
