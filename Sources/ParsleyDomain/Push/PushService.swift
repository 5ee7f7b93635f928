import Crypto
import Logging
public import ParsleyCore

import Synchronization

/// Parse's push: `POST /push` and cloud code's `parse.push` store a `_PushStatus` row (the queue: it survives a
/// restart, and one node at a time holds each row by a lease), and `run` sends the due ones: installations matching
/// the push's query, a page at a time in objectId order (memory stays flat in their number), each message through
/// the provider that serves its `deviceType`, several at once, transient failures retried with backoff. Counts go
/// to the row as Parse Server keeps them (`numSent`, `numFailed`, `sentPerType`, `failedPerType`,
/// `sentPerUTCOffset`); tokens a provider reports dead are removed from their installation.
public final class PushService: Sendable {
    let objects: ObjectService
    let queries: QueryService
    public let providers: [any PushProvider]
    let settings: PushOptions
    let logger = Logger(label: "parsley.push")
    /// Set when this node queued a push, so the runner looks at once.
    private let wake = Atomic<Bool>(false)
    /// Messages this process sent and failed to send since the start (the dashboard's health charts).
    let sentCount = Atomic<Int>(0)
    let failedCount = Atomic<Int>(0)
    public var messagesSent: Int { sentCount.load(ordering: .relaxed) }
    public var messagesFailed: Int { failedCount.load(ordering: .relaxed) }

    init(objects: ObjectService, queries: QueryService, settings: PushOptions) {
        self.objects = objects
        self.queries = queries
        self.providers = settings.providers
        self.settings = settings
    }

    /// Whether a provider is configured (`/serverInfo`'s push features).
    public var isConfigured: Bool { !providers.isEmpty }

    /// - Throws: 115 `Missing push configuration` without a provider (checked before the push's body is read).
    public func requireConfigured() throws(ParseError) {
        guard isConfigured else { throw ParseError(.pushMisconfigured, "Missing push configuration") }
    }

    // MARK: Queueing

    /// Checks and queues a push; returns its `_PushStatus` objectId. `source` is `rest` or `cloud`.
    public func send(_ push: SendPush, source: String = "rest") async throws -> String {
        try requireConfigured()
        let request = push.push
        // A query that cannot run is refused now (102, 107, ...), not found out by the queue.
        _ = try QueryParser(now: .now).parse(.object(request.whereValue), className: "_Installation")
        var row: [String: JSONValue] = [
            "pushTime": .string(request.pushTimeText), "query": .string(JSONWriter.string(.object(request.whereValue))),
            "payload": .string(JSONWriter.string(.object(request.data))), "source": .string(source),
            "status": .string(request.scheduled ? "scheduled" : "pending"), "numSent": 0, "pushHash": .string(Self.hash(request.data["alert"])),
            "ACL": .object([:]),
        ]
        if let title = request.data["title"]?.stringValue { row["title"] = .string(title) }
        if let expiry = request.expirationTime { row["expiry"] = .int(expiry.milliseconds) }
        if let interval = request.expirationInterval { row["expiration_interval"] = .int(interval) }
        let created = try await objects.create("_PushStatus", CreateObject(row), auth: .master, rules: .init(trusted: true))
        guard let id = created["objectId"]?.stringValue else { throw ParseError(.internalServerError, "push status not created") }
        wake.store(true, ordering: .relaxed)
        return id
    }

    /// `pushHash`: the MD5 of the alert's JSON (Parse Server's), or of nothing.
    static func hash(_ alert: JSONValue?) -> String {
        let text: String
        switch alert {
        case .string(let s)?: text = s
        case let value?: text = JSONWriter.string(value)
        case nil: text = ""
        }
        return Insecure.MD5.hash(data: Array(text.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    // MARK: Sending

    /// Sends due pushes until `stop()` says so (the server's graceful shutdown: the page in hand is finished and
    /// recorded first, so a restart resumes after it) or the task is cancelled.
    public func run(stop: @escaping @Sendable () -> Bool = { false }) async {
        guard isConfigured else { return }
        var idle = 0
        while !Task.isCancelled, !stop() {
            do {
                let worked = try await sendDue(stop: stop)
                idle = worked ? 0 : idle + 1
            } catch {
                logger.warning("push queue: \(error)")
            }
            if stop() { break }
            // Look again soon after a push was queued here, otherwise every interval.
            let ticks = Int(settings.interval / .milliseconds(50))
            for _ in 0..<max(1, ticks) {
                if wake.exchange(false, ordering: .relaxed) || stop() || Task.isCancelled { break }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Sends every due part of every queued push this node can lease; true when something was sent.
    func sendDue(stop: @escaping @Sendable () -> Bool) async throws -> Bool {
        guard objects.schemas.schema("_PushStatus") != nil else { return false }
        let now = ParseDate.now.milliseconds
        let rows = try await queries.find(
            "_PushStatus",
            FindOptions(params: ["where": ["status": ["$in": ["pending", "scheduled", "running"]]], "order": "createdAt", "limit": 1000]),
            auth: .master
        ).results
        var worked = false
        // Local-time pushes need the zones by offset (read once a round: daylight saving time moves them).
        let zones =
            rows.contains { ($0["pushTime"]?.stringValue).map { PushRequest.time(.string($0))?.local == true } ?? false }
            ? PushTimeZones.byOffset : [:]
        for raw in rows {
            guard let row = PushStatusRow(row: raw), !row.leased(now: now), let due = row.nextDue(zones), due <= now else { continue }
            guard let lease = try await claim(row, now: now) else { continue }
            worked = true
            var delivery = PushDelivery(service: self, row: row, lease: lease, zones: zones, stop: stop)
            try await delivery.run()
        }
        return worked
    }

    /// Takes the row for this node (a compare-and-set of `leaseUntil`); nil when another node was first.
    func claim(_ row: PushStatusRow, now: Int64) async throws -> Int64? {
        let lease = now + Int64(settings.lease.components.seconds) * 1000
        do {
            _ = try await objects.update(
                "_PushStatus", objectId: row.objectId, ["leaseUntil": .int(lease), "status": "running"], auth: .master,
                rules: .init(condition: (field: "leaseUntil", value: row.leaseUntil), trusted: true))
            return lease
        } catch let error as ParseError where error.code == .objectNotFound {
            return nil
        }
    }

}

/// How pushes are sent: the providers (from Parse Server's `push` option), how often the queue looks for due
/// pushes, how many installations a page holds, how many messages are in flight per push, how long a node holds a
/// push it sends before another may take it over.
public struct PushOptions: Sendable {
    public var providers: [any PushProvider] = []
    public var interval: Duration = .seconds(1)
    public var pageSize = 500
    public var concurrency = 128
    public var lease: Duration = .seconds(60)
    /// Tries per message for transient failures.
    public var attempts = 3
    public init() {}
}
