import ParsleyCore
import ParsleyDomain

/// `/hooks/functions[/:name]` and `/hooks/triggers[/:className/:triggerName]` (master key): Parse Server's Hooks API.
/// `GET` answers bare arrays and objects, `POST` creates, `PUT` changes the URL or, with `{"__op":"Delete"}`,
/// deletes (answering `{}`); errors are 143.
struct HooksRouter: ParseRouter {
    private var table = RouteTable()

    init(cloud: CloudRuntime) {
        table.master(.get, "hooks/functions") { [cloud] req, _ in
            try await cloud.reloadWebhooks()
            return ParseResponse(body: .array(cloud.webhooks.functions.map(\.json)))
        }
        table.master(.get, "hooks/functions/:name") { [cloud] req, p in
            return ParseResponse(body: try await cloud.functionHook(try p.require("name")).json)
        }
        table.master(.post, "hooks/functions") { [cloud] req, _ in
            ParseResponse(body: try await cloud.createFunctionHook(try CreateFunctionHook(decoding: req.body)).json)
        }
        table.master(.put, "hooks/functions/:name") { [cloud] req, p in
            return ParseResponse(body: try await cloud.updateFunctionHook(try p.require("name"), try ChangeHook(decoding: req.body))?.json ?? [:])
        }
        table.master(.get, "hooks/triggers") { [cloud] req, _ in
            try await cloud.reloadWebhooks()
            return ParseResponse(body: .array(cloud.webhooks.triggers.map(\.json)))
        }
        table.master(.get, "hooks/triggers/:className/:triggerName") { [cloud] req, p in
            return ParseResponse(body: try await cloud.triggerHook(try p.require("className"), try p.require("triggerName")).json)
        }
        table.master(.post, "hooks/triggers") { [cloud] req, _ in
            ParseResponse(body: try await cloud.createTriggerHook(try CreateTriggerHook(decoding: req.body)).json)
        }
        table.master(.put, "hooks/triggers/:className/:triggerName") { [cloud] req, p in
            return ParseResponse(
                body: try await cloud.updateTriggerHook(try p.require("className"), try p.require("triggerName"), try ChangeHook(decoding: req.body))?
                    .json ?? [:])
        }
    }

    var routes: RouteTable { table }
}
