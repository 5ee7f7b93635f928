import ParsleyCore
import ParsleyDomain

/// The APNs request for one message: the `apns-*` headers and the JSON body, laid out the way Parse Server's push
/// adapter lays them out. The Parse keys APNs knows go into `aps` (`alert`, `badge`, `sound`, `content-available`,
/// `mutable-content`, `category`, `threadId`, plus `title` folded into the alert); keys that become headers are
/// dropped; every other key is copied to the top level for the app to read.
struct APNsNotification: Sendable, Equatable {
    /// `apns-topic`, `apns-push-type`, `apns-priority`, `apns-expiration`, and `apns-collapse-id`/`apns-id` when given.
    var headers: [String: String]
    var body: JSONValue

    /// Parse data keys that never reach the top level of the payload: they are `aps` members or headers.
    static let consumedKeys: Set<String> = [
        "aps", "alert", "badge", "sound", "content-available", "mutable-content", "category", "title", "threadId", "thread-id",
        "targetContentIdentifier", "interruptionLevel", "priority", "pushType", "collapseId", "collapse_id", "expiration_time",
        "expirationTime", "expiration_interval",
    ]

    /// The topic suffix Apple requires for the push types that do not go to the app's own bundle id.
    static let topicSuffixes: [String: String] = [
        "voip": ".voip", "complication": ".complication", "fileprovider": ".pushkit.fileprovider", "location": ".location-query",
        "liveactivity": ".push-type.liveactivity",
    ]

    init(message: PushMessage, topic: String) {
        let data = message.data
        let pushType = Self.pushType(data)
        var headers: [String: String] = [
            "apns-push-type": pushType,
            "apns-priority": String(Self.priority(data, pushType: pushType)),
            "apns-expiration": String(message.expiration.map { max(0, ($0.milliseconds + 500) / 1000) } ?? 0),
        ]
        let suffix = Self.topicSuffixes[pushType] ?? ""
        headers["apns-topic"] = topic.hasSuffix(suffix) ? topic : topic + suffix
        if let collapseId = (data["collapseId"] ?? data["collapse_id"])?.stringValue, !collapseId.isEmpty {
            headers["apns-collapse-id"] = collapseId
        }
        var top: [String: JSONValue] = [:]
        for (key, value) in data where !Self.consumedKeys.contains(key) { top[key] = value }
        // An `id` that is a UUID is the notification's `apns-id` (APNs refuses any other form there).
        if let id = data["id"]?.stringValue, Self.isUUID(id) {
            headers["apns-id"] = id
            top["id"] = nil
        }
        top["aps"] = .object(Self.aps(data))
        self.headers = headers
        self.body = .object(top)
    }

    /// The `aps` dictionary: what the app's `aps` key already holds, with the Parse keys set over it.
    static func aps(_ data: [String: JSONValue]) -> [String: JSONValue] {
        var aps = data["aps"]?.objectValue ?? [:]
        if let alert = alert(data) { aps["alert"] = alert }
        if let badge = data["badge"], badge.isNumber { aps["badge"] = badge }
        if let sound = data["sound"], sound.stringValue != nil || sound.objectValue != nil { aps["sound"] = sound }
        if isOne(data["content-available"]) { aps["content-available"] = 1 }
        if isOne(data["mutable-content"]) { aps["mutable-content"] = 1 }
        if let category = data["category"]?.stringValue { aps["category"] = .string(category) }
        if let thread = (data["threadId"] ?? data["thread-id"])?.stringValue { aps["thread-id"] = .string(thread) }
        if let target = data["targetContentIdentifier"]?.stringValue { aps["target-content-id"] = .string(target) }
        if let level = data["interruptionLevel"]?.stringValue { aps["interruption-level"] = .string(level) }
        return aps
    }

    /// `alert` as given (a string or a dictionary), with `title` folded in: a string alert becomes
    /// `{"title": title, "body": alert}`, a dictionary gets the title unless it has one.
    static func alert(_ data: [String: JSONValue]) -> JSONValue? {
        let title = data["title"]?.stringValue
        switch data["alert"] {
        case .string(let text)?:
            guard let title else { return .string(text) }
            return ["title": .string(title), "body": .string(text)]
        case .object(var alert)?:
            if let title, alert["title"] == nil { alert["title"] = .string(title) }
            return .object(alert)
        default:
            return title.map { ["title": .string($0)] }
        }
    }

    /// `apns-push-type`: data `pushType` when given; `background` for a content-available push that shows nothing
    /// (no alert, title, badge or sound); else `alert`.
    static func pushType(_ data: [String: JSONValue]) -> String {
        if let given = data["pushType"]?.stringValue, !given.isEmpty { return given }
        let shows = ["alert", "title", "badge", "sound"].contains { data[$0] != nil && data[$0] != .null }
        return isOne(data["content-available"]) && !shows ? "background" : "alert"
    }

    /// `apns-priority`: data `priority` (a number or numeric text) when given; 5 for background pushes (APNs refuses
    /// 10 there), else 10.
    static func priority(_ data: [String: JSONValue], pushType: String) -> Int {
        if let number = data["priority"]?.integerValue ?? data["priority"]?.stringValue.flatMap({ Int($0) }) { return number }
        return pushType == "background" ? 5 : 10
    }

    /// Whether a flag is set the way Parse sets it: the number 1 (or `true`).
    static func isOne(_ value: JSONValue?) -> Bool {
        switch value {
        case .bool(true)?: return true
        case let value?: return value.numberValue == 1
        case nil: return false
        }
    }

    /// The canonical 8-4-4-4-12 hexadecimal form.
    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
