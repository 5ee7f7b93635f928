import Foundation
public import ParsleyCore

/// An http(s) URL with a host, as a webhook's `url` must be. - Throws: 143 `invalid hook declaration`.
func webhookURL(_ value: JSONValue?) throws(ParseError) -> String {
    guard let url = value?.stringValue, let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
        throw CloudRuntime.hookError("invalid hook declaration")
    }
    return url
}

/// `POST /hooks/functions` (master key): a cloud function answered by a webhook.
public struct CreateFunctionHook: Sendable, Equatable {
    public var functionName: String
    public var url: String

    public init(functionName: String, url: String) {
        self.functionName = functionName
        self.url = url
    }

    /// - Throws: 143 `invalid hook declaration` without a name or an http(s) URL.
    public init(decoding body: JSONValue?) throws(ParseError) {
        guard let name = body?["functionName"]?.stringValue, !name.isEmpty else { throw CloudRuntime.hookError("invalid hook declaration") }
        self.init(functionName: name, url: try webhookURL(body?["url"]))
    }
}

/// `POST /hooks/triggers` (master key): a class's trigger answered by a webhook.
public struct CreateTriggerHook: Sendable, Equatable {
    public var className: String
    public var triggerName: String
    public var url: String

    public init(className: String, triggerName: String, url: String) {
        self.className = className
        self.triggerName = triggerName
        self.url = url
    }

    /// - Throws: 143 `invalid hook declaration` without a class, with an unknown trigger name or without an http(s) URL.
    public init(decoding body: JSONValue?) throws(ParseError) {
        guard let className = body?["className"]?.stringValue, !className.isEmpty, let triggerName = body?["triggerName"]?.stringValue,
            CloudRuntime.hookTriggerNames.contains(triggerName)
        else { throw CloudRuntime.hookError("invalid hook declaration") }
        self.init(className: className, triggerName: triggerName, url: try webhookURL(body?["url"]))
    }
}

/// `PUT /hooks/functions/:name` and `PUT /hooks/triggers/:className/:triggerName` (master key): remove the hook
/// (`{"__op":"Delete"}`) or move it to a new URL.
public enum ChangeHook: Sendable, Equatable {
    case delete
    case move(url: String)

    /// - Throws: 143 `invalid hook declaration` when it is neither a deletion nor an http(s) URL.
    public init(decoding body: JSONValue?) throws(ParseError) {
        if body?["__op"]?.stringValue == "Delete" {
            self = .delete
        } else {
            self = .move(url: try webhookURL(body?["url"]))
        }
    }
}
