import ParsleyCore
import ParsleyDomain

/// The small app-level endpoints: `/config`, `/functions/:name` (cloud code's functions), `/jobs` (none yet:
/// Parse's "invalid job"), `/events/:name` (analytics, accepted and dropped), `/purge/:className`.
struct AppRouter: ParseRouter {
    private var table = RouteTable()

    init(config: ConfigService, objects: ObjectService, cloud: CloudRuntime) {
        table.on(.get, "config") { [config] req, _ in .ok(try await config.get(auth: req.auth)) }
        table.on(.put, "config") { [config] req, _ in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            try await config.update(req.bodyObject)
            return .ok(["result": true])
        }
        for method in [ParseRequest.Method.post, .get] {
            // The body's parameters with the query string's merged in (they win), as Parse Server does.
            table.on(method, "functions/:name") { [cloud] req, p in
                var params = req.body?.objectValue ?? [:]
                for (k, v) in req.params { params[k] = v }
                return .ok(["result": try await cloud.run(function: p["name"]!, params: params, auth: req.auth)])  // pattern guarantees the key
            }
        }
        table.on(.post, "jobs") { req, _ in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            throw ParseError(.scriptFailed, "Invalid job.")
        }
        table.on(.post, "jobs/:name") { req, _ in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            throw ParseError(.scriptFailed, "Invalid job.")
        }
        table.on(.post, "events/:name") { _, _ in .ok([:]) }
        table.on(.delete, "purge/:className") { [objects] req, p in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            try await objects.purge(p["className"]!)
            return .ok([:])
        }
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        table.handler(for: request)
    }
}

/// `/installations[/:objectId]`; `/classes/_Installation` is routed here too.
struct InstallationsRouter: ParseRouter {
    private var table = RouteTable()

    init(installations: InstallationService, objects: ObjectService, queries: QueryService) {
        table.on(.post, "installations") { [installations] req, _ in
            let saved = try await installations.save(req.bodyObject, auth: req.auth)
            if saved.created {
                return ParseResponse(status: 201, body: .object(saved.body), location: "\(req.mountURL)/classes/_Installation/\(saved.objectId)")
            }
            return .ok(saved.body)
        }
        table.on(.get, "installations") { [queries] req, _ in
            return try await ClassesRouter.find(queries, req, className: "_Installation")
        }
        table.on(.get, "installations/:objectId") { [queries] req, p in
            .ok(try await queries.get("_Installation", objectId: p["objectId"]!, FindOptions(params: req.params, isGet: true), auth: req.auth))
        }
        table.on(.put, "installations/:objectId") { [installations] req, p in
            .ok(try await installations.update(p["objectId"]!, body: req.bodyObject, auth: req.auth))
        }
        table.on(.delete, "installations/:objectId") { [objects] req, p in
            try await objects.delete("_Installation", objectId: p["objectId"]!, auth: req.auth, trusted: true)
            return .ok([:])
        }
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        table.handler(for: request)
    }
}
