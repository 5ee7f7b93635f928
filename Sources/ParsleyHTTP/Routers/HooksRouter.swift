import ParsleyCore
import ParsleyDomain

/// `/hooks/functions[/:name]` and `/hooks/triggers[/:className/:triggerName]` (master key): Parse Server's Hooks API.
/// `GET` answers bare arrays and objects, `POST` creates, `PUT` changes the URL or, with `{"__op":"Delete"}`,
/// deletes (answering `{}`); errors are 143.
struct HooksRouter: ParseRouter {
    private var table = RouteTable()

    init(cloud: CloudRuntime) {
        table.on(.get, "hooks/functions") { [cloud] req, _ in
            try Self.master(req)
            try await cloud.reloadWebhooks()
            return ParseResponse(body: .array(cloud.webhooks.functions.map(\.json)))
        }
        table.on(.get, "hooks/functions/:name") { [cloud] req, p in
            try Self.master(req)
            return ParseResponse(body: try await cloud.functionHook(p["name"]!).json)
        }
        table.on(.post, "hooks/functions") { [cloud] req, _ in
            try Self.master(req)
            return ParseResponse(body: try await cloud.createFunctionHook(req.bodyObject.objectValue ?? [:]).json)
        }
        table.on(.put, "hooks/functions/:name") { [cloud] req, p in
            try Self.master(req)
            return ParseResponse(body: try await cloud.updateFunctionHook(p["name"]!, req.bodyObject.objectValue ?? [:])?.json ?? [:])
        }
        table.on(.get, "hooks/triggers") { [cloud] req, _ in
            try Self.master(req)
            try await cloud.reloadWebhooks()
            return ParseResponse(body: .array(cloud.webhooks.triggers.map(\.json)))
        }
        table.on(.get, "hooks/triggers/:className/:triggerName") { [cloud] req, p in
            try Self.master(req)
            return ParseResponse(body: try await cloud.triggerHook(p["className"]!, p["triggerName"]!).json)
        }
        table.on(.post, "hooks/triggers") { [cloud] req, _ in
            try Self.master(req)
            return ParseResponse(body: try await cloud.createTriggerHook(req.bodyObject.objectValue ?? [:]).json)
        }
        table.on(.put, "hooks/triggers/:className/:triggerName") { [cloud] req, p in
            try Self.master(req)
            return ParseResponse(
                body: try await cloud.updateTriggerHook(p["className"]!, p["triggerName"]!, req.bodyObject.objectValue ?? [:])?.json ?? [:])
        }
    }

    static func master(_ req: ParseRequest) throws {
        guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        table.handler(for: request)
    }
}
