public import ParsleyCore

/// `PUT /config` (master key): parameters to set (`{"__op":"Delete"}` removes one) and which are master-key-only.
public struct UpdateConfig: Sendable, Equatable {
    public var params: [String: JSONValue]
    public var masterKeyOnly: [String: JSONValue]

    public init(params: [String: JSONValue], masterKeyOnly: [String: JSONValue] = [:]) {
        self.params = params
        self.masterKeyOnly = masterKeyOnly
    }

    /// - Throws: 107 when `params` is missing or not an object.
    public init(decoding body: JSONValue?) throws(ParseError) {
        guard case .object(let params)? = body?["params"] else { throw ParseError.invalidJSON("params must be an object") }
        self.init(params: params, masterKeyOnly: body?["masterKeyOnly"]?.objectValue ?? [:])
    }
}
