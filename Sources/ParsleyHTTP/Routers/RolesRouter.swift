import ParsleyCore
import ParsleyDomain

/// `/roles[/:objectId]` and `/classes/_Role[/:objectId]`: the same role rules for both paths (§8). Writes go
/// through `ObjectService` with the caller's auth, so the role's ACL and the `_Role` CLP apply; every write
/// clears the role cache.
struct RolesRouter: ParseRouter {
    let roles: RoleService
    let objects: ObjectService
    let queries: QueryService
    private var table = RouteTable()

    init(roles: RoleService, objects: ObjectService, queries: QueryService) {
        self.roles = roles
        self.objects = objects
        self.queries = queries
        for base in ["roles", "classes/_Role"] {
            table.on(.get, base) { [queries] req, _ in
                let page = try await queries.find("_Role", FindOptions(params: req.params), auth: req.auth, triggers: true)
                var body: [String: JSONValue] = ["results": .array(page.results.map(JSONValue.object))]
                if let count = page.count { body["count"] = .int(Int64(count)) }
                return .ok(body)
            }
            table.on(.get, base + "/:objectId") { [queries] req, p in
                .ok(
                    try await queries.get(
                        "_Role", objectId: try p.require("objectId"), FindOptions(params: req.params, isGet: true), auth: req.auth, triggers: true))
            }
            table.on(.post, base) { [roles, objects, queries] req, _ in
                let created = try await roles.create(try CreateRole(decoding: req.body), auth: req.auth, objects: objects, queries: queries)
                let id = created["objectId"]?.stringValue ?? ""
                return ParseResponse(status: 201, body: .object(created), location: "\(req.mountURL)/\(base)/\(id)")
            }
            table.on(.put, base + "/:objectId") { [roles, objects, queries] req, p in
                .ok(try await Self.update(req, objectId: try p.require("objectId"), roles: roles, objects: objects, queries: queries))
            }
            table.on(.delete, base + "/:objectId") { [roles, objects] req, p in
                let outcome: Result<Void, any Error>
                do {
                    outcome = .success(try await objects.delete("_Role", objectId: try p.require("objectId"), auth: req.auth, trusted: true))
                } catch {
                    outcome = .failure(error)
                }
                await roles.invalidate()
                try outcome.get()
                return .ok([:])
            }
        }
    }

    var routes: RouteTable { table }

    static func update(
        _ req: ParseRequest, objectId: String, roles: RoleService, objects: ObjectService, queries: QueryService
    ) async throws -> [String: JSONValue] {
        let changes = try UpdateObject(decoding: req.body)
        if changes.fields["name"] != nil {
            // Only a caller who may write the role learns that its name is immutable; others get 101.
            let stored = try? await queries.get("_Role", objectId: objectId, FindOptions(), auth: .master)
            guard let stored, Self.isWritable(stored, by: req.auth) else { throw ParseError.objectNotFound() }
            try RoleRules.validateUpdate(changes.fields, currentName: stored["name"]?.stringValue)
        } else {
            try RoleRules.validateUpdate(changes.fields, currentName: nil)
        }
        let outcome: Result<[String: JSONValue], any Error>
        do {
            outcome = .success(
                try await objects.update("_Role", objectId: objectId, changes, auth: req.auth, rules: .init(trusted: true)))
        } catch {
            outcome = .failure(error)
        }
        await roles.invalidate()
        return try outcome.get()
    }

    static func isWritable(_ object: [String: JSONValue], by auth: Auth) -> Bool {
        guard let principals = auth.principals else { return true }
        guard let acl = object["ACL"], let writers = try? ACL(json: acl).writers else { return true }
        return writers.contains(where: principals.contains)
    }
}
