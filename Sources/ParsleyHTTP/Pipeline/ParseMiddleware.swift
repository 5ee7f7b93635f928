import Hummingbird
import HTTPTypes
import Logging
import ParsleyCore
import ParsleyDomain

// The middleware every Parse API route runs behind, in this order (ParseRoutes.build mounts them):
//   AnswerErrors -> Authenticate -> CountRateLimits -> ResolveSession -> RequestRules -> ClaimIdempotency
//   [-> RequireMasterKey for master-only routes] -> the route.
// A batch sub-request and an in-process call pass through the same chain (their batch's authentication is carried
// over in the context, and a batch counts its sub-requests' rate limits before any runs).

/// Errors to Parse's answers: `{"code","error"}` with Parse Server's status, 403 `{"error":...}` for keys, 429 for rate
/// limits, 404 `Cannot GET /path` where no route answers, 500 (logged) for anything else. For a captured call (batch
/// sub-request, in-process) the error is handed back instead.
struct AnswerErrors: RouterMiddleware {
    typealias Context = ParsleyRequestContext
    /// `enableSanitizedErrorResponse`: sanitizable refusals answer `Permission denied`, their details are logged.
    var sanitize = true

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let error = Self.normalized(error)
            if let capture = context.capture {
                capture.set(.failure(error))
                return Response(status: .noContent)
            }
            return Self.answer(error, request: request, logger: context.logger, sanitize: sanitize)
        }
    }

    /// The detailed message of a sanitized refusal, for the operator (Parse Server logs it as an error).
    static func logDetail(_ message: String, logger: Logger) {
        logger.info("Sanitized error: \(message)")
    }

    /// Hummingbird's "no route" as ours.
    static func normalized(_ error: any Error) -> any Error {
        if let http = error as? HTTPError, http.status == .notFound { return RouteNotFound() }
        return error
    }

    static func answer(_ error: any Error, request: Request, logger: Logger, sanitize: Bool = false) -> Response {
        switch error {
        case let error as ParseError:
            let answered = error.answered(sanitize: sanitize)
            if answered.message != error.message { Self.logDetail(error.message, logger: logger) }
            return ParseTransport.json(error.httpStatus, answered.json)
        case let denied as AccessDenied:
            let message = denied.answered(sanitize: sanitize)
            if message != denied.message { Self.logDetail(denied.message, logger: logger) }
            return ParseTransport.json(403, ["error": .string(message)])
        case let limited as RateLimitExceeded: return ParseTransport.json(429, ["code": 100, "error": .string(limited.message)])
        case let tooLarge as ParseTransport.BodyTooLarge:
            return ParseTransport.json(413, ["code": 130, "error": .string("Request body is larger than \(tooLarge.limit) bytes")])
        case is RouteNotFound:
            return ParseTransport.json(404, ["code": 101, "error": .string("Cannot \(request.method.rawValue) \(request.uri.path)")])
        default:
            logger.error("request failed: \(String(reflecting: error))")
            return ParseTransport.json(500, ["code": 1, "error": "Internal server error."])
        }
    }
}

/// Application id, master key (or the read-only one, from an allowed address), the dashboard's sign-in, client keys:
/// who is asking, before any session is looked up (and `RequestInfo.current`: where the request came from). Parse
/// Server's `handleParseHeaders`.
struct Authenticate: RouterMiddleware {
    typealias Context = ParsleyRequestContext
    let transport: ParseTransport

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let auth = context.auth {
            // A batch's sub-request: the maintenance key's rights follow the sub-request's route.
            guard auth.isMaintenance, let call = context.call else { return try await next(request, context) }
            var context = context
            context.auth = Self.maintenance(auth, segments: call.segments)
            return try await next(request, context)
        }
        guard let call = context.call else { throw RouteNotFound() }
        var context = context
        await transport.dashboardSessions.prefetch(cookie: call.credentials.cookie)
        context.auth = try transport.identify(call.credentials, clientAddress: context.clientAddress)
        if let auth = context.auth, auth.isMaintenance { context.auth = Self.maintenance(auth, segments: call.segments) }
        // Where the request came from, for the domain (RequestInfo.swift): links in mails, change events, cloud code.
        let info = RequestInfo(
            mountURL: call.mountURL, requestId: call.requestId, ip: context.clientAddress, headers: call.headers, context: call.cloudContext ?? [:])
        return try await RequestInfo.$current.withValue(info) { try await next(request, context) }
    }

    /// The maintenance key's rights on a route, as Parse Server gives them: on the object routes (`/classes`, `/users`,
    /// `/sessions`, `/installations`, `/roles`, each object's own path) what the master key may do, ACLs and class-level
    /// permissions not applied; anywhere else no more than a request without keys or session (master-only routes are 403).
    static func maintenance(_ auth: Auth, segments: [String]) -> Auth {
        var auth = auth
        auth.isMaster = false
        guard let first = segments.first, segments.count <= 3 else { return auth }
        switch first {
        case "classes": auth.isMaster = segments.count >= 2
        case "users", "sessions", "installations", "roles":
            auth.isMaster = segments.count == 1 || (segments.count == 2 && segments[1] != "me")
        default: break
        }
        return auth
    }
}

/// Parse Server's `rateLimit` rules, with the request's real method and path, before its session is looked up (a flood
/// of made-up session tokens is counted too).
struct CountRateLimits: RouterMiddleware {
    typealias Context = ParsleyRequestContext
    let limiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if !context.rateLimitsCounted, let call = context.call, let auth = context.auth {
            let caller = RateLimitCaller(isMaster: auth.isMaster, ip: context.clientAddress, sessionToken: call.credentials.sessionToken)
            try await limiter.check(method: call.method.rawValue, path: call.segments, caller: caller)
        }
        return try await next(request, context)
    }
}

/// The session token's user and roles (an unknown, revoked or expired token is 209). `/login` ignores any token it is
/// sent; the master key needs none. Parse Server's `handleParseSession`.
struct ResolveSession: RouterMiddleware {
    typealias Context = ParsleyRequestContext
    let api: ParseAPI

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !context.sessionResolved, let call = context.call, var auth = context.auth else { return try await next(request, context) }
        var context = context
        if !auth.isMaster, !auth.isMaintenance, let token = call.credentials.sessionToken, call.segments != ["login"] {
            let session = try await api.sessions.resolve(token)
            auth.userId = session.userId
            auth.sessionToken = token
            auth.roles = try await api.roleNames(session.userId)
            context.auth = auth
            context.sessionUser?.id = session.userId
        }
        context.sessionResolved = true
        return try await next(request, context)
    }
}

/// Rules on what a request may carry: the read-only master key writes nothing (119, Parse Server's words; it may call
/// cloud functions), and no
/// body, parameter or cloud context holds a denylisted keyword (105). A batch is checked by its sub-requests.
struct RequestRules: RouterMiddleware {
    typealias Context = ParsleyRequestContext
    let denylist: KeywordDenylist

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let call = context.call, let auth = context.auth {
            // Cloud functions may be called (Parse Server 9.5 tells them by `request.isReadOnly`); what they write with
            // the caller's rights is refused there.
            if call.method != .get, auth.isReadOnly, call.segments != ["batch"], !(call.segments.count == 2 && call.segments[0] == "functions") {
                let operation = call.method == .post ? "create" : call.method == .put ? "update" : "delete"
                throw ParseError(.operationForbidden, "read-only masterKey isn't allowed to perform the \(operation) operation.")
            }
            if let body = call.body { try denylist.check(body) }
            for value in call.params.values { try denylist.check(value) }
            if let cloudContext = call.cloudContext { try denylist.check(.object(cloudContext)) }
        }
        return try await next(request, context)
    }
}

/// `idempotencyOptions`: a POST or PUT with an `X-Parse-Request-Id` seen within the ttl is 159 `Duplicate request`.
struct ClaimIdempotency: RouterMiddleware {
    typealias Context = ParsleyRequestContext
    let idempotency: IdempotencyService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let call = context.call, let id = call.requestId, idempotency.applies(method: call.method.rawValue, path: call.segments, requestId: id) {
            try await idempotency.claim(id)
        }
        return try await next(request, context)
    }
}

/// Master-only routes (schemas, hooks, jobs, push, config writes, ...): 403 `unauthorized: master key is required`.
struct RequireMasterKey: RouterMiddleware {
    typealias Context = ParsleyRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.auth?.isMaster == true else { throw AccessDenied.masterKeyRequired }
        return try await next(request, context)
    }
}
