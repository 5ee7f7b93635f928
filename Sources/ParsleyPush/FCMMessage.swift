import ParsleyCore
import ParsleyDomain

/// The FCM HTTP v1 `messages:send` body for one message.
///
/// Android devices get a data message the Parse Android SDK reads: `android.data` holds `push_id`, `time` and `data`,
/// the whole Parse data object as JSON text. Apple devices registered through Firebase (`pushType` `fcm` on an `ios`
/// installation) get the APNs payload Parsley would send directly, under `apns`.
enum FCMMessage {
    /// FCM keeps a message for at most four weeks.
    static let maxTTLSeconds: Int64 = 2_419_200

    static func body(_ message: PushMessage) -> JSONValue {
        var fields: [String: JSONValue] = ["token": .string(message.deviceToken)]
        if APNsProvider.appleDeviceTypes.contains(message.deviceType) {
            fields["apns"] = apns(message)
        } else {
            fields["android"] = android(message)
        }
        return ["message": .object(fields)]
    }

    static func android(_ message: PushMessage) -> JSONValue {
        let data = message.data
        var android: [String: JSONValue] = [
            "priority": .string(priority(data)),
            "data": [
                "push_id": .string(message.pushId), "time": .string(message.pushTime.iso), "data": .string(JSONWriter.string(.object(data))),
            ],
        ]
        if let expiration = message.expiration {
            let seconds = min(maxTTLSeconds, max(0, (expiration.milliseconds - message.pushTime.milliseconds) / 1000))
            android["ttl"] = .string("\(seconds)s")
        }
        if let collapseKey = (data["collapseId"] ?? data["collapse_id"])?.stringValue, !collapseKey.isEmpty {
            android["collapse_key"] = .string(collapseKey)
        }
        return .object(android)
    }

    /// `high`, or `normal` for a background push (content-available and nothing to show); data `priority`
    /// (`high`/`normal`) when given.
    static func priority(_ data: [String: JSONValue]) -> String {
        if let given = data["priority"]?.stringValue, given == "high" || given == "normal" { return given }
        return APNsNotification.pushType(data) == "background" ? "normal" : "high"
    }

    /// `apns.headers` (FCM picks the topic itself) and `apns.payload`.
    static func apns(_ message: PushMessage) -> JSONValue {
        let notification = APNsNotification(message: message, topic: "")
        let headers = notification.headers.filter { $0.key != "apns-topic" && $0.key != "apns-id" }
        return ["headers": .object(headers.mapValues { .string($0) }), "payload": notification.body]
    }
}
