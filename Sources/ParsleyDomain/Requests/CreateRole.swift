public import ParsleyCore

/// `POST /roles`: a role's name (checked by `RoleRules`), its ACL and any other fields (`users`, `roles` relations).
public struct CreateRole: Sendable, Equatable {
    public var name: String
    /// Every field of the body, `name` and `ACL` included.
    public var fields: [String: JSONValue]

    /// A request body. - Throws: 107 not an object, 111 without a name or an ACL, 139 for a bad name.
    public init(decoding body: JSONValue?) throws(ParseError) {
        fields = try bodyFields(body)
        name = try RoleRules.validateCreate(fields)
    }
}
