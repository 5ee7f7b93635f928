import ParsleyCore
import ParsleyDomain

/// `GET /aggregate/:className` (master key): `distinct` and `pipeline`, answered as `{"results": [...]}`.
struct AggregateRouter: ParseRouter {
    private var table = RouteTable()

    init(queries: QueryService) {
        table.on(.get, "aggregate/:className") { [queries] req, p in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            return .ok(["results": .array(try await queries.aggregate(p["className"]!, params: req.params, auth: req.auth))])
        }
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        table.handler(for: request)
    }
}
