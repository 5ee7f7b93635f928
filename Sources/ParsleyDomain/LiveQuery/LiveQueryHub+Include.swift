import Logging
import ParsleyCore

extension LiveQueryHub {
    /// `object` and `original` (as the subscriber receives them) with the subscription's `include` paths resolved as
    /// a find's `include` resolves them for `auth`: only objects the subscriber may read at the time of the event (ACL,
    /// CLP, protected fields, at every level; arrays of pointers too), the rest left out as on REST. One batched read
    /// per event and view (`view`: the versions, hidden fields and keys; with the subscriber's principals and the
    /// paths), shared by every subscriber of that view; nil `view` (objects shaped per subscriber) reads for each.
    func included(
        _ object: [String: JSONValue], _ original: [String: JSONValue]?, _ s: LiveSubscription, view: String?, scope: EventScope, auth: Auth
    ) async -> ([String: JSONValue], [String: JSONValue]?) {
        let key = view.map { $0 + "|" + (auth.principals?.sorted().joined(separator: ",") ?? "*") + "|" + s.include.joined(separator: ",") }
        if let key, let known = scope.included[key] { return known }
        var objects = [object] + (original.map { [$0] } ?? [])
        do {
            let keys = QueryService.IncludeKeys(keys: s.keys?.map(QueryService.components), excludeKeys: [])
            try await queries.include(
                &objects, schema: scope.schema, paths: s.include.map(QueryService.components), keys: keys, auth: auth, depth: 0)
        } catch {
            // A refused include (the target class's CLP) is 119 for a REST find; an event is not refused for it: its
            // pointers stay unresolved.
            logger.debug("LiveQuery include not resolved", metadata: ["class": .string(scope.schema.className), "error": "\(error)"])
        }
        let answer = (objects[0], original == nil ? nil : objects[1])
        if let key { scope.included[key] = answer }
        return answer
    }
}
