import ParsleyCore
import ParsleyDomain

/// `/push_audiences[/:objectId]` (master key): Parse Dashboard's saved push audiences, objects of `_Audience` with a
/// `name` and a `query` stored as JSON text and answered as an object (as Parse Server does).
struct AudiencesRouter: ParseRouter {
    private var table = RouteTable()

    init(objects: ObjectService, queries: QueryService) {
        table.on(.get, "push_audiences") { [queries] req, _ in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            let page = try await queries.find("_Audience", FindOptions(params: req.params), auth: req.auth)
            return .ok(["results": .array(page.results.map { .object(Self.parsedQuery($0)) })])
        }
        table.on(.get, "push_audiences/:objectId") { [queries] req, p in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            return .ok(Self.parsedQuery(try await queries.get("_Audience", objectId: p["objectId"]!, FindOptions(), auth: req.auth)))
        }
        table.on(.post, "push_audiences") { [objects] req, _ in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            let created = try await objects.create("_Audience", body: try Self.storedQuery(req.bodyObject), auth: req.auth)
            let id = created["objectId"]?.stringValue ?? ""
            return ParseResponse(status: 201, body: .object(created), location: "\(req.mountURL)/push_audiences/\(id)")
        }
        table.on(.put, "push_audiences/:objectId") { [objects] req, p in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            return .ok(try await objects.update("_Audience", objectId: p["objectId"]!, body: try Self.storedQuery(req.bodyObject), auth: req.auth))
        }
        table.on(.delete, "push_audiences/:objectId") { [objects] req, p in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            try await objects.delete("_Audience", objectId: p["objectId"]!, auth: req.auth)
            return .ok([:])
        }
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        table.handler(for: request)
    }

    /// The body with `query` as JSON text (Parse Dashboard sends it as text; an object is accepted too).
    static func storedQuery(_ body: JSONValue) throws -> JSONValue {
        guard case .object(var o) = body else { return body }
        switch o["query"] {
        case .object?: o["query"] = .string(JSONWriter.string(o["query"]!))
        case .string(let text)?:
            guard (try? JSONParser.parse(text))?.objectValue != nil else { throw ParseError(.invalidJSON, "query must be a JSON object") }
        default: break
        }
        return .object(o)
    }

    /// An audience with its `query` as an object.
    static func parsedQuery(_ audience: [String: JSONValue]) -> [String: JSONValue] {
        var a = audience
        if let text = a["query"]?.stringValue, let query = try? JSONParser.parse(text) { a["query"] = query }
        return a
    }
}
