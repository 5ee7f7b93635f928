public import ParsleyCore

/// `POST|GET /functions/:name` and cloud code's `run`: which cloud function, with which parameters (the function's own,
/// free-form; its validator, if any, checks them).
public struct CallFunction: Sendable, Equatable {
    public var functionName: String
    public var params: [String: JSONValue]

    public init(functionName: String, params: [String: JSONValue] = [:]) {
        self.functionName = functionName
        self.params = params
    }

    /// The body's parameters with the query string's merged in (they win), as Parse Server does.
    public init(functionName: String, body: JSONValue?, query: [String: JSONValue]) {
        var params = body?.objectValue ?? [:]
        for (key, value) in query { params[key] = value }
        self.init(functionName: functionName, params: params)
    }
}
