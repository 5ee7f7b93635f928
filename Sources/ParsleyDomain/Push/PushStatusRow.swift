import ParsleyCore

/// A `_PushStatus` row as the push queue reads it: the push to send (Parse Server's fields `pushTime`, `query`,
/// `payload`, `expiry`, `expiration_interval`, `status`) and Parsley's progress fields: `leaseUntil` (milliseconds;
/// the node sending holds the row until then and renews it after every page), `sentUpTo` (the last installation
/// done, in objectId order) and, for a local-time push, `offsetsDone` (the UTC offsets, in seconds, already sent).
struct PushStatusRow: Sendable {
    var objectId: String
    var status: String
    var request: PushRequest
    var leaseUntil: JSONValue?
    var sentUpTo: String?
    var offsetsDone: Set<Int>

    init?(row: [String: JSONValue]) {
        guard let id = row["objectId"]?.stringValue, let status = row["status"]?.stringValue else { return nil }
        objectId = id
        self.status = status
        var body: [String: JSONValue] = [:]
        body["where"] = row["query"]?.stringValue.flatMap { try? JSONParser.parse($0) } ?? .object([:])
        body["data"] = row["payload"]?.stringValue.flatMap { try? JSONParser.parse($0) } ?? .object([:])
        // `pushTime` is the `push_time` given, or the time of the request: read back the same way either way.
        if let time = row["pushTime"] { body["push_time"] = time }
        if let expiry = row["expiry"]?.numberValue { body["expiration_time"] = .double(expiry / 1000) }
        if let interval = row["expiration_interval"] { body["expiration_interval"] = interval }
        let created = row["createdAt"]?.stringValue.flatMap { ParseDate(iso: $0) } ?? .now
        guard let request = try? PushRequest(body: body, now: created) else { return nil }
        self.request = request
        leaseUntil = row["leaseUntil"]
        sentUpTo = row["sentUpTo"]?.stringValue
        offsetsDone = Set((row["offsetsDone"]?.arrayValue ?? []).compactMap { $0.numberValue.map { Int($0) } })
    }

    /// Whether another node holds the row now.
    func leased(now: Int64) -> Bool { (leaseUntil?.numberValue).map { Int64($0) > now } ?? false }

    /// The UTC offsets (seconds) a local-time push still has to reach, the earliest first, of `zones` (names by
    /// offset, `PushTimeZones.byOffset`); `[nil]` for a push at one instant not yet finished.
    func pendingOffsets(_ zones: [Int: [String]]) -> [Int?] {
        guard request.localTime != nil else { return [nil] }
        return zones.keys.sorted(by: >).filter { !offsetsDone.contains($0) }.map { $0 }
    }

    /// When the next part of this push is due (milliseconds), nil when nothing is left.
    func nextDue(_ zones: [Int: [String]]) -> Int64? {
        guard let first = pendingOffsets(zones).first else { return nil }
        guard let local = request.localTime, let offset = first else { return request.pushTime.milliseconds }
        return local - Int64(offset) * 1000
    }
}

/// The time zones installations name (`timeZone`, IANA names), grouped by their offset from UTC now.
enum PushTimeZones {
    /// Offsets (seconds) and their zone names; computed when asked, as daylight saving time moves zones between offsets.
    static var byOffset: [Int: [String]] {
        var groups: [Int: [String]] = [:]
        for name in TimeZoneNames.all {
            guard let offset = TimeZoneNames.offset(name) else { continue }
            groups[offset, default: []].append(name)
        }
        groups[0, default: []].append("UTC")
        return groups
    }
}
