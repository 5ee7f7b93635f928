public import ParsleyCore

/// The fields of a body that must be a JSON object: an absent body is an empty object, anything else is 107.
func bodyFields(_ body: JSONValue?) throws(ParseError) -> [String: JSONValue] {
    switch body {
    case nil: return [:]
    case .object(let fields)?: return fields
    default: throw ParseError.invalidJSON("The request body must be a JSON object")
    }
}

/// `POST /classes/:className` (and every other create): the new object's fields, values or operations, decoded once.
public struct CreateObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public var fields: [String: JSONValue]

    public init(_ fields: [String: JSONValue]) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.fields = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }

    /// A request body. - Throws: 107 when it is not an object.
    public init(decoding body: JSONValue?) throws(ParseError) { fields = try bodyFields(body) }

    /// The fields as the write pipeline and hooks take them.
    public var json: JSONValue { .object(fields) }
}

/// `PUT /classes/:className/:objectId` (and every other update): the changed fields, values or operations
/// (`{"__op":"Increment","amount":1}`), decoded once.
public struct UpdateObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public var fields: [String: JSONValue]

    public init(_ fields: [String: JSONValue]) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.fields = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }

    /// A request body. - Throws: 107 when it is not an object.
    public init(decoding body: JSONValue?) throws(ParseError) { fields = try bodyFields(body) }

    /// The fields as the write pipeline and hooks take them.
    public var json: JSONValue { .object(fields) }
}
