public import ParsleyCore
import ParsleyStorage

/// `_Installation` rules: create is an upsert on `installationId` (lower-cased), `deviceType` is required on
/// create, `installationId` and `deviceType` are immutable, a `deviceToken` moves to the newest installation,
/// and only the master key may list or delete installations.
public struct InstallationService: Sendable {
    let objects: ObjectService
    let queries: QueryService

    public init(objects: ObjectService, queries: QueryService) {
        self.objects = objects
        self.queries = queries
    }

    public struct Saved: Sendable {
        public var created: Bool
        public var body: [String: JSONValue]
        public var objectId: String
    }

    /// Creates `_Installation` with its columns and lookup indexes (upserts and token moves stay fast with many
    /// installations).
    public func bootstrap() async throws {
        _ = try await objects.schemas.ensure(
            "_Installation", fields: ["installationId": .string, "deviceToken": .string, "user": .pointer("_User")], auth: .master,
            allowClassCreation: true)
        try await objects.store.createInstallationIndexes()
    }

    /// `POST /installations`.
    public func save(_ installation: SaveInstallation, auth: Auth) async throws -> Saved {
        var fields = installation.fields
        if fields["installationId"] == nil, let header = auth.installationId { fields["installationId"] = .string(header) }
        Self.normalize(&fields)
        let installationId = fields["installationId"]?.stringValue
        let deviceToken = fields["deviceToken"]?.stringValue
        guard installationId != nil || deviceToken != nil else {
            throw ParseError(.missingRequiredField, "at least one ID field (deviceToken, installationId) must be specified in this operation")
        }
        if let installationId, let existing = try await find(["installationId": .string(installationId)]).first,
            let id = existing["objectId"]?.stringValue
        {
            try Self.checkImmutable(fields, existing)
            var body = try await objects.update("_Installation", objectId: id, UpdateObject(fields), auth: .master, rules: .init(trusted: true))
            body["objectId"] = nil
            try await dedupe(deviceToken, keep: id)
            return Saved(created: false, body: body, objectId: id)
        }
        guard case .string(let type)? = fields["deviceType"], !type.isEmpty else {
            throw ParseError(.missingRequiredField, "deviceType must be specified in this operation")
        }
        let created = try await objects.create("_Installation", CreateObject(fields), auth: auth, rules: .init(trusted: true))
        let id = created["objectId"]?.stringValue ?? ""
        try await dedupe(deviceToken, keep: id)
        return Saved(created: true, body: created, objectId: id)
    }

    /// `PUT /installations/:id`.
    public func update(_ id: String, _ changes: UpdateObject, auth: Auth) async throws -> [String: JSONValue] {
        var fields = changes.fields
        Self.normalize(&fields)
        guard let existing = try await find(["objectId": .string(id)]).first else {
            throw ParseError(.objectNotFound, "Object not found for update.")
        }
        try Self.checkImmutable(fields, existing)
        return try await objects.update("_Installation", objectId: id, UpdateObject(fields), auth: auth, rules: .init(trusted: true))
    }

    static func normalize(_ fields: inout [String: JSONValue]) {
        if case .string(let id)? = fields["installationId"] { fields["installationId"] = .string(id.lowercased()) }
        if case .string(let token)? = fields["deviceToken"], token.count == 64 { fields["deviceToken"] = .string(token.lowercased()) }
    }

    static func checkImmutable(_ fields: [String: JSONValue], _ existing: [String: JSONValue]) throws(ParseError) {
        for key in ["installationId", "deviceType"] {
            if let new = fields[key], let old = existing[key], new != old {
                throw ParseError(.changedImmutableField, "\(key) may not be changed in this operation")
            }
        }
    }

    func find(_ whereValue: JSONValue) async throws -> [[String: JSONValue]] {
        var options = FindOptions()
        options.whereValue = whereValue
        options.limit = 10
        return try await queries.find("_Installation", options, auth: .master).results
    }

    /// Another installation holding the same device token loses it (the newest installation owns it).
    func dedupe(_ deviceToken: String?, keep: String) async throws {
        guard let deviceToken else { return }
        for other in try await find(["deviceToken": .string(deviceToken), "objectId": ["$ne": .string(keep)]]) {
            if let id = other["objectId"]?.stringValue { try await objects.delete("_Installation", objectId: id, auth: .master, trusted: true) }
        }
    }
}
