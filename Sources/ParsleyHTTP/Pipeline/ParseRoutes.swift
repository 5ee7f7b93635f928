import Hummingbird
import HTTPTypes
import NIOCore
import ParsleyCore
import ParsleyDomain

/// The server's one Hummingbird `Router`: every resource's route table under the mount, behind the middleware chain
/// (ParseMiddleware.swift), master-only routes in a group that requires the master key, `/batch` dispatching its
/// sub-requests through this same router, and `/files` and the `/apps` pages, which read their own bodies.
enum ParseRoutes {
    typealias Context = ParsleyRequestContext

    static func build(_ transport: ParseTransport) -> RouterResponder<Context> {
        let api = transport.api
        let router = Router(context: Context.self)
        router.add(middleware: AnswerErrors(sanitize: api.options.enableSanitizedErrorResponse))
        let base = RouterPath(transport.mountPrefix == "/" ? "" : transport.mountPrefix)

        // Streams and pages: their own bodies and credentials (Routers/FilesRouter.swift, Routers/EmailRouter.swift).
        let raw = router.group(base)
        for method: HTTPRequest.Method in [.get, .head, .post, .delete] {
            for pattern in ["files", "files/**"] {
                raw.on(RouterPath(pattern), method: method) { request, context in
                    let segments = ParseTransport.segments(request.uri.path, below: transport.mountPrefix)?.map { $0.removingPercentEncoding() } ?? []
                    return try await transport.files(request, segments: segments, clientAddress: context.clientAddress)
                }
            }
        }

        // The Parse API: who is asking, rate limits, the session, what a request may carry, idempotency.
        let parse = router.group(base).add(middleware: Authenticate(transport: transport))
        if let limiter = api.limiter { parse.add(middleware: CountRateLimits(limiter: limiter)) }
        parse.add(middleware: ResolveSession(api: api)).add(middleware: RequestRules(denylist: api.options.security.keywordDenylist))
        if let idempotency = api.idempotency { parse.add(middleware: ClaimIdempotency(idempotency: idempotency)) }
        for resource in api.resources {
            let (routes, pages) = collections(resource.routes, transport)
            parse.addRoutes(routes)
            raw.addRoutes(pages)
        }
        parse.on("batch", method: .post) { request, context in
            let call = try context.parseRequest()
            let response = try await api.batch.run(call) { sub in try await transport.dispatch(sub, within: context) }
            return transport.encode(response, mountURL: call.mountURL)
        }
        return router.buildResponder()
    }

    /// A resource's routes as a `RouteCollection` (master-only ones in a group that requires the master key), and its
    /// pages under `/apps` (opened from mails: no keys, form bodies, HTML answers).
    static func collections(_ table: RouteTable, _ transport: ParseTransport) -> (routes: RouteCollection<Context>, pages: RouteCollection<Context>) {
        let routes = RouteCollection(context: Context.self)
        let master = routes.group().add(middleware: RequireMasterKey())
        let pages = RouteCollection(context: Context.self)
        let pagesPrefix = transport.api.options.pages.linkEndpoint + "/"
        for route in table.rows {
            if route.pattern.hasPrefix("apps/") || route.pattern.hasPrefix(pagesPrefix) {
                pages.on(RouterPath(route.pattern), method: route.method.http) { request, context in
                    try await transport.page(request, route: route, parameters: PathParameters(context.parameters))
                }
                continue
            }
            for pattern in [route.pattern] + aliases(of: route.pattern) {
                let methods: any RouterMethods<Context> = route.masterOnly ? master : routes
                methods.on(RouterPath(pattern), method: route.method.http) { _, context in try await answer(route, transport, context) }
            }
        }
        return (routes, pages)
    }

    /// `classes/_User/...` for `users/...` (and `_Session`, `_Installation`).
    static func aliases(of pattern: String) -> [String] {
        for (resource, alias) in ParseAPI.classAliases where pattern == resource || pattern.hasPrefix(resource + "/") {
            return [alias + pattern.dropFirst(resource.count)]
        }
        return []
    }

    /// Runs a route's handler on the decoded call: its answer encoded, or handed to a batch or an in-process caller.
    static func answer(_ route: RouteTable.Route, _ transport: ParseTransport, _ context: Context) async throws -> Response {
        let call = try context.parseRequest()
        let response = try await route.handler(call, PathParameters(context.parameters))
        if let capture = context.capture {
            capture.set(.success(response))
            return Response(status: .noContent)
        }
        return transport.encode(response, mountURL: call.mountURL)
    }
}

extension ParsleyRequestContext {
    /// The decoded call with who is asking, as route handlers take it.
    func parseRequest() throws -> ParseRequest {
        guard let call, let auth else { throw RouteNotFound() }
        var request = ParseRequest(
            method: call.method, path: call.segments, params: call.params, body: call.body, auth: auth, mountURL: call.mountURL)
        request.requestId = call.requestId
        request.keyOrders = call.keyOrders
        return request
    }
}

extension PathParameters {
    /// Hummingbird's captured parameters, percent-decoded.
    init(_ parameters: Parameters) {
        var values: [String: String] = [:]
        for (key, value) in parameters { values[String(key)] = String(value).removingPercentEncoding() }
        self.init(values: values)
    }
}

extension ParseRequest.Method {
    var http: HTTPRequest.Method {
        switch self {
        case .get: .get
        case .post: .post
        case .put: .put
        case .delete: .delete
        }
    }
}

/// The router, built once the transport that its routes call exists (set once in `ParseTransport.init`, before any
/// request: reads need no lock).
final class RouterHolder: @unchecked Sendable {
    var responder: RouterResponder<ParsleyRequestContext>?
}
