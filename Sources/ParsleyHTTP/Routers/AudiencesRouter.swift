import ParsleyCore
import ParsleyDomain

/// `/push_audiences[/:objectId]` (master key): Parse Dashboard's saved push audiences, objects of `_Audience` with a
/// `name` and a `query` stored as JSON text and answered as an object (as Parse Server does).
struct AudiencesRouter: ParseRouter {
    private var table = RouteTable()

    init(objects: ObjectService, queries: QueryService) {
        table.master(.get, "push_audiences") { [queries] req, _ in
            let page = try await queries.find("_Audience", FindOptions(params: req.params), auth: req.auth)
            return .ok(["results": .array(page.results.map { .object(Self.parsedQuery($0)) })])
        }
        table.master(.get, "push_audiences/:objectId") { [queries] req, p in
            return .ok(Self.parsedQuery(try await queries.get("_Audience", objectId: try p.require("objectId"), FindOptions(), auth: req.auth)))
        }
        table.master(.post, "push_audiences") { [objects] req, _ in
            let created = try await objects.create(
                "_Audience", CreateObject(try Self.storedQuery(try CreateObject(decoding: req.body).fields)), auth: req.auth)
            let id = created["objectId"]?.stringValue ?? ""
            return ParseResponse(status: 201, body: .object(created), location: "\(req.mountURL)/push_audiences/\(id)")
        }
        table.master(.put, "push_audiences/:objectId") { [objects] req, p in
            return .ok(
                try await objects.update(
                    "_Audience", objectId: try p.require("objectId"), UpdateObject(try Self.storedQuery(try UpdateObject(decoding: req.body).fields)),
                    auth: req.auth)
            )
        }
        table.master(.delete, "push_audiences/:objectId") { [objects] req, p in
            try await objects.delete("_Audience", objectId: try p.require("objectId"), auth: req.auth)
            return .ok([:])
        }
    }

    var routes: RouteTable { table }

    /// The body with `query` as JSON text (Parse Dashboard sends it as text; an object is accepted too).
    static func storedQuery(_ fields: [String: JSONValue]) throws -> [String: JSONValue] {
        var o = fields
        switch o["query"] {
        case .object(let query)?: o["query"] = .string(JSONWriter.string(.object(query)))
        case .string(let text)?:
            guard (try? JSONParser.parse(text))?.objectValue != nil else { throw ParseError(.invalidJSON, "query must be a JSON object") }
        default: break
        }
        return o
    }

    /// An audience with its `query` as an object.
    static func parsedQuery(_ audience: [String: JSONValue]) -> [String: JSONValue] {
        var a = audience
        if let text = a["query"]?.stringValue, let query = try? JSONParser.parse(text) { a["query"] = query }
        return a
    }
}
