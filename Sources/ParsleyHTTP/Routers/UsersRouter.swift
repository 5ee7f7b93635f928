import ParsleyCore
import ParsleyDomain

/// `/users`, `/login`, `/logout`, `/users/me`, `/verifyPassword`, `/loginAs`, `/upgradeToRevocableSession`, `/challenge`.
/// `/classes/_User` is routed here too.
struct UsersRouter: ParseRouter {
    let users: UserService
    let queries: QueryService
    let sessions: SessionService
    private var table = RouteTable()

    init(users: UserService, queries: QueryService, sessions: SessionService) {
        self.users = users
        self.queries = queries
        self.sessions = sessions
        table.on(.post, "users") { [users] req, _ in
            let created = try await users.signUp(try SignUp(decoding: req.body), auth: req.auth)
            return ParseResponse(
                status: created.status, body: .object(created.body),
                location: created.status == 201 ? "\(req.mountURL)/users/\(created.objectId)" : nil)
        }
        table.on(.get, "users") { [users, queries] req, _ in
            let page = try await queries.find("_User", FindOptions(params: req.params), auth: req.auth, triggers: true)
            var body: [String: JSONValue] = ["results": .array(page.results.map { .object(users.shape($0, auth: req.auth)) })]
            if let count = page.count { body["count"] = .int(Int64(count)) }
            return .ok(body)
        }
        table.on(.get, "users/me") { [users] req, _ in .ok(try await users.me(auth: req.auth)) }
        table.on(.get, "users/:objectId") { [users, queries] req, p in
            let user = try await queries.get(
                "_User", objectId: try p.require("objectId"), FindOptions(params: req.params, isGet: true), auth: req.auth, triggers: true)
            return .ok(users.shape(user, auth: req.auth))
        }
        table.on(.put, "users/:objectId") { [users] req, p in
            .ok(try await users.update(try p.require("objectId"), try UpdateObject(decoding: req.body), auth: req.auth))
        }
        table.on(.delete, "users/:objectId") { [users] req, p in
            try await users.delete(try p.require("objectId"), auth: req.auth)
            return .ok([:])
        }
        for method in [ParseRequest.Method.get, .post] {
            table.on(method, "login") { [users] req, _ in .ok(try await users.logIn(try LogIn(decoding: Self.credentials(req)), auth: req.auth)) }
            table.on(method, "verifyPassword") { [users] req, _ in
                .ok(try await users.verifyPassword(try VerifyPassword(decoding: Self.credentials(req))))
            }
        }
        table.on(.post, "challenge") { [users] req, _ in .ok(try await users.challenge(try Challenge(decoding: req.body), auth: req.auth)) }
        table.on(.post, "logout") { [users] req, _ in
            try await users.logOut(auth: req.auth)
            return .ok([:])
        }
        table.on(.post, "loginAs") { [users] req, _ in
            guard req.auth.isMaster else { throw ParseError(.operationForbidden, "master key is required") }
            return .ok(try await users.logInAs(try LogInAs(decoding: Self.credentials(req)), auth: req.auth))
        }
        table.on(.post, "upgradeToRevocableSession") { [sessions] req, _ in
            guard let userId = req.auth.userId else { throw ParseError(.objectNotFound, "invalid session") }
            let s = try await sessions.create(userId: userId, installationId: req.auth.installationId, action: "upgrade", authProvider: "password")
            return .ok([
                "objectId": .string(s.objectId), "sessionToken": .string(s.token), "user": Pointer(className: "_User", objectId: userId).json,
                "__type": "Object", "className": "_Session",
            ])
        }
    }

    /// Log-in credentials come from the query string (GET) or the body (POST).
    static func credentials(_ req: ParseRequest) -> [String: JSONValue] {
        var merged = req.bodyObject.objectValue ?? [:]
        for (k, v) in req.params { merged[k] = v }
        return merged
    }

    var routes: RouteTable { table }
}
