import ParsleyStorage
import Synchronization

/// Change events between server processes sharing one PostgreSQL database. A message is sent with `pg_notify`
/// inside the writing transaction, so PostgreSQL delivers it only on commit and in commit order, to every
/// listening process (this one too: local subscribers hear events the same way). A message too long for a
/// notification (8,000 bytes) goes into the `_ChangeOutbox` table in the same transaction and the notification
/// carries its id. Notifications share the cache channel's listening connection (`PostgresChangeFeed`), marked
/// `E|`; when that connection is lost and back, subscribers are told `.gap`.
final class PostgresChangeChannel: ChangeChannel {
    static let outbox = "_ChangeOutbox"
    /// Room for the `E|m:` mark within PostgreSQL's 8,000-byte payload limit.
    static let inlineLimit = 7_900
    static let createOutbox =
        "CREATE TABLE IF NOT EXISTS \"\(outbox)\" (id BIGSERIAL PRIMARY KEY, payload TEXT NOT NULL, created TIMESTAMPTZ NOT NULL DEFAULT now())"

    let subscribers = ChangeSubscribers()
    private let outboxWrites = Atomic<Int>(0)
    /// Reads one outbox message by id (on a pool connection).
    let fetch: @Sendable (Int64) async throws -> String?

    /// The `NOTIFY` channel (`PostgresChangeFeed.channel(tablePrefix:)`).
    let channel: String

    init(channel: String = PostgresChangeFeed.channel(tablePrefix: ""), fetch: @escaping @Sendable (Int64) async throws -> String?) {
        self.channel = channel
        self.fetch = fetch
    }

    func send(_ payload: any ChangePayload, in transaction: Transaction) async throws {
        let message = payload.text
        if message.utf8.count <= Self.inlineLimit {
            try await transaction.query(
                SQLFragment(unsafeSQL: "SELECT pg_notify(?, ?)", [.text(channel), .text("E|m:" + message)]))
            return
        }
        let rows = try await transaction.query(
            SQLFragment(unsafeSQL: "INSERT INTO \"\(Self.outbox)\" (payload) VALUES (?) RETURNING id", [.text(message)]))
        guard case .integer(let id)? = rows.first?.first else { throw StoreError.database("outbox insert returned no id") }
        try await transaction.query(SQLFragment(unsafeSQL: "SELECT pg_notify(?, ?)", [.text(channel), .text("E|r:\(id)")]))
        // Every process has read a message within seconds; old ones are removed now and then.
        if outboxWrites.add(1, ordering: .relaxed).newValue % 128 == 0 {
            try await transaction.query(SQLFragment(unsafeSQL: "DELETE FROM \"\(Self.outbox)\" WHERE created < now() - interval '10 minutes'"))
        }
    }

    func subscribe(limit: Int, dropped: @escaping @Sendable () -> Void) -> AsyncStream<ChangeMessage> {
        subscribers.subscribe(limit: limit, dropped: dropped)
    }

    /// A notification marked `E|` (without the mark), handled one at a time in arrival order.
    func received(_ payload: Substring) async {
        if payload.hasPrefix("m:") {
            subscribers.deliver(.message(String(payload.dropFirst(2))))
        } else if payload.hasPrefix("r:"), let id = Int64(payload.dropFirst(2)) {
            do {
                if let message = try await fetch(id) { subscribers.deliver(.message(message)) } else { subscribers.deliver(.gap) }
            } catch {
                subscribers.deliver(.gap)
            }
        }
    }

    func gap() {
        subscribers.deliver(.gap)
    }

    func finish() {
        subscribers.finish()
    }
}
