import ParsleyCore

/// Trigger webhooks, with Parse Server's webhook body (`triggerName`, the caller's
/// `master`/`user`/`installationId`/`headers`/`ip`/`context`, and per kind; save and delete triggers send `object`
/// and `original`, CloudRuntime.swift):
/// - `beforeFind`: `query` (`where`, `limit`, `skip`, `order`, `keys`, `excludeKeys`, `include`, as REST sends them),
///   `count`, `isGet`; an `error` refuses the find, a `success` object with any of those keys replaces them, a
///   `success` array of objects answers the find without querying the database (as a Parse Server 8.3+ `beforeFind`
///   returning objects).
/// - `afterFind`: `objects`; a `success` array is what the find answers.
/// - `beforeLogin`, `afterLogin` (`object`: the user), `afterLogout` (`object`: the session); an `error` from
///   `beforeLogin` refuses the log-in.
/// - file triggers, registered on class `@File`: `file` (`__type: File`, `name`, `url`), `fileSize`, `contentType`,
///   `metadata`, `tags`; a `beforeSave` `success` object with `metadata`/`tags` replaces them; a `beforeFind` or
///   `afterFind` `error` refuses a download, an `afterFind` `success` of `{"forceDownload": true}` makes it an attachment.
extension CloudRuntime {
    /// Parse Server's class name for file triggers.
    static let fileClassName = "@File"

    /// Calls a trigger webhook; its `success` value, or its `error` as a 141. After-save and after-delete calls are
    /// tried three times.
    func callTriggerHook(_ hook: Webhooks.Hook, _ name: TriggerName, caller: CloudCaller, _ fields: [String: JSONValue]) async throws -> JSONValue {
        var body = Self.webhookBody(caller)
        body["triggerName"] = .string(name.rawValue)
        for (key, value) in fields { body[key] = value }
        return try Webhooks.unwrap(try await webhooks.call(hook, body, attempts: name.isAfter ? 3 : 1))
    }

    // MARK: Finds

    func beforeFindWebhook(_ hook: Webhooks.Hook, _ className: String, _ find: FindOptions, isGet: Bool, auth: Auth) async throws
        -> QueryHooks.BeforeFindOutcome
    {
        let answer = try await callTriggerHook(
            hook, .beforeFind, caller: try await caller(auth),
            ["query": .object(Self.queryJSON(className, find)), "count": .bool(find.count), "isGet": .bool(isGet)])
        let screenedAnswer = try screened(answer)
        if case .array(let items) = screenedAnswer {
            return QueryHooks.BeforeFindOutcome(find: find, objects: Self.answered(items.compactMap(\.objectValue), className))
        }
        guard case .object(let changed) = screenedAnswer else { return QueryHooks.BeforeFindOutcome(find: find) }
        var params = Self.queryJSON(className, find)
        params["className"] = nil
        for key in ["where", "limit", "skip", "order", "keys", "excludeKeys", "include"] where changed[key] != nil { params[key] = changed[key] }
        var result = try FindOptions(params: params)
        result.count = find.count
        result.redirectClassNameForKey = find.redirectClassNameForKey
        return QueryHooks.BeforeFindOutcome(find: result)
    }

    func afterFindWebhook(_ hook: Webhooks.Hook, _ className: String, _ objects: [[String: JSONValue]], auth: Auth) async throws -> [[String:
        JSONValue]]
    {
        let listed = objects.map { object -> JSONValue in
            var o = object
            o["className"] = .string(className)
            return .object(o)
        }
        let answer = try await callTriggerHook(hook, .afterFind, caller: try await caller(auth), ["objects": .array(listed)])
        guard case .array(let items) = try screened(answer) else { return objects }
        return items.compactMap { item in
            guard var o = item.objectValue else { return nil }
            if o["className"]?.stringValue == className { o["className"] = nil }
            return o
        }
    }

    /// A query as the JS SDK's `Parse.Query.toJSON()` and REST send it.
    static func queryJSON(_ className: String, _ find: FindOptions) -> [String: JSONValue] {
        var q: [String: JSONValue] = ["className": .string(className), "where": find.whereValue ?? .object([:])]
        if let limit = find.limit { q["limit"] = .int(Int64(limit)) }
        if find.skip > 0 { q["skip"] = .int(Int64(find.skip)) }
        if !find.order.isEmpty { q["order"] = .string(find.order.joined(separator: ",")) }
        if let keys = find.keys { q["keys"] = .string(keys.joined(separator: ",")) }
        if !find.excludeKeys.isEmpty { q["excludeKeys"] = .string(find.excludeKeys.joined(separator: ",")) }
        if !find.include.isEmpty { q["include"] = .string(find.include.joined(separator: ",")) }
        return q
    }

    // MARK: Log-in

    func loginWebhook(_ hook: Webhooks.Hook, _ name: TriggerName, className: String, object: [String: JSONValue], auth: Auth) async throws {
        var o = object
        o["className"] = .string(className)
        _ = try await callTriggerHook(hook, name, caller: try await caller(auth), ["object": .object(o)])
    }

    // MARK: Files

    func fileWebhook(_ hook: Webhooks.Hook, _ name: TriggerName, _ file: CloudFile, url: String?, auth: Auth) async throws {
        var fileJSON: [String: JSONValue] = ["__type": "File", "name": .string(file.name)]
        if let url { fileJSON["url"] = .string(url) }
        var fields: [String: JSONValue] = ["file": .object(fileJSON)]
        if let size = file.size { fields["fileSize"] = .int(size) }
        if let contentType = file.contentType { fields["contentType"] = .string(contentType) }
        if let metadata = file.metadata { fields["metadata"] = metadata }
        if let tags = file.tags { fields["tags"] = tags }
        let answer = try await callTriggerHook(hook, name, caller: try await caller(auth), fields)
        // A find trigger's `success` may force the download (`{"forceDownload": true}`); an `error` refuses it.
        if name == .afterFind, answer["forceDownload"]?.boolValue == true { file.forceDownload = true }
        guard name == .beforeSave, case .object(let changed) = answer else { return }
        if let metadata = changed["metadata"] { file.metadata = metadata }
        if let tags = changed["tags"] { file.tags = tags }
    }
}
