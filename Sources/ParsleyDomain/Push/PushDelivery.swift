import Logging
import ParsleyCore
import Synchronization

/// One node sending one leased push: each due part (the whole push, or for a local-time push each UTC offset whose
/// time came), a page of installations at a time; after every page the counts, the cursor and a renewed lease are
/// written in one conditional update, so a node that lost the lease stops and a restart resumes after the last page.
struct PushDelivery {
    let service: PushService
    var row: PushStatusRow
    var lease: Int64
    /// Time zone names by UTC offset (seconds), for local-time pushes.
    let zones: [Int: [String]]
    let stop: @Sendable () -> Bool

    /// The installation fields a message needs.
    static let keys = "deviceToken,deviceType,appIdentifier,pushType,badge,localeIdentifier,timeZone"

    struct LeaseLost: Error {}

    /// What one page did.
    struct Tally {
        var sent: [String: Int64] = [:]
        var failed: [String: Int64] = [:]
        var dead: [String] = []
        var targeted: Int64 = 0
    }

    init(service: PushService, row: PushStatusRow, lease: Int64, zones: [Int: [String]], stop: @escaping @Sendable () -> Bool) {
        self.service = service
        self.row = row
        self.lease = lease
        self.zones = zones
        self.stop = stop
    }

    mutating func run() async throws {
        let now = ParseDate.now
        if let expiry = row.request.expiration(sendingAt: now), expiry < now, row.request.localTime == nil {
            try await finish(status: "failed", error: "The push expired before it was sent.")
            return
        }
        do {
            for offset in row.pendingOffsets(zones) {
                if let local = row.request.localTime, let offset, local - Int64(offset) * 1000 > ParseDate.now.milliseconds { break }
                guard try await sendPart(offset: offset) else {
                    try await release()
                    return
                }
                if let offset {
                    row.offsetsDone.insert(offset)
                    row.sentUpTo = nil
                    try await save(["offsetsDone": .array(row.offsetsDone.sorted().map { .int(Int64($0)) }), "sentUpTo": .null])
                }
            }
        } catch is LeaseLost {
            service.logger.warning("push \(row.objectId): another node took it over")
            return
        } catch let error as ParseError {
            // The push itself is wrong (a query that no longer runs, say): it fails instead of being retried forever.
            try await finish(status: "failed", error: error.message)
            return
        }
        if row.pendingOffsets(zones).isEmpty || row.request.localTime == nil {
            try await finish(status: "succeeded", error: nil)
        } else {
            try await release()
        }
    }

    /// Sends one part; false when the server is stopping (the part is left for later).
    mutating func sendPart(offset: Int?) async throws -> Bool {
        while true {
            if stop() || Task.isCancelled { return false }
            let page = try await installations(offset: offset, after: row.sentUpTo)
            guard let last = page.last?["objectId"]?.stringValue else { return true }
            let tally = await send(page, offset: offset)
            row.sentUpTo = last
            try await record(tally, offset: offset)
            if page.count < service.settings.pageSize { return true }
        }
    }

    /// The next page of installations with a device token matching the push's query (and, for a local-time push,
    /// in a time zone at this offset; installations without one count as UTC).
    func installations(offset: Int?, after cursor: String?) async throws -> [[String: JSONValue]] {
        var conditions: [JSONValue] = [.object(row.request.whereValue), ["deviceToken": ["$exists": true]]]
        if let cursor { conditions.append(["objectId": ["$gt": .string(cursor)]]) }
        if let offset {
            let names = (zones[offset] ?? []).map(JSONValue.string)
            if offset == 0 {
                conditions.append(["$or": [["timeZone": ["$in": .array(names)]], ["timeZone": ["$exists": false]]]])
            } else {
                conditions.append(["timeZone": ["$in": .array(names)]])
            }
        }
        let params: [String: JSONValue] = [
            "where": ["$and": .array(conditions)], "order": "objectId", "limit": .int(Int64(service.settings.pageSize)), "keys": .string(Self.keys),
        ]
        return try await service.queries.find("_Installation", FindOptions(params: params), auth: .master).results
    }

    /// Sends a page, `concurrency` messages at a time.
    func send(_ page: [[String: JSONValue]], offset: Int?) async -> Tally {
        let data = row.request.data
        let badge = PushPayload.badge(data)
        let locales = PushPayload.locales(data)
        let service = self.service
        let pushId = row.objectId
        let pushTime = ParseDate.now
        let expiration = row.request.expiration(sendingAt: pushTime)
        var tally = Tally()
        await withTaskGroup(of: (String, String, PushOutcome).self) { group in
            var inFlight = 0
            for installation in page {
                guard let id = installation["objectId"]?.stringValue, let token = installation["deviceToken"]?.stringValue,
                    let deviceType = installation["deviceType"]?.stringValue
                else { continue }
                // The data comes once the badge is known (in the task); the provider is chosen by the device.
                let message = PushMessage(
                    deviceToken: token, deviceType: deviceType, appIdentifier: installation["appIdentifier"]?.stringValue,
                    pushType: installation["pushType"]?.stringValue, data: [:], pushId: pushId, pushTime: pushTime, expiration: expiration)
                guard let provider = service.providers.first(where: { $0.serves(message) }) else { continue }
                tally.targeted += 1
                if inFlight >= service.settings.concurrency, let done = await group.next() {
                    inFlight -= 1
                    tally.add(done)
                }
                inFlight += 1
                group.addTask {
                    let deviceBadge: Int64?
                    do {
                        deviceBadge = try await Self.badge(badge, installation: installation, id: id, service: service)
                    } catch {
                        return (id, deviceType, .failed(reason: "badge: \(error)", transient: false))
                    }
                    var delivered = message
                    delivered.data = PushPayload.data(
                        data, locales: locales, localeIdentifier: installation["localeIdentifier"]?.stringValue, badge: deviceBadge)
                    return (id, deviceType, await Self.deliver(delivered, via: provider, attempts: service.settings.attempts))
                }
            }
            for await done in group { tally.add(done) }
        }
        return tally
    }

    /// The installation's new badge: set, or incremented in its row (through the write pipeline).
    static func badge(_ badge: PushPayload.Badge?, installation: [String: JSONValue], id: String, service: PushService) async throws -> Int64? {
        switch badge {
        case nil: return nil
        case .set(let n):
            if installation["badge"]?.numberValue != Double(n) {
                _ = try await service.objects.update("_Installation", objectId: id, ["badge": .int(n)], auth: .master)
            }
            return n
        case .increment(let amount):
            let echoed = try await service.objects.update(
                "_Installation", objectId: id, ["badge": ["__op": "Increment", "amount": .int(amount)]], auth: .master)
            return echoed["badge"]?.numberValue.map { Int64($0) } ?? amount
        }
    }

    /// Sends with retries of transient failures (after the provider's `retryAfter`, else a growing pause).
    static func deliver(_ message: PushMessage, via provider: any PushProvider, attempts: Int) async -> PushOutcome {
        var outcome = await provider.send(message)
        var attempt = 1
        while case .failed(_, true, let retryAfter) = outcome, attempt < attempts, !Task.isCancelled {
            try? await Task.sleep(for: retryAfter.map { min($0, .seconds(10)) } ?? .milliseconds(100 << attempt))
            outcome = await provider.send(message)
            attempt += 1
        }
        return outcome
    }

    /// Writes a page's counts with the cursor and a renewed lease, and removes dead tokens.
    mutating func record(_ tally: Tally, offset: Int?) async throws {
        for id in tally.dead {
            _ = try? await service.objects.update("_Installation", objectId: id, ["deviceToken": ["__op": "Delete"]], auth: .master)
        }
        func increment(_ n: Int64) -> JSONValue { ["__op": "Increment", "amount": .int(n)] }
        let sent = tally.sent.values.reduce(0, +)
        let failed = tally.failed.values.reduce(0, +)
        service.sentCount.add(Int(sent), ordering: .relaxed)
        service.failedCount.add(Int(failed), ordering: .relaxed)
        var body: [String: JSONValue] = ["numSent": increment(sent), "numFailed": increment(failed), "count": increment(tally.targeted)]
        for (type, n) in tally.sent { body["sentPerType.\(type)"] = increment(n) }
        for (type, n) in tally.failed { body["failedPerType.\(type)"] = increment(n) }
        if let offset, sent > 0 { body["sentPerUTCOffset.\(Self.hours(offset))"] = increment(sent) }
        body["sentUpTo"] = row.sentUpTo.map(JSONValue.string) ?? .null
        try await save(body)
    }

    /// A UTC offset as Parse Server names it in `sentPerUTCOffset` (hours: `-5`, `5.5`).
    static func hours(_ seconds: Int) -> String {
        seconds % 3600 == 0 ? String(seconds / 3600) : String(Double(seconds) / 3600)
    }

    /// Updates the row while this node still holds it, renewing the lease.
    mutating func save(_ body: [String: JSONValue]) async throws {
        var body = body
        let renewed = ParseDate.now.milliseconds + Int64(service.settings.lease.components.seconds) * 1000
        if body["leaseUntil"] == nil { body["leaseUntil"] = .int(renewed) }
        do {
            _ = try await service.objects.update(
                "_PushStatus", objectId: row.objectId, UpdateObject(body), auth: .master,
                rules: .init(condition: (field: "leaseUntil", value: .int(lease)), trusted: true))
            lease = body["leaseUntil"]?.numberValue.map { Int64($0) } ?? renewed
        } catch let error as ParseError where error.code == .objectNotFound {
            throw LeaseLost()
        }
    }

    /// Lets the row go (another node, or this one later, picks it up).
    mutating func release() async throws {
        try await save(["leaseUntil": 0])
    }

    mutating func finish(status: String, error: String?) async throws {
        var body: [String: JSONValue] = ["status": .string(status), "leaseUntil": 0]
        if let error { body["errorMessage"] = .string(error) }
        try await save(body)
    }
}

extension PushDelivery.Tally {
    mutating func add(_ done: (String, String, PushOutcome)) {
        let (id, deviceType, outcome) = done
        switch outcome {
        case .sent: sent[deviceType, default: 0] += 1
        case .invalidToken:
            failed[deviceType, default: 0] += 1
            dead.append(id)
        case .failed: failed[deviceType, default: 0] += 1
        }
    }
}
