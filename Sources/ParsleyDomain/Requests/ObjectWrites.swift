public import ParsleyCore

/// The fields of a body that must be a JSON object: an absent body is an empty object, anything else is 107.
func bodyFields(_ body: JSONValue?) throws(ParseError) -> [String: JSONValue] {
    switch body {
    case nil: return [:]
    case .object(let fields)?: return fields
    default: throw ParseError.invalidJSON("The request body must be a JSON object")
    }
}

/// A write's body: fields holding values or operations, decoded once from a body that must be a JSON object (an
/// absent body is an empty object, anything else is 107). `CreateObject` and `UpdateObject` differ only in which
/// service call takes them.
public protocol ObjectWriteBody: Sendable, Equatable, ExpressibleByDictionaryLiteral
where Key == String, Value == JSONValue {
    var fields: [String: JSONValue] { get set }
    init(_ fields: [String: JSONValue])
}

extension ObjectWriteBody {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// A request body. - Throws: 107 when it is not an object.
    public init(decoding body: JSONValue?) throws(ParseError) { self.init(try bodyFields(body)) }

    /// The fields as the write pipeline and hooks take them.
    public var json: JSONValue { .object(fields) }
}

/// `POST /classes/:className` (and every other create): the new object's fields, values or operations.
public struct CreateObject: ObjectWriteBody {
    public var fields: [String: JSONValue]
    public init(_ fields: [String: JSONValue]) { self.fields = fields }
}

/// `PUT /classes/:className/:objectId` (and every other update): the changed fields, values or operations
/// (`{"__op":"Increment","amount":1}`).
public struct UpdateObject: ObjectWriteBody {
    public var fields: [String: JSONValue]
    public init(_ fields: [String: JSONValue]) { self.fields = fields }
}
