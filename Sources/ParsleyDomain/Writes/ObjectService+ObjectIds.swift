public import ParsleyCore
import ParsleyStorage

/// Parse Server's `allowCustomObjectId` and `objectIdSize`: whose id a new object gets.
extension ObjectService {
    /// The id of a new object and the body without it. With `allowCustomObjectId` a body's `objectId` is the new
    /// object's (present but empty or null: 104 `objectId must not be empty, null or undefined`, as Parse Server);
    /// without it an `objectId` in the body is 105, as before. Else a new random id of `objectIdSize` characters.
    public func newObjectId(_ body: JSONValue, given: String? = nil) throws(ParseError) -> (String, JSONValue) {
        if let given { return (given, body) }
        guard options.allowCustomObjectId, case .object(var fields) = body, let value = fields.removeValue(forKey: "objectId") else {
            return (ObjectID.make(length: options.objectIdSize), body)
        }
        let id = try Self.customObjectId(value)
        return (id, .object(fields))
    }

    /// A client's `objectId`: a non-empty string.
    public static func customObjectId(_ value: JSONValue) throws(ParseError) -> String {
        switch value {
        case .string(let s) where !s.isEmpty:
            guard s.utf8.count <= 256, !s.utf8.contains(0) else { throw ParseError(.invalidKeyName, "objectId is too long or holds a NUL") }
            return s
        case .null, .string, .bool(false), .int(0): throw ParseError(.missingObjectId, "objectId must not be empty, null or undefined")
        default: throw ParseError(.invalidKeyName, "objectId must be a string")
        }
    }

    /// An id that is already taken (a client's own, `allowCustomObjectId`): 137, Parse Server's answer for a duplicate.
    static func mappingDuplicateId(_ insert: () async throws -> Void) async throws {
        do {
            try await insert()
        } catch StoreError.uniqueViolation(let index) where index.hasSuffix("_pkey") {
            throw ParseError(.duplicateValue, "A duplicate value for a field with unique values was provided")
        }
    }
}
