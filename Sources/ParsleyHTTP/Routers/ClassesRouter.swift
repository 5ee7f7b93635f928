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
            try await Self.find(queries, req, className: try p.require("className"))
        }
        table.on(.get, "classes/:className/:objectId") { [queries] req, p in
            let object = try await queries.get(
                try p.require("className"), objectId: try p.require("objectId"), FindOptions(params: req.params, isGet: true), auth: req.auth,
                triggers: true)
            return .ok(object)
        }
        table.on(.post, "classes/:className") { [objects] req, p in
            let className = try p.require("className")
            let created = try await objects.create(className, try CreateObject(decoding: req.body), auth: req.auth)
            let id = created["objectId"]?.stringValue ?? ""
            return ParseResponse(status: 201, body: .object(created), location: "\(req.mountURL)/classes/\(className)/\(id)")
        }
        table.on(.put, "classes/:className/:objectId") { [objects] req, p in
            .ok(
                try await objects.update(
                    try p.require("className"), objectId: try p.require("objectId"), try UpdateObject(decoding: req.body), auth: req.auth))
        }
        table.on(.delete, "classes/:className/:objectId") { [objects] req, p in
            try await objects.delete(try p.require("className"), objectId: try p.require("objectId"), auth: req.auth)
            return .ok([:])
        }
    }

    var routes: RouteTable { table }

    static func find(_ queries: QueryService, _ req: ParseRequest, className: String) async throws -> ParseResponse {
        let page = try await queries.find(className, FindOptions(params: req.params), auth: req.auth, triggers: true)
        var body: [String: JSONValue] = ["results": .array(page.results.map(JSONValue.object))]
        if let count = page.count { body["count"] = .int(Int64(count)) }
        return .ok(body)
    }
}
