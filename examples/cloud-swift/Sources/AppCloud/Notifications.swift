import ParsleyCloud

/// Notifications are recorded in the `Notification` class (the recipient reads their own) until the push
/// issue delivers them as pushes: `{recipient: Pointer<_User>, kind, message}`.
enum Notifications {
    static func record(_ parse: CloudAPI, to userId: String, kind: String, message: String) async throws {
        _ = try await parse.asMaster.create("Notification", [
            "recipient": ["__type": "Pointer", "className": "_User", "objectId": .string(userId)],
            "kind": .string(kind),
            "message": .string(message),
            "ACL": .object([userId: ["read": true]]),
        ])
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
