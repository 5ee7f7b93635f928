import ParsleyServer

/// A notification is a push to the recipient's devices (their installations' `user`), with the app's badge
/// incremented, and a row in the `Notification` class (the in-app list; the recipient reads their own):
/// `{recipient: Pointer<_User>, kind, message}`. Without a push configuration only the row is written.
enum Notifications {
    static func record(_ parse: CloudAPI, to userId: String, kind: String, message: String) async throws {
        let recipient: JSONValue = ["__type": "Pointer", "className": "_User", "objectId": .string(userId)]
        _ = try await parse.asMaster.create(
            "Notification",
            [
                "recipient": recipient,
                "kind": .string(kind),
                "message": .string(message),
                "ACL": .object([userId: ["read": true]]),
            ])
        do {
            try await parse.push(
                where: ["user": recipient], data: ["alert": .string(message), "kind": .string(kind), "badge": "Increment", "sound": "default"])
        } catch let error as ParseError where error.code == .pushMisconfigured {
            // No push provider configured: the in-app list is all there is.
        }
    }

    /// A user's name for a message (their username), read with the master key.
    static func name(_ parse: CloudAPI, _ userId: String?) async -> String {
        guard let userId, let user = try? await parse.asMaster.get("_User", userId) else { return "Someone" }
        return user["username"]?.stringValue ?? "Someone"
    }
}

extension CloudObject {
    /// The objectId of a pointer field.
    func pointerId(_ key: String) -> String? { self[key, as: Pointer.self]?.objectId }
}
