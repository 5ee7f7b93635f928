import Hummingbird
import HTTPTypes
import Logging
import NIOCore
import ParsleyCore
import ParsleyDomain

/// The HTTP edge: decodes Parse's transport conventions (headers or JS-SDK body credentials, `_method`,
/// JSON-or-plain query parameters), authenticates, calls `ParseAPI`, and encodes JSON answers with CORS.
public struct ParseTransport: HTTPResponder {
    public typealias Context = ParsleyRequestContext

    let api: ParseAPI
    let options: ParseServerOptions
    let mountPrefix: String
    /// The embedded dashboard's sign-ins (its cookie and CSRF token authorize REST calls as the master key).
    let dashboardSessions: DashboardSessions
    /// Requests answered since the start (the dashboard's health page).
    let counters = RequestCounters()

    public init(api: ParseAPI) {
        self.api = api
        self.options = api.options
        self.dashboardSessions = DashboardSessions(idleTimeout: api.options.dashboard.idleTimeout)
        var mount = api.options.mountPath
        if !mount.hasPrefix("/") { mount = "/" + mount }
        while mount.count > 1, mount.hasSuffix("/") { mount.removeLast() }
        self.mountPrefix = mount
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        if request.method == .options { return Self.preflight() }
        let path = request.uri.path
        guard let raw = Self.segments(path, below: mountPrefix) else {
            return Self.json(404, ["code": 101, "error": .string("Cannot \(request.method.rawValue) \(path)")])
        }
        let segments = raw.map { $0.removingPercentEncoding() }
        do {
            return try await handle(request, segments: segments, context: context)
        } catch let error as ParseError {
            return Self.json(error.httpStatus, error.json)
        } catch let denied as AccessDenied {
            return Self.json(403, ["error": .string(denied.message)])
        } catch let limited as RateLimitExceeded {
            return Self.json(429, ["code": 100, "error": .string(limited.message)])
        } catch is RouteNotFound {
            return Self.json(404, ["code": 101, "error": .string("Cannot \(request.method.rawValue) \(path)")])
        } catch {
            context.logger.error("request failed: \(String(reflecting: error))")
            return Self.json(500, ["code": 1, "error": "Internal server error."])
        }
    }

    /// The path's segments below `mount` (still percent-encoded); nil when the path is outside it. Works on
    /// UTF-8 bytes (a `/` is never part of a longer character): this runs for every request.
    static func segments(_ path: String, below mount: String) -> [String]? {
        var rest = path.utf8[...]
        guard rest.starts(with: mount.utf8) else { return nil }
        rest = rest.dropFirst(mount.utf8.count)
        if mount.utf8.last != UInt8(ascii: "/"), let first = rest.first, first != UInt8(ascii: "/") { return nil }
        return rest.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
    }

    func handle(_ request: Request, segments: [String], context: Context) async throws -> Response {
        var method: ParseRequest.Method
        switch request.method {
        case .get, .head: method = .get
        case .post: method = .post
        case .put, .patch: method = .put
        case .delete: method = .delete
        default: throw ParseError(.commandUnavailable, "Unsupported method \(request.method.rawValue)")
        }
        if segments == ["health"] {
            return Self.json(200, ["status": "ok"])
        }
        let clientAddress = context.remoteAddress?.ipAddress
        if segments.first == "apps" || segments.first == "files" {
            // These bodies are forms or file contents, never `_method`: the HTTP method is the real one.
            let caller = RateLimitCaller(
                isMaster: presentsMasterKey(request.headers, [:], clientAddress: clientAddress), ip: clientAddress,
                sessionToken: request.headers[Self.sessionToken])
            try await api.checkRateLimits(method: method.rawValue, path: segments, caller: caller)
        }
        // Pages opened from emailed links: no credentials, form bodies, HTML answers (EmailRouter.swift).
        if segments.first == "apps" { return try await publicPage(request, method: method, segments: segments) }
        // Files stream their bodies both ways (Routers/FilesRouter.swift).
        if segments.first == "files" { return try await files(request, segments: segments, clientAddress: clientAddress) }
        // NUL is refused everywhere else in a request (no backend stores it; see JSONParser). File names answer 122.
        if segments.contains(where: { $0.utf8.contains(0) }) { throw Self.nulRefused }
        let bytes: ByteBuffer
        do {
            bytes = try await request.body.collect(upTo: options.maxRequestBytes)
        } catch {
            return Self.json(413, ["code": 130, "error": .string("Request body is larger than \(options.maxRequestBytes) bytes")])
        }
        var body: JSONValue?
        var keyOrders = JSONKeyOrders()
        if bytes.readableBytes > 0 {
            do {
                if segments.first == "schemas" {
                    (body, keyOrders) = try bytes.withUnsafeReadableBytes { raw in try JSONParser.parseKeepingKeyOrder(raw) }
                } else {
                    body = try bytes.withUnsafeReadableBytes { raw in try JSONParser.parse(raw) }
                }
            } catch {
                throw (error as? JSONParser.Failure)?.message.hasPrefix("NUL") == true ? Self.nulRefused : ParseError.invalidJSON("Invalid JSON")
            }
        }
        if let body { try options.security.keywordDenylist.check(body) }
        // JS SDK: credentials and the real method travel in the body.
        var bodyCredentials: [String: String] = [:]
        var cloudContext = try request.headers[Self.cloudContext].map { try Self.cloudContext(.string($0)) }
        if case .object(var o)? = body {
            if let given = o["_context"], given.isTruthy { cloudContext = try Self.cloudContext(given) }
            for key in ["_ApplicationId", "_JavaScriptKey", "_MasterKey", "_SessionToken", "_InstallationId", "_ClientVersion", "_ContentType"] {
                switch o.removeValue(forKey: key) {
                case .string(let v)?: bodyCredentials[key] = v
                case nil, .null?: break
                // A session token that is not a string is never a valid one (and must not be silently dropped).
                case _? where key == "_SessionToken": throw ParseError(.invalidSessionToken, "Invalid session token")
                default: break
                }
            }
            for key in ["_RevocableSession", "_noBody", "_context"] { o[key] = nil }
            if method == .post, case .string(let m)? = o.removeValue(forKey: "_method") {
                guard let override = ParseRequest.Method(rawValue: m.uppercased()) else {
                    throw ParseError(.invalidJSON, "Invalid _method \(m)")
                }
                method = override
            }
            body = .object(o)
        }
        // The context reaches triggers and webhooks like a body does: the same denylist.
        if let cloudContext { try options.security.keywordDenylist.check(.object(cloudContext)) }
        // The rate limits count the request with its real method (after `_method`), before its session is looked up (as
        // Parse Server does: a flood of made-up session tokens is counted too).
        let caller = RateLimitCaller(
            isMaster: presentsMasterKey(request.headers, bodyCredentials, clientAddress: clientAddress), ip: clientAddress,
            sessionToken: request.headers[Self.sessionToken] ?? bodyCredentials["_SessionToken"])
        try await api.checkRateLimits(method: method.rawValue, path: segments, caller: caller)
        // `/login` drops any session token it is sent.
        var auth = try await authenticate(request.headers, bodyCredentials, ignoresSession: segments == ["login"], clientAddress: clientAddress)
        if method != .get { try Self.refuseReadOnly(auth, method == .post ? "create" : method == .put ? "update" : "delete") }
        auth.ip = clientAddress
        auth.context = cloudContext ?? [:]
        if api.services.cloud.wantsRequestHeaders {
            // Cloud code's requests carry the headers (lower-case names); other requests skip the copy.
            for field in request.headers { auth.headers[field.name.canonicalName] = field.value }
        }
        var params: [String: JSONValue] = [:]
        if method == .get, case .object(let o)? = body {
            params = o
            body = nil
        }
        if let query = request.uri.query {
            for (k, v) in try Self.queryParameters(query) {
                try options.security.keywordDenylist.check(v)
                params[k] = v
            }
        }
        let mountURL: String
        if let publicURL = options.publicServerURL {
            mountURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        } else {
            mountURL = "http://\(request.head.authority ?? "localhost")\(mountPrefix)"
        }
        var parseRequest = ParseRequest(method: method, path: segments, params: params, body: body, auth: auth, mountURL: mountURL)
        parseRequest.requestId = request.headers[Self.requestId]
        parseRequest.keyOrders = keyOrders
        let response = try await api.handle(parseRequest)
        var headers = Self.baseHeaders
        if let location = response.location { headers[.location] = location }
        for (name, value) in response.headers { if let field = HTTPField.Name(name) { headers[field] = value } }
        // Files in objects are stored by name; every answer carries their URL.
        let answer = FileService.addingURLs(response.body, base: "\(mountURL)/files/\(FileNames.urlEncode(options.applicationId))/") ?? response.body
        return Response(status: .init(code: response.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(answer))))
    }

    /// Application id, master key, client keys, then the session token (an unknown or expired one is 209).
    func authenticate(_ headers: HTTPFields, _ body: [String: String], ignoresSession: Bool, clientAddress: String?) async throws -> Auth {
        let appId = headers[Self.applicationId] ?? body["_ApplicationId"]
        guard appId == options.applicationId else { throw AccessDenied.unauthorized }
        let master = headers[Self.masterKey] ?? body["_MasterKey"]
        let installationId = headers[Self.installationId] ?? body["_InstallationId"]
        // A master key that is neither key, or that comes from an address outside `masterKeyIps`, is ignored: the
        // request goes on as a client's (Parse Server's rule), so it gets no more than a client would.
        if let master, isValidMasterKey(master, clientAddress: clientAddress) {
            var auth = Auth(isMaster: true, installationId: installationId)
            auth.isReadOnly = master != options.masterKey
            return auth
        }
        // The dashboard's pages: its session cookie together with the CSRF token only it knows.
        if let cookie = headers[.cookie], let session = dashboardSessions.verified(cookie: cookie, csrf: headers[DashboardResponder.csrfHeader]) {
            var auth = Auth(isMaster: true, installationId: installationId)
            auth.isReadOnly = session.readOnly
            return auth
        }
        if options.requiresClientKey {
            let presented: [(String?, String?)] = [
                (headers[Self.restKey], options.restAPIKey), (headers[Self.clientKey], options.clientKey),
                (headers[Self.javascriptKey] ?? body["_JavaScriptKey"], options.javascriptKey), (headers[Self.windowsKey], options.dotNetKey),
            ]
            guard presented.contains(where: { $0.0 != nil && $0.0 == $0.1 }) else { throw AccessDenied.unauthorized }
        }
        var auth = Auth(isMaster: false, installationId: installationId)
        if let token = headers[Self.sessionToken] ?? body["_SessionToken"], !ignoresSession {
            let session = try await api.sessions.resolve(token)
            auth.userId = session.userId
            auth.sessionToken = token
            auth.roles = try await api.roleNames(session.userId)
        }
        return auth
    }

    /// The master key or the read-only master key, from an address `masterKeyIps` allows.
    func isValidMasterKey(_ key: String, clientAddress: String?) -> Bool {
        guard key == options.masterKey || (options.readOnlyMasterKey != nil && key == options.readOnlyMasterKey) else { return false }
        if let allowed = options.security.masterKeyIps, !IPRange.allows(allowed, clientAddress) { return false }
        return true
    }

    /// Whether the request carries a valid master key (headers or the JS SDK's body) or a dashboard sign-in: such
    /// requests are exempt from rate limits unless a rule includes the master key.
    func presentsMasterKey(_ headers: HTTPFields, _ body: [String: String], clientAddress: String?) -> Bool {
        if let master = headers[Self.masterKey] ?? body["_MasterKey"], isValidMasterKey(master, clientAddress: clientAddress) { return true }
        guard let cookie = headers[.cookie] else { return false }
        return dashboardSessions.verified(cookie: cookie, csrf: headers[DashboardResponder.csrfHeader]) != nil
    }

    /// `X-Parse-Cloud-Context` or the body's `_context`: a JSON object (or a string holding one); anything else is 400/107
    /// `Invalid object for context.` as in Parse Server. Its keys pass the same keyword denylist as a body.
    static func cloudContext(_ value: JSONValue) throws -> [String: JSONValue] {
        var parsed = value
        if case .string(let text) = value {
            guard let json = try? JSONParser.parse(text) else { throw malformedContext }
            parsed = json
        }
        guard case .object(let context) = parsed else { throw malformedContext }
        return context
    }

    static let malformedContext = ParseError.invalidJSON("Invalid object for context.")

    /// 119 for a write with the read-only master key (Parse Server's words).
    static func refuseReadOnly(_ auth: Auth, _ operation: String) throws {
        if auth.isReadOnly { throw ParseError(.operationForbidden, "read-only masterKey isn't allowed to perform the \(operation) operation.") }
    }

    /// `a=1&where=%7B...%7D`: each value JSON-decoded when it parses, else kept as a string.
    static func queryParameters(_ query: String) throws -> [(String, JSONValue)] {
        try query.split(separator: "&").compactMap { pair -> (String, JSONValue)? in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0]).replacingPlus().removingPercentEncoding()
            guard !key.isEmpty else { return nil }
            let raw = parts.count > 1 ? String(parts[1]).replacingPlus().removingPercentEncoding() : ""
            if key.utf8.contains(0) || raw.utf8.contains(0) { throw nulRefused }
            if let first = raw.utf8.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || first == UInt8(ascii: "\"")
                || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) || first == UInt8(ascii: "-") || raw == "true" || raw == "false"
                || raw == "null",
                let value = try? JSONParser.parse(raw)
            {
                return (key, value)
            }
            return (key, .string(raw))
        }
    }

    /// A NUL character (U+0000) in a request's path, parameters or JSON: 400, code 107.
    static let nulRefused = ParseError.invalidJSON("Invalid JSON: strings may not contain the NUL character (\\u0000)")

    static let applicationId = HTTPField.Name("X-Parse-Application-Id")!
    static let masterKey = HTTPField.Name("X-Parse-Master-Key")!
    static let restKey = HTTPField.Name("X-Parse-REST-API-Key")!
    static let clientKey = HTTPField.Name("X-Parse-Client-Key")!
    static let javascriptKey = HTTPField.Name("X-Parse-Javascript-Key")!
    static let cloudContext = HTTPField.Name("X-Parse-Cloud-Context")!
    static let windowsKey = HTTPField.Name("X-Parse-Windows-Key")!
    static let sessionToken = HTTPField.Name("X-Parse-Session-Token")!
    static let installationId = HTTPField.Name("X-Parse-Installation-Id")!
    static let requestId = HTTPField.Name("X-Parse-Request-Id")!

    static let baseHeaders: HTTPFields = {
        var h = HTTPFields()
        h[.contentType] = "application/json; charset=utf-8"
        h[.accessControlAllowOrigin] = "*"
        h[.accessControlAllowMethods] = "GET,PUT,POST,DELETE,OPTIONS"
        h[.accessControlAllowHeaders] =
            "X-Parse-Master-Key, X-Parse-REST-API-Key, X-Parse-Javascript-Key, X-Parse-Application-Id, X-Parse-Client-Version, X-Parse-Session-Token, X-Requested-With, X-Parse-Revocable-Session, X-Parse-Request-Id, X-Parse-Client-Key, X-Parse-Installation-Id, X-Parse-Cloud-Context, Content-Type, Pragma, Cache-Control"
        h[.accessControlExposeHeaders] = "X-Parse-Job-Status-Id, X-Parse-Push-Status-Id"
        return h
    }()

    static func preflight() -> Response {
        var headers = baseHeaders
        headers[.contentType] = "text/plain"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "OK")))
    }

    static func json(_ status: Int, _ body: JSONValue) -> Response {
        Response(status: .init(code: status), headers: baseHeaders, body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(body))))
    }
}

extension String {
    /// `+` as a space (form encoding), on the bytes: this runs on every query string parameter.
    func replacingPlus() -> String {
        guard utf8.contains(UInt8(ascii: "+")) else { return self }
        return String(decoding: utf8.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}
