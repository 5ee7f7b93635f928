import Foundation
import ParsleyCore
import ParsleyStorage

/// `/hooks`: webhooks stored in `_Hooks` (through the write pipeline, with the master key; a trigger's class in
/// `triggerClass`, as `className` is a reserved field name), loaded into every
/// node's `Webhooks` registry at start and whenever one node changes them (the `hooks` cache topic).
extension CloudRuntime {
    /// Parse Server's trigger names a webhook may take.
    static let hookTriggerNames: Set<String> = [
        "beforeSave", "afterSave", "beforeDelete", "afterDelete", "beforeFind", "afterFind", "beforeLogin", "afterLogin", "afterLogout",
        "beforePasswordResetRequest", "beforeConnect", "beforeSubscribe", "afterEvent",
    ]

    static func hookError(_ message: String) -> ParseError { ParseError(.webhookError, message) }

    /// Reads `_Hooks` into the registry (and turns change events on when a webhook after-trigger needs them).
    public func reloadWebhooks() async throws {
        let services = try attached()
        guard services.objects.schemas.schema("_Hooks") != nil else {
            webhooks.replace(with: [])
            return
        }
        let rows = try await services.queries.find("_Hooks", FindOptions(params: ["limit": 100_000]), auth: .master).results
        webhooks.replace(with: rows.compactMap(Self.hook(row:)))
        if webhooks.hasAfterTriggers { services.objects.changes.enable() }
    }

    static func hook(row: [String: JSONValue]) -> Webhooks.Hook? {
        guard let url = row["url"]?.stringValue else { return nil }
        return Webhooks.Hook(
            functionName: row["functionName"]?.stringValue, className: row["triggerClass"]?.stringValue, triggerName: row["triggerName"]?.stringValue,
            url: url)
    }

    /// The stored row of a function or trigger hook.
    private func hookRow(function: String? = nil, className: String? = nil, triggerName: String? = nil) async throws -> [String: JSONValue]? {
        let services = try attached()
        guard services.objects.schemas.schema("_Hooks") != nil else { return nil }
        var whereValue: [String: JSONValue] = [:]
        if let function { whereValue["functionName"] = .string(function) }
        if let className { whereValue["triggerClass"] = .string(className) }
        if let triggerName { whereValue["triggerName"] = .string(triggerName) }
        return try await services.queries.find("_Hooks", FindOptions(params: ["where": .object(whereValue), "limit": 1]), auth: .master)
            .results.first
    }

    /// Stores the change, reloads this node's registry and tells the other nodes.
    private func changed() async throws {
        try await reloadWebhooks()
        if let broadcaster = try attached().objects.store.database as? any ChangeBroadcasting { await broadcaster.broadcast("hooks") }
    }

    /// A `PUT` on a stored hook: a deletion removes it (nil), a move changes its URL (the new URL).
    private func change(_ row: [String: JSONValue], _ change: ChangeHook) async throws -> String? {
        guard let id = row["objectId"]?.stringValue else { throw Self.hookError("invalid hook declaration") }
        let objects = try attached().objects
        switch change {
        case .delete:
            try await objects.delete("_Hooks", objectId: id, auth: .master)
            try await changed()
            return nil
        case .move(let url):
            _ = try await objects.update("_Hooks", objectId: id, ["url": .string(url)], auth: .master)
            try await changed()
            return url
        }
    }

    public func functionHook(_ name: String) async throws -> Webhooks.Hook {
        guard let row = try await hookRow(function: name), let hook = Self.hook(row: row) else {
            throw Self.hookError("no function named: \(name) is defined")
        }
        return hook
    }

    public func createFunctionHook(_ hook: CreateFunctionHook) async throws -> Webhooks.Hook {
        let (name, url) = (hook.functionName, hook.url)
        if try await hookRow(function: name) != nil { throw Self.hookError("function name: \(name) already exists") }
        _ = try await attached().objects.create("_Hooks", ["functionName": .string(name), "url": .string(url)], auth: .master)
        try await changed()
        return Webhooks.Hook(functionName: name, url: url)
    }

    /// `PUT /hooks/functions/:name`: a new URL, or `{"__op":"Delete"}` (answers nil).
    public func updateFunctionHook(_ name: String, _ change: ChangeHook) async throws -> Webhooks.Hook? {
        guard let row = try await hookRow(function: name) else { throw Self.hookError("no function named: \(name) is defined") }
        return try await self.change(row, change).map { Webhooks.Hook(functionName: name, url: $0) }
    }

    public func triggerHook(_ className: String, _ triggerName: String) async throws -> Webhooks.Hook {
        guard let row = try await hookRow(className: className, triggerName: triggerName), let hook = Self.hook(row: row) else {
            throw Self.hookError("class \(className) does not exist")
        }
        return hook
    }

    public func createTriggerHook(_ hook: CreateTriggerHook) async throws -> Webhooks.Hook {
        let (className, triggerName, url) = (hook.className, hook.triggerName, hook.url)
        if try await hookRow(className: className, triggerName: triggerName) != nil {
            throw Self.hookError("class \(className) already has trigger \(triggerName)")
        }
        _ = try await attached().objects.create(
            "_Hooks", ["triggerClass": .string(className), "triggerName": .string(triggerName), "url": .string(url)], auth: .master)
        try await changed()
        return Webhooks.Hook(className: className, triggerName: triggerName, url: url)
    }

    /// `PUT /hooks/triggers/:className/:triggerName`: a new URL, or `{"__op":"Delete"}` (answers nil).
    public func updateTriggerHook(_ className: String, _ triggerName: String, _ change: ChangeHook) async throws -> Webhooks.Hook? {
        guard let row = try await hookRow(className: className, triggerName: triggerName) else {
            throw Self.hookError("class \(className) does not exist")
        }
        return try await self.change(row, change).map { Webhooks.Hook(className: className, triggerName: triggerName, url: $0) }
    }
}
