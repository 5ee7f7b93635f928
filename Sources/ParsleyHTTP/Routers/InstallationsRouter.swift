import ParsleyCore
import ParsleyDomain

/// `/installations[/:objectId]`; `/classes/_Installation` is routed here too.
struct InstallationsRouter: ParseRouter {
    private var table = RouteTable()

    init(installations: InstallationService, objects: ObjectService, queries: QueryService) {
        table.on(.post, "installations") { [installations] req, _ in
            let saved = try await installations.save(try SaveInstallation(decoding: req.body), auth: req.auth)
            if saved.created {
                return ParseResponse(status: 201, body: .object(saved.body), location: "\(req.mountURL)/classes/_Installation/\(saved.objectId)")
            }
            return .ok(saved.body)
        }
        table.on(.get, "installations") { [queries] req, _ in
            return try await ClassesRouter.find(queries, req, className: "_Installation")
        }
        table.on(.get, "installations/:objectId") { [queries] req, p in
            .ok(
                try await queries.get(
                    "_Installation", objectId: try p.require("objectId"), FindOptions(params: req.params, isGet: true), auth: req.auth, triggers: true
                ))
        }
        table.on(.put, "installations/:objectId") { [installations] req, p in
            .ok(try await installations.update(try p.require("objectId"), try UpdateObject(decoding: req.body), auth: req.auth))
        }
        table.on(.delete, "installations/:objectId") { [objects] req, p in
            try await objects.delete("_Installation", objectId: try p.require("objectId"), auth: req.auth, trusted: true)
            return .ok([:])
        }
    }

    var routes: RouteTable { table }
}
