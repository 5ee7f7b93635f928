import ParsleyCore
import ParsleyDomain

/// `POST /push` (master key): queues the push and answers `{"result":true}` with its `_PushStatus` id in
/// `X-Parse-Push-Status-Id`; the push queue sends it (Push/PushService.swift).
struct PushRouter: ParseRouter {
    private var table = RouteTable()

    init(push: PushService) {
        table.master(.post, "push") { [push] req, _ in
            try push.requireConfigured()
            let id = try await push.send(try SendPush(decoding: req.body))
            var response = ParseResponse.ok(["result": true])
            response.headers["X-Parse-Push-Status-Id"] = id
            return response
        }
    }

    var routes: RouteTable { table }
}
