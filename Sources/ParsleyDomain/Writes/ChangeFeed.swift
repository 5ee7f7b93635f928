public import ParsleyCore
public import ParsleyStorage
import Synchronization

/// Committed writes as `ChangeEvent`s, from every server process on the database. Writes put their event into
/// the transaction (`publish`); the storage's change channel delivers it once committed, in commit order (so in
/// order per object), and never for a rolled-back write. Each subscriber has a bounded buffer: a slow one loses
/// events (counted in `dropped`), it never slows a write.
///
/// Off unless something consumes events, and then only for the classes it consumes: LiveQuery's live classes, the
/// classes with a Swift after-trigger, or every class (`ParseServerOptions.changeEvents`, an after-trigger webhook
/// registered at run time). A write that publishes also loads the original and the saved object, a read each; a
/// write to any other class pays nothing.
public final class ChangeFeed: Sendable {
    public enum Item: Sendable, Equatable {
        case event(ChangeEvent)
        /// Events may have been missed (the connection to the other processes was lost and is back).
        case gap
    }

    /// Whether writes to every class publish events; turned on (never off) when a consumer of every class appears at
    /// run time (a webhook after-trigger).
    public var enabled: Bool { on.load(ordering: .relaxed) }
    private let on: Atomic<Bool>
    /// The classes whose writes publish while `enabled` is off (fixed at start), and the answers so far.
    private let consumed: @Sendable (String) -> Bool
    private let decided = Mutex<[String: Bool]>([:])
    /// This server process, as events it writes name it (`ChangeEvent.origin`).
    public let origin = ObjectID.make(length: 12)
    let channel: any ChangeChannel
    private let droppedCount = Atomic<Int>(0)

    /// `classes` says which classes have a consumer from the start (asked once per class).
    public init(channel: any ChangeChannel, enabled: Bool, classes: @escaping @Sendable (String) -> Bool = { _ in false }) {
        self.channel = channel
        self.on = Atomic(enabled)
        self.consumed = classes
    }

    /// Publishes events of every class from now on.
    public func enable() { on.store(true, ordering: .relaxed) }

    /// Whether writes to `className` publish events (and so load their original and saved object).
    public func publishes(_ className: String) -> Bool {
        if enabled { return true }
        if let known = decided.withLock({ $0[className] }) { return known }
        let answer = consumed(className)
        decided.withLock { $0[className] = answer }
        return answer
    }

    /// Events dropped because a subscriber's buffer was full (for metrics).
    public var dropped: Int { droppedCount.load(ordering: .relaxed) }

    /// Events committed from now on, in commit order; `limit` bounds this subscriber's buffer.
    public func subscribe(limit: Int = 10_000) -> AsyncMapSequence<AsyncStream<ChangeMessage>, Item> {
        channel.subscribe(limit: limit) { [self] in droppedCount.add(1, ordering: .relaxed) }.map { message in
            switch message {
            case .payload(let event as ChangeEvent): return .event(event)
            case .message(let text):
                guard let json = try? JSONParser.parse(text), let event = ChangeEvent(json: json) else { return .gap }
                return .event(event)
            default: return .gap
            }
        }
    }

    /// Queues `event` in `transaction`: delivered once it commits.
    func publish(_ event: ChangeEvent, in transaction: Transaction) async throws {
        guard publishes(event.className) else { return }
        try await channel.send(event, in: transaction)
    }
}

/// Code that runs before a write is stored: may change the object or refuse the write with a Parse error. Filled by
/// cloud code (Swift `beforeSave`/`beforeDelete`, or webhooks registered at run time: `CloudRuntime.writeHooks`).
public struct WriteHooks: Sendable {
    /// Gets the write's body (operations as sent) and the stored object for an update; returns the body to store.
    public typealias BeforeSave =
        @Sendable (
            _ className: String, _ objectId: String?, _ body: JSONValue, _ original: [String: JSONValue]?, _ auth: Auth
        ) async throws -> JSONValue
    public typealias BeforeDelete =
        @Sendable (_ className: String, _ objectId: String, _ original: [String: JSONValue], _ auth: Auth) async throws -> Void

    /// The class's `beforeSave`, if it has one now.
    public var beforeSave: @Sendable (_ className: String) -> BeforeSave? = { _ in nil }
    /// The class's `beforeDelete`, if it has one now.
    public var beforeDelete: @Sendable (_ className: String) -> BeforeDelete? = { _ in nil }
    /// Whether change events carry the request's context, address and headers (for after-triggers).
    public var carriesRequest: @Sendable () -> Bool = { false }

    public init() {}
}
