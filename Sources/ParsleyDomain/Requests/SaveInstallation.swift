public import ParsleyCore

/// `POST /installations`: an installation's fields (a known `installationId` updates it, otherwise one is created).
public struct SaveInstallation: Sendable, Equatable {
    public var fields: [String: JSONValue]

    public init(_ fields: [String: JSONValue]) { self.fields = fields }

    /// A request body. - Throws: 107 when it is not an object.
    public init(decoding body: JSONValue?) throws(ParseError) { fields = try bodyFields(body) }
}
