import ParsleyServer

/// Social Fitness (shared/apps/social-fitness.md): "Users will frequently check for challenge deadlines" — an
/// alert to the challenged user when a challenge they have not completed ends within a day. `challengeDeadlines`
/// (master key only) sends each alert once; run it every few minutes (a scheduled job once jobs exist).
enum SocialFitness {
    static let window: Int64 = 24 * 3600 * 1000

    static func register(_ cloud: inout CloudCode) {
        cloud.define("challengeDeadlines", validator: CloudValidator(requireMaster: true, validateMasterKey: true)) { req in
            let now = ParseDate.now
            let soon = ParseDate(milliseconds: now.milliseconds + window)
            let due = try await req.parse.asMaster.find(
                "Challenge",
                [
                    "where": [
                        "deadline": ["$gt": now.cloudJSON, "$lte": soon.cloudJSON],
                        "completed": ["$exists": false],
                        "alertedAt": ["$exists": false],
                    ],
                    "limit": 1000,
                ])
            var sent = 0
            for challenge in due {
                guard let id = challenge["objectId"]?.stringValue, let recipient = Pointer(parseJSON: challenge["recipient_id"] ?? .null) else {
                    continue
                }
                // Marked before the notification is recorded: a failure after this point skips the alert rather than repeating it.
                let claimed = try? await req.parse.asMaster.update("Challenge", id, ["alertedAt": now.cloudJSON])
                guard claimed != nil else { continue }
                let owner = await Notifications.name(req.parse, Pointer(parseJSON: challenge["owner_id"] ?? .null)?.objectId)
                try await Notifications.record(
                    req.parse, to: recipient.objectId, kind: "challengeDeadline", message: "Your challenge from \(owner) ends within a day")
                sent += 1
            }
            return sent
        }
    }
}
