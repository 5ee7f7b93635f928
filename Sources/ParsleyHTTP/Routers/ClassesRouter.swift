import ParsleyCore
import ParsleyDomain

/// `/classes/:className[/:objectId]`: find, get, create, update, delete.
struct ClassesRouter: ParseRouter {
    let objects: ObjectService
    let queries: QueryService
    private var table = RouteTable()

    init(objects: ObjectService, queries: QueryService) {
        self.objects = objects
        self.queries = queries
        table.on(.get, "classes/:className") { [queries] req, p in
            try await Self.find(queries, req, className: p["className"]!)  // pattern guarantees the key
        }
        table.on(.get, "classes/:className/:objectId") { [queries] req, p in
            let object = try await queries.get(p["className"]!, objectId: p["objectId"]!, FindOptions(params: req.params, isGet: true), auth: req.auth, triggers: true)
            return .ok(object)
        }
        table.on(.post, "classes/:className") { [objects] req, p in
            let className = p["className"]!
            let created = try await objects.create(className, body: req.bodyObject, auth: req.auth)
            let id = created["objectId"]?.stringValue ?? ""
            return ParseResponse(status: 201, body: .object(created), location: "\(req.mountURL)/classes/\(className)/\(id)")
        }
        table.on(.put, "classes/:className/:objectId") { [objects] req, p in
            .ok(try await objects.update(p["className"]!, objectId: p["objectId"]!, body: req.bodyObject, auth: req.auth))
        }
        table.on(.delete, "classes/:className/:objectId") { [objects] req, p in
            try await objects.delete(p["className"]!, objectId: p["objectId"]!, auth: req.auth)
            return .ok([:])
        }
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        table.handler(for: request)
    }

    static func find(_ queries: QueryService, _ req: ParseRequest, className: String) async throws -> ParseResponse {
        let page = try await queries.find(className, FindOptions(params: req.params), auth: req.auth, triggers: true)
        var body: [String: JSONValue] = ["results": .array(page.results.map(JSONValue.object))]
        if let count = page.count { body["count"] = .int(Int64(count)) }
        return .ok(body)
    }
}
