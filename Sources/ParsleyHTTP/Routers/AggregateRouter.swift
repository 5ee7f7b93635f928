import ParsleyCore
import ParsleyDomain

/// `GET /aggregate/:className` (master key): `distinct` and `pipeline`, answered as `{"results": [...]}`.
struct AggregateRouter: ParseRouter {
    private var table = RouteTable()

    init(queries: QueryService) {
        table.master(.get, "aggregate/:className") { [queries] req, p in
            return .ok(["results": .array(try await queries.aggregate(try p.require("className"), params: req.params, auth: req.auth))])
        }
    }

    var routes: RouteTable { table }
}
