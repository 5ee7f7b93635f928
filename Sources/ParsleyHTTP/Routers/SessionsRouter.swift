import ParsleyCore
import ParsleyDomain

/// `/sessions[/:objectId]`, `/sessions/me`; `/classes/_Session` is routed here too. Sessions are readable
/// and revocable by their user (their ACL) and by the master key.
struct SessionsRouter: ParseRouter {
    private var table = RouteTable()

    init(objects: ObjectService, queries: QueryService, sessions: SessionService) {
        table.on(.get, "sessions") { [queries] req, _ in
            try await ClassesRouter.find(queries, req, className: "_Session")
        }
        table.on(.get, "sessions/me") { [queries] req, _ in
            guard let token = req.auth.sessionToken else { throw ParseError(.invalidSessionToken, "Invalid session token") }
            var find = FindOptions()
            find.whereValue = ["sessionToken": .string(token)]
            guard let session = try await queries.find("_Session", find, auth: .master).results.first else {
                throw ParseError(.invalidSessionToken, "Invalid session token")
            }
            return .ok(session)
        }
        table.on(.get, "sessions/:objectId") { [queries] req, p in
            .ok(try await queries.get("_Session", objectId: try p.require("objectId"), FindOptions(params: req.params, isGet: true), auth: req.auth))
        }
        table.on(.post, "sessions") { [sessions] req, _ in
            if req.auth.isMaster {
                throw ParseError(.operationForbidden, "Sessions are created by log-in, sign-up or with a user's session token.")
            }
            guard let userId = req.auth.userId else { throw ParseError(.invalidSessionToken, "Invalid session token") }
            let s = try await sessions.create(userId: userId, installationId: req.auth.installationId, action: "create", authProvider: "password")
            var body: [String: JSONValue] = [
                "objectId": .string(s.objectId), "sessionToken": .string(s.token), "createdAt": .string(ParseDate.now.iso),
                "user": Pointer(className: "_User", objectId: userId).json, "createdWith": ["action": "create"], "restricted": false,
            ]
            // No expiry without `expireInactiveSessions`.
            if let expires = s.expiresAt { body["expiresAt"] = ["__type": "Date", "iso": .string(expires.iso)] }
            return ParseResponse(status: 201, body: .object(body), location: "\(req.mountURL)/sessions/\(s.objectId)")
        }
        table.on(.put, "sessions/:objectId") { [objects, sessions] req, p in
            // A user may change other fields of its own sessions (their ACL); another user's session is not found (101).
            let changes = try UpdateObject(decoding: req.body)
            if !req.auth.isMaster {
                guard let userId = req.auth.userId else { throw ParseError(.invalidSessionToken, "Session token required.") }
                try Self.checkClientUpdate(changes.json, userId: userId)
            }
            let r = try await objects.update("_Session", objectId: try p.require("objectId"), changes, auth: req.auth, rules: .init(trusted: true))
            await sessions.invalidateAll()
            return .ok(r)
        }
        table.on(.delete, "sessions/:objectId") { [objects, sessions] req, p in
            guard req.auth.isMaster || req.auth.userId != nil else { throw ParseError(.invalidSessionToken, "Session token required.") }
            try await objects.delete("_Session", objectId: try p.require("objectId"), auth: req.auth, trusted: true)
            await sessions.invalidateAll()
            return .ok([:])
        }
    }

    /// What only the master key may change on a session: when it expires, how it was made, its token, installation, user
    /// and ACL (a user who could set `expiresAt` to null or 2999 would keep a stolen token for ever). Any of them in a
    /// user's update, as a value, an operation or a dotted path into it, is 105 and nothing changes (Parse Server's rule
    /// since CVE-2026-34574). Naming its own user again is no change and passes.
    static func checkClientUpdate(_ body: JSONValue, userId: String) throws(ParseError) {
        for key in body.objectValue?.keys.sorted() ?? [] {
            let root = key.split(separator: ".", maxSplits: 1).first.map(String.init) ?? key
            switch root {
            case "ACL": throw ParseError(.invalidKeyName, "Cannot set ACL on a Session.")
            case "user" where key == "user" && Pointer(json: body["user"] ?? .null)?.objectId == userId: continue
            case "user", "expiresAt", "createdWith", "sessionToken", "installationId", "restricted":
                throw ParseError(.invalidKeyName, "Invalid key name: \(root). Only the master key can change it on a Session.")
            default: continue
            }
        }
    }

    var routes: RouteTable { table }
}
