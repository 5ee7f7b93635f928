import HTTPTypes
import Hummingbird
import NIOCore
import ParsleyCore
import ParsleyDomain

/// `/dashboard`: the embedded admin pages and their sign-in. The pages then use the ordinary REST API under the
/// mount path, authorized by the session cookie together with its CSRF token (`ParseTransport.authenticate`).
/// Every answer carries a strict Content-Security-Policy (scripts and styles from this origin only, no inline code,
/// no framing).
struct DashboardResponder: Sendable {
    let api: ParseAPI
    let sessions: DashboardSessions
    let counters: RequestCounters
    let history: MetricHistory

    static let prefix = "/dashboard"

    static func owns(_ path: String) -> Bool { path == prefix || path.hasPrefix(prefix + "/") }

    func respond(to request: Request, context: ParsleyRequestContext) async -> Response {
        let rest = String(request.uri.path.dropFirst(Self.prefix.count))
        await sessions.prefetch(cookie: request.headers[.cookie])
        switch (request.method, rest) {
        case (.get, ""), (.get, "/"), (.head, ""), (.head, "/"):
            return asset("index.html")
        case (.get, _) where rest.hasPrefix("/assets/"):
            return asset(String(rest.dropFirst("/assets/".count)))
        case (.post, "/api/login"):
            return await login(request, context: context)
        case (.get, "/api/session"):
            guard let id = cookie(request), let session = sessions.session(id) else { return Self.json(401, ["error": "not signed in"]) }
            return Self.json(200, description(session))
        case (.get, "/api/health"):
            guard verified(request) != nil else { return Self.json(401, ["error": "not signed in"]) }
            return Self.json(200, await health())
        case (.get, "/api/metrics"):
            guard verified(request) != nil else { return Self.json(401, ["error": "not signed in"]) }
            let query = Self.query(request)
            let up = Int((ContinuousClock.now - counters.started) / .seconds(1))
            return Self.json(200, history.json(longRange: query["range"] == "all", since: query["since"].flatMap { Int64($0) }, upSeconds: up))
        case (.get, "/api/logs"):
            guard verified(request) != nil else { return Self.json(401, ["error": "not signed in"]) }
            return Self.json(200, DashboardLogs.answer(LogRing.shared, DashboardLogs.Filter(query: Self.query(request))))
        case (.get, _) where rest.hasPrefix("/api/classes/") && rest.hasSuffix("/export"):
            guard let session = verified(request) else { return Self.json(401, ["error": "not signed in"]) }
            return await export(request, className: Self.className(rest, suffix: "/export"), session: session, logger: context.logger)
        case (.post, _) where rest.hasPrefix("/api/classes/") && rest.hasSuffix("/import"):
            guard let session = verified(request) else { return Self.json(401, ["error": "not signed in"]) }
            return await importing(request, className: Self.className(rest, suffix: "/import"), session: session, logger: context.logger)
        case (.post, "/api/logout"):
            if let id = cookie(request), sessions.verified(cookie: request.headers[.cookie], csrf: request.headers[Self.csrfHeader]) != nil {
                await sessions.end(id)
            }
            var r = Self.json(200, [:])
            r.headers[.setCookie] = "\(DashboardSessions.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
            return r
        default:
            return Self.json(404, ["error": "not found"])
        }
    }

    static let csrfHeader = HTTPField.Name("X-Parsley-Dashboard-CSRF")!

    /// Version, database, requests and LiveQuery of this process, for the health page.
    func health() async -> JSONValue {
        let db = api.services.databaseStatus
        let up = (ContinuousClock.now - counters.started) / .seconds(1)
        let databaseAnswers = (try? await api.services.pingDatabase()) != nil
        return [
            "version": .string(HealthRouter.version), "uptimeSeconds": .int(Int64(up)),
            "database": [
                "kind": .string(db.kind), "answers": .bool(databaseAnswers), "readersBusy": .int(Int64(db.readersBusy)),
                "readers": .int(Int64(db.readers)), "writesQueued": .int(Int64(db.writesQueued)),
            ],
            "requests": [
                "total": .int(Int64(counters.total)), "serverErrors": .int(Int64(counters.serverErrors)),
                "perSecond": .double((Double(counters.total) / max(up, 1) * 10).rounded() / 10),
            ],
            "liveQuery": [
                "connections": .int(Int64(api.services.liveQuery.connectionCount)),
                "subscriptions": .int(Int64(api.services.liveQuery.subscriptionCount)),
            ],
        ]
    }

    /// The session of a request that carries its cookie together with its CSRF token.
    func verified(_ request: Request) -> DashboardSessions.Session? {
        sessions.verified(cookie: request.headers[.cookie], csrf: request.headers[Self.csrfHeader])
    }

    /// The query string's parameters (the last of a repeated one).
    static func query(_ request: Request) -> [String: String] {
        var out: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { out[String(key)] = String(value) }
        return out
    }

    /// `Post` of `/api/classes/Post/export`.
    static func className(_ rest: String, suffix: String) -> String {
        String(rest.dropFirst("/api/classes/".count).dropLast(suffix.count)).removingPercentEncoding()
    }

    func cookie(_ request: Request) -> String? { request.headers[.cookie].flatMap(DashboardSessions.cookieValue) }

    func description(_ s: DashboardSessions.Session) -> JSONValue {
        var o: [String: JSONValue] = [
            "csrfToken": .string(s.csrfToken), "readOnly": .bool(s.readOnly), "applicationId": .string(api.options.applicationId),
            "mountPath": .string(api.options.mountPath),
            // Where the GraphQL console sends its operations (null: the GraphQL API is not mounted).
            "graphQLPath": api.options.mountGraphQL ? .string(ParseTransport.graphQLPath(api.options)) : .null,
        ]
        if let username = s.username { o["username"] = .string(username) }
        return .object(o)
    }

    /// `{"masterKey": ...}` (the master key or the read-only one) or `{"username", "password"}` of an admin role's
    /// member. Cross-origin attempts (an `Origin` that is not this host) are refused, and so are more than 10 failures
    /// a minute from one address (on all nodes together when they share the database).
    func login(_ request: Request, context: ParsleyRequestContext) async -> Response {
        let address = context.clientAddress ?? "-"
        if let origin = request.headers[.origin], let host = request.head.authority, !(origin.hasSuffix("://" + host)) {
            return Self.json(403, ["error": "cross-origin sign-in refused"])
        }
        guard request.headers[.contentType]?.hasPrefix("application/json") == true else {
            return Self.json(415, ["error": "send JSON"])
        }
        guard await sessions.mayTry(address) else { return Self.json(429, ["code": 100, "error": "Too many failed sign-ins; wait a minute."]) }
        guard let buffer = try? await request.body.collect(upTo: 64 * 1024),
            let body = try? buffer.withUnsafeReadableBytes({ try JSONParser.parse($0) })
        else { return Self.json(400, ["code": 107, "error": "Invalid JSON"]) }
        let options = api.options
        var readOnly = false
        var username: String?
        if let key = body["masterKey"]?.stringValue {
            if DashboardSessions.constantTimeEqual(key, options.masterKey) {
                if let allowed = options.security.masterKeyIps, !IPRange.allows(allowed, context.clientAddress) {
                    return Self.json(403, ["error": "unauthorized"])
                }
            } else if let readOnlyKey = options.readOnlyMasterKey, DashboardSessions.constantTimeEqual(key, readOnlyKey) {
                readOnly = true
            } else {
                await sessions.failed(address)
                return Self.json(403, ["error": "unauthorized"])
            }
        } else if let name = body["username"]?.stringValue, let password = body["password"] {
            guard let role = options.dashboard.adminRole else {
                return Self.json(403, ["code": 119, "error": "Signing in as a user needs PARSLEY_DASHBOARD_ADMIN_ROLE."])
            }
            do {
                let user = try await api.users.verifyPassword(try VerifyPassword(decoding: ["username": .string(name), "password": password]))
                guard let id = user["objectId"]?.stringValue, try await api.roles.roleNames(forUser: id).contains(role) else {
                    await sessions.failed(address)
                    return Self.json(403, ["code": 119, "error": .string("\(name) is not a member of the \(role) role.")])
                }
                username = name
            } catch let error as ParseError {
                await sessions.failed(address)
                return Self.json(error.httpStatus, error.json)
            } catch {
                return Self.json(500, ["code": 1, "error": "Internal server error."])
            }
        } else {
            return Self.json(400, ["code": 107, "error": "Send masterKey, or username and password."])
        }
        let id: String, session: DashboardSessions.Session
        do {
            (id, session) = try await sessions.create(readOnly: readOnly, username: username)
        } catch {
            return Self.json(500, ["code": 1, "error": "Internal server error."])
        }
        var response = Self.json(200, description(session))
        let secure = request.headers[HTTPField.Name("X-Forwarded-Proto")!] == "https" || options.publicServerURL?.hasPrefix("https:") == true
        response.headers[.setCookie] = "\(DashboardSessions.cookieName)=\(id); Path=/; HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"
        return response
    }

    func asset(_ name: String) -> Response {
        guard let file = DashboardAssets.files[name] else { return Self.json(404, ["error": "not found"]) }
        var headers = Self.securityHeaders
        headers[.contentType] = file.type
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
    }

    static func json(_ status: Int, _ body: JSONValue) -> Response {
        var headers = securityHeaders
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(body))))
    }

    /// No inline script or style, nothing from elsewhere but images over https (file previews), never in a frame.
    static let securityHeaders: HTTPFields = {
        var h = HTTPFields()
        h[HTTPField.Name("Content-Security-Policy")!] =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data: blob:; connect-src 'self'; object-src 'none'; "
            + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        h[HTTPField.Name("X-Frame-Options")!] = "DENY"
        h[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        h[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return h
    }()
}
