public import Hummingbird
import HTTPTypes
import Logging
import NIOCore
import ParsleyCore
import ParsleyDomain

/// The HTTP edge before routing: decodes Parse's transport conventions (JSON or the JS SDK's `text/plain` bodies with
/// credentials and `_method`, JSON-or-plain query parameters) into a `ParseCall`, rewrites the method, and hands the
/// request to the router (`ParseRoutes`), whose middleware authenticates and applies the rules. CORS on every answer.
public struct ParseTransport: HTTPResponder {
    public typealias Context = ParsleyRequestContext

    let api: ParseAPI
    let options: ParseServerOptions
    let mountPrefix: String
    /// Where the GraphQL API answers (`graphQLPath`), when it is mounted (`mountGraphQL`).
    let graphQLPath: String
    /// The embedded dashboard's sign-ins (its cookie and CSRF token authorize REST calls as the master key).
    let dashboardSessions: DashboardSessions
    /// Requests answered since the start (the dashboard's health page).
    let counters = RequestCounters()
    /// Those counts and the pool's, LiveQuery's and push's, second by second (the dashboard's health charts).
    let history = MetricHistory()
    /// `allowOrigin` and `allowHeaders`, applied to every answer by `ParsleyResponder`.
    let cors: CORSPolicy
    /// The application id as file URLs name it.
    let encodedApplicationId: String
    private let router = RouterHolder()

    public init(api: ParseAPI) {
        self.api = api
        self.options = api.options
        self.cors = CORSPolicy(api.options.security)
        self.encodedApplicationId = FileNames.urlEncode(api.options.applicationId)
        self.dashboardSessions = DashboardSessions(
            idleTimeout: api.options.dashboard.idleTimeout, records: api.services.dashboardSessionRecords)
        var mount = api.options.mountPath
        if !mount.hasPrefix("/") { mount = "/" + mount }
        while mount.count > 1, mount.hasSuffix("/") { mount.removeLast() }
        self.mountPrefix = mount
        self.graphQLPath = Self.graphQLPath(api.options)
        router.responder = ParseRoutes.build(self)
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        if request.method == .options { return Self.preflight() }
        if let graphQL = api.graphQL, request.uri.path == graphQLPath { return await answerGraphQL(request, context: context, service: graphQL) }
        guard let raw = Self.segments(request.uri.path, below: mountPrefix), let responder = router.responder else {
            return Self.json(404, ["code": 101, "error": .string("Cannot \(request.method.rawValue) \(request.uri.path)")])
        }
        if raw == ["health"] { return Self.json(200, ["status": "ok"]) }
        var (request, context) = (request, context)
        do {
            let segments = raw.map { $0.removingPercentEncoding() }
            if segments.first == "files" || segments.first == "apps" || segments.first == options.pages.linkEndpoint {
                // Their bodies are files and forms, never `_method`: the HTTP method is the real one. The router's rate
                // limit middleware sees only Parse calls, so these count here.
                await dashboardSessions.prefetch(cookie: request.headers[.cookie])
                let caller = RateLimitCaller(
                    isMaster: presentsMasterKey(Self.credentials(request.headers, [:]), clientAddress: context.clientAddress),
                    ip: context.clientAddress,
                    sessionToken: request.headers[Self.sessionToken])
                let method = request.method == .head ? "GET" : request.method.rawValue
                try await api.checkRateLimits(method: method, path: segments, caller: caller)
            } else {
                let call = try await decode(request, segments: segments)
                var head = request.head
                head.method = call.method.http
                request = Request(head: head, body: .init(buffer: ByteBuffer()))
                context.call = call
            }
        } catch {
            return AnswerErrors.answer(
                AnswerErrors.normalized(error), request: request, logger: context.logger, sanitize: api.options.enableSanitizedErrorResponse)
        }
        return try await responder.respond(to: request, context: context)
    }

    /// Answers a batch sub-request through the router and its middleware, as the batch's caller.
    func dispatch(_ sub: ParseRequest, within batch: Context) async throws -> ParseResponse {
        var context = Context(logger: batch.logger, remoteAddress: batch.remoteAddress)
        context.clientAddress = batch.clientAddress
        context.forwardedHTTPS = batch.forwardedHTTPS
        context.call = ParseCall(
            method: sub.method, segments: sub.path, params: sub.params, body: sub.body, credentials: batch.call?.credentials ?? Credentials(),
            cloudContext: batch.call?.cloudContext, mountURL: sub.mountURL, headers: batch.call?.headers ?? [:])
        context.auth = sub.auth
        context.sessionResolved = true
        context.rateLimitsCounted = true  // the batch counted every sub-request before any ran
        return try await answerCaptured(sub, context)
    }

    /// Answers one API call in-process (`ParseAPI.handle`): the same router and middleware, `request.auth` as who asks.
    public func handle(_ request: ParseRequest) async throws -> ParseResponse {
        var context = Context(logger: Logger(label: "parsley.api"), remoteAddress: nil)
        context.call = ParseCall(
            method: request.method, segments: request.path, params: request.params, body: request.body, keyOrders: request.keyOrders,
            mountURL: request.mountURL, requestId: request.requestId)
        context.auth = request.auth
        context.sessionResolved = true
        context.rateLimitsCounted = true
        // The caller's request (cloud code's), with this call's mount URL.
        var info = RequestInfo.current
        info.mountURL = request.mountURL
        return try await RequestInfo.$current.withValue(info) { try await answerCaptured(request, context) }
    }

    private func answerCaptured(_ call: ParseRequest, _ context: Context) async throws -> ParseResponse {
        guard let responder = router.responder else { throw RouteNotFound() }
        var context = context
        let capture = CapturedAnswer()
        context.capture = capture
        let path = (mountPrefix == "/" ? "" : mountPrefix) + "/" + call.path.map(Self.escapedSegment).joined(separator: "/")
        let request = Request(head: HTTPRequest(method: call.method.http, scheme: nil, authority: nil, path: path), body: .init(buffer: ByteBuffer()))
        _ = try await responder.respond(to: request, context: context)
        return try capture.get()
    }

    /// A decoded path segment written back for the router (whose parameters are decoded again).
    static func escapedSegment(_ segment: String) -> String { segment.escaping(pathEscapes) }

    static let pathEscapes: [Character: String] = ["%": "%25", "/": "%2F", "?": "%3F", "#": "%23"]

    /// The path's segments below `mount` (still percent-encoded); nil when the path is outside it. Works on
    /// UTF-8 bytes (a `/` is never part of a longer character): this runs for every request.
    static func segments(_ path: String, below mount: String) -> [String]? {
        var rest = path.utf8[...]
        guard rest.starts(with: mount.utf8) else { return nil }
        rest = rest.dropFirst(mount.utf8.count)
        if mount.utf8.last != UInt8(ascii: "/"), let first = rest.first, first != UInt8(ascii: "/") { return nil }
        return rest.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The request as a Parse call: body (JSON, or the JS SDK's `text/plain` JSON with credentials, `_method` and
    /// `_context`), query parameters, credentials, cloud context.
    func decode(_ request: Request, segments: [String]) async throws -> ParseCall {
        var method: ParseRequest.Method
        switch request.method {
        case .get, .head: method = .get
        case .post: method = .post
        case .put, .patch: method = .put
        case .delete: method = .delete
        default: throw ParseError(.commandUnavailable, "Unsupported method \(request.method.rawValue)")
        }
        // NUL is refused everywhere in a Parse call (no backend stores it; see JSONParser). File names answer 122.
        if segments.contains(where: { $0.utf8.contains(0) }) { throw Self.nulRefused }
        let bytes: ByteBuffer
        do {
            bytes = try await request.body.collect(upTo: options.maxRequestBytes)
        } catch {
            throw BodyTooLarge(limit: options.maxRequestBytes)
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
        var params: [String: JSONValue] = [:]
        if method == .get, case .object(let o)? = body {
            params = o
            body = nil
        }
        if let query = request.uri.query {
            for (k, v) in try Self.queryParameters(query) { params[k] = v }
        }
        var call = ParseCall(
            method: method, segments: segments, params: params, body: body, keyOrders: keyOrders,
            credentials: Self.credentials(request.headers, bodyCredentials), cloudContext: cloudContext, mountURL: mountURL(request),
            requestId: request.headers[Self.requestId])
        if api.services.cloud.wantsRequestHeaders {
            // Cloud code's requests carry the headers (lower-case names); other requests skip the copy.
            for field in request.headers { call.headers[field.name.canonicalName] = field.value }
        }
        return call
    }

    /// The keys and tokens of a request: headers first, then the JS SDK's body fields.
    static func credentials(_ headers: HTTPFields, _ body: [String: String]) -> Credentials {
        // One pass over the fields (a lookup per key name built HTTPFields' index on every request); a key sent twice
        // is read the way HTTPFields' lookup reads it, below.
        var found = Credentials()
        var seen: UInt16 = 0
        for field in headers {
            let slot: UInt16
            switch field.name.canonicalName {
            case "x-parse-application-id": slot = 1 << 0
            case "x-parse-master-key": slot = 1 << 1
            case "x-parse-rest-api-key": slot = 1 << 2
            case "x-parse-client-key": slot = 1 << 3
            case "x-parse-javascript-key": slot = 1 << 4
            case "x-parse-windows-key": slot = 1 << 5
            case "x-parse-session-token": slot = 1 << 6
            case "x-parse-installation-id": slot = 1 << 7
            case "cookie": slot = 1 << 8
            case "x-parsley-dashboard-csrf": slot = 1 << 9
            case "x-parse-maintenance-key": slot = 1 << 10
            default: continue
            }
            guard seen & slot == 0 else { return credentialsByLookup(headers, body) }
            seen |= slot
            let value = field.value
            switch slot {
            case 1 << 0: found.applicationId = value
            case 1 << 1: found.masterKey = value
            case 1 << 2: found.restKey = value
            case 1 << 3: found.clientKey = value
            case 1 << 4: found.javascriptKey = value
            case 1 << 5: found.windowsKey = value
            case 1 << 6: found.sessionToken = value
            case 1 << 7: found.installationId = value
            case 1 << 8: found.cookie = value
            case 1 << 9: found.csrf = value
            default: found.maintenanceKey = value
            }
        }
        if !body.isEmpty {
            found.applicationId = found.applicationId ?? body["_ApplicationId"]
            found.masterKey = found.masterKey ?? body["_MasterKey"]
            found.javascriptKey = found.javascriptKey ?? body["_JavaScriptKey"]
            found.sessionToken = found.sessionToken ?? body["_SessionToken"]
            found.installationId = found.installationId ?? body["_InstallationId"]
        }
        return found
    }

    static func credentialsByLookup(_ headers: HTTPFields, _ body: [String: String]) -> Credentials {
        Credentials(
            applicationId: headers[applicationId] ?? body["_ApplicationId"], masterKey: headers[masterKey] ?? body["_MasterKey"],
            restKey: headers[restKey], clientKey: headers[clientKey], javascriptKey: headers[javascriptKey] ?? body["_JavaScriptKey"],
            windowsKey: headers[windowsKey], sessionToken: headers[sessionToken] ?? body["_SessionToken"],
            installationId: headers[installationId] ?? body["_InstallationId"], cookie: headers[.cookie],
            csrf: headers[DashboardResponder.csrfHeader],
            maintenanceKey: headers[maintenanceKey]
        )
    }

    /// Application id, master key, dashboard sign-in and client keys: who is asking, without the session (which
    /// `ResolveSession` adds). A master key that is neither key, or that comes from an address outside `masterKeyIps`,
    /// is ignored: the request goes on as a client's (Parse Server's rule), so it gets no more than a client would.
    func identify(_ credentials: Credentials, clientAddress: String?) throws -> Auth {
        guard credentials.applicationId == options.applicationId else { throw AccessDenied.unauthorized }
        // Parse Server's maintenance key comes first; from an address maintenanceKeyIps does not allow it is ignored
        // (logged), and the request goes on with its other keys.
        if let key = options.security.maintenanceKey, let presented = credentials.maintenanceKey, DashboardSessions.constantTimeEqual(presented, key)
        {
            if IPRange.allows(options.security.maintenanceKeyIps, clientAddress) {
                var auth = Auth(isMaster: false, installationId: credentials.installationId)
                auth.isMaintenance = true
                return auth
            }
            Logger(label: "parsley").error(
                "Request using maintenance key rejected as the request IP address is not set in Parse Server option 'maintenanceKeyIps'.")
        }
        if let master = credentials.masterKey, isValidMasterKey(master, clientAddress: clientAddress) {
            var auth = Auth(isMaster: true, installationId: credentials.installationId)
            auth.isReadOnly = master != options.masterKey
            return auth
        }
        // The dashboard's pages: its session cookie together with the CSRF token only it knows.
        if let cookie = credentials.cookie, let session = dashboardSessions.verified(cookie: cookie, csrf: credentials.csrf) {
            var auth = Auth(isMaster: true, installationId: credentials.installationId)
            auth.isReadOnly = session.readOnly
            return auth
        }
        if options.requiresClientKey {
            let presented: [(String?, String?)] = [
                (credentials.restKey, options.restAPIKey), (credentials.clientKey, options.clientKey),
                (credentials.javascriptKey, options.javascriptKey), (credentials.windowsKey, options.dotNetKey),
            ]
            guard presented.contains(where: { $0.0 != nil && $0.0 == $0.1 }) else { throw AccessDenied.unauthorized }
        }
        return Auth(isMaster: false, installationId: credentials.installationId)
    }

    /// `identify` and the session, for the routes that read their own requests (`/files`).
    func authenticate(_ headers: HTTPFields, _ body: [String: String], ignoresSession: Bool, clientAddress: String?) async throws -> Auth {
        let credentials = Self.credentials(headers, body)
        await dashboardSessions.prefetch(cookie: credentials.cookie)
        var auth = try identify(credentials, clientAddress: clientAddress)
        if !auth.isMaster, !auth.isMaintenance, let token = credentials.sessionToken, !ignoresSession {
            let session = try await api.sessions.resolve(token)
            auth.userId = session.userId
            auth.sessionToken = token
            auth.roles = try await api.roleNames(session.userId)
        }
        return auth
    }

    /// A Parse answer as JSON with CORS headers; files in objects are stored by name, so every answer carries their URL.
    func encode(_ response: ParseResponse, mountURL: String) -> Response {
        var headers = Self.baseHeaders
        if let location = response.location { headers[.location] = location }
        for (name, value) in response.headers { if let field = HTTPField.Name(name) { headers[field] = value } }
        let store = api.services.fileStore
        let app = encodedApplicationId
        // Each File value gets its URL as it is written (built only for the files an answer holds; most hold none).
        let bytes = JSONWriter.bytes(response.body) { store.directURL($0) ?? "\(mountURL)/files/\(app)/" + FileNames.urlEncode($0) }
        return Response(status: .init(code: response.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The master key from an address `masterKeyIps` allows, or the read-only master key from one
    /// `readOnlyMasterKeyIps` allows (`masterKeyIps` when that is not set).
    func isValidMasterKey(_ key: String, clientAddress: String?) -> Bool {
        if key == options.masterKey {
            if let allowed = options.security.masterKeyIps, !IPRange.allows(allowed, clientAddress) { return false }
            return true
        }
        guard let readOnly = options.readOnlyMasterKey, key == readOnly else { return false }
        if let allowed = options.security.readOnlyMasterKeyIps ?? options.security.masterKeyIps, !IPRange.allows(allowed, clientAddress) {
            return false
        }
        return true
    }

    /// Whether the request carries a valid master key (headers or the JS SDK's body) or a dashboard sign-in: such
    /// requests are exempt from rate limits unless a rule includes the master key.
    func presentsMasterKey(_ credentials: Credentials, clientAddress: String?) -> Bool {
        if let master = credentials.masterKey, isValidMasterKey(master, clientAddress: clientAddress) { return true }
        guard let cookie = credentials.cookie else { return false }
        return dashboardSessions.verified(cookie: cookie, csrf: credentials.csrf) != nil
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

    /// `a=1&where=%7B...%7D` (`FormEncoding`): each value JSON-decoded when it parses, else kept as a string.
    static func queryParameters(_ query: String) throws -> [(String, JSONValue)] {
        try FormEncoding.decode(query).map { key, raw in
            if key.utf8.contains(0) || raw.utf8.contains(0) { throw nulRefused }
            if let first = raw.utf8.first,
                first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || first == UInt8(ascii: "\"")
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
    static let uploadMaxSize = HTTPField.Name("X-Parse-Upload-Max-Size")!
    static let masterKey = HTTPField.Name("X-Parse-Master-Key")!
    static let maintenanceKey = HTTPField.Name("X-Parse-Maintenance-Key")!
    static let restKey = HTTPField.Name("X-Parse-REST-API-Key")!
    static let clientKey = HTTPField.Name("X-Parse-Client-Key")!
    static let javascriptKey = HTTPField.Name("X-Parse-Javascript-Key")!
    static let cloudContext = HTTPField.Name("X-Parse-Cloud-Context")!
    static let windowsKey = HTTPField.Name("X-Parse-Windows-Key")!
    static let sessionToken = HTTPField.Name("X-Parse-Session-Token")!
    static let installationId = HTTPField.Name("X-Parse-Installation-Id")!
    static let requestId = HTTPField.Name("X-Parse-Request-Id")!

    static let defaultAllowedHeaders =
        "X-Parse-Master-Key, X-Parse-REST-API-Key, X-Parse-Javascript-Key, X-Parse-Application-Id, X-Parse-Client-Version, "
        + "X-Parse-Session-Token, X-Requested-With, X-Parse-Revocable-Session, X-Parse-Request-Id, X-Parse-Client-Key, "
        + "X-Parse-Installation-Id, X-Parse-Cloud-Context, Content-Type, Pragma, Cache-Control"

    static let baseHeaders: HTTPFields = {
        var h = HTTPFields()
        h[.contentType] = "application/json; charset=utf-8"
        h[.accessControlAllowOrigin] = "*"
        h[.accessControlAllowMethods] = "GET,PUT,POST,DELETE,OPTIONS"
        h[.accessControlAllowHeaders] = defaultAllowedHeaders
        h[.accessControlExposeHeaders] = "X-Parse-Job-Status-Id, X-Parse-Push-Status-Id"
        return h
    }()

    static func preflight() -> Response {
        var headers = baseHeaders
        headers[.contentType] = "text/plain"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "OK")))
    }

    /// A request body over `maxRequestBytes`: 413, code 130.
    struct BodyTooLarge: Error {
        let limit: Int
    }

    static func json(_ status: Int, _ body: JSONValue) -> Response {
        Response(status: .init(code: status), headers: baseHeaders, body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(body))))
    }
}
