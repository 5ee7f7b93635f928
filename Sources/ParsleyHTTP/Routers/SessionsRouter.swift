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
            .ok(try await queries.get("_Session", objectId: p["objectId"]!, FindOptions(params: req.params, isGet: true), auth: req.auth))
        }
        table.on(.post, "sessions") { [sessions] req, _ in
            if req.auth.isMaster {
                throw ParseError(.operationForbidden, "Sessions are created by log-in, sign-up or with a user's session token.")
            }
            guard let userId = req.auth.userId else { throw ParseError(.invalidSessionToken, "Invalid session token") }
            let s = try await sessions.create(userId: userId, installationId: req.auth.installationId, action: "create", authProvider: "password")
            return ParseResponse(
                status: 201,
                body: [
                    "objectId": .string(s.objectId), "sessionToken": .string(s.token), "createdAt": .string(ParseDate.now.iso),
                    "user": Pointer(className: "_User", objectId: userId).json, "createdWith": ["action": "create"], "restricted": false,
                    "expiresAt": ["__type": "Date", "iso": .string(s.expiresAt?.iso ?? "")],
                ],
                location: "\(req.mountURL)/sessions/\(s.objectId)")
        }
        table.on(.put, "sessions/:objectId") { [objects, sessions] req, p in
            // A user may change other fields of its own sessions (their ACL); another user's session is not found (101).
            if !req.auth.isMaster {
                guard req.auth.userId != nil else { throw ParseError(.invalidSessionToken, "Session token required.") }
                let body = req.bodyObject
                if body["ACL"] != nil { throw ParseError(.invalidKeyName, "Cannot set ACL on a Session.") }
                let movesSession = body["user"].map { Pointer(json: $0)?.objectId != req.auth.userId } ?? false
                if movesSession || body["installationId"] != nil || body["sessionToken"] != nil {
                    throw ParseError(.invalidKeyName, "Sessions keep their user, installation and token.")
                }
            }
            let r = try await objects.update(
                "_Session", objectId: p["objectId"]!, body: req.bodyObject, auth: req.auth, rules: .init(trusted: true))
            await sessions.invalidateAll()
            return .ok(r)
        }
        table.on(.delete, "sessions/:objectId") { [objects, sessions] req, p in
            guard req.auth.isMaster || req.auth.userId != nil else { throw ParseError(.invalidSessionToken, "Session token required.") }
            try await objects.delete("_Session", objectId: p["objectId"]!, auth: req.auth, trusted: true)
            await sessions.invalidateAll()
            return .ok([:])
        }
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        table.handler(for: request)
    }
}
