public import ParsleyCore

/// What `_Role` writes must satisfy beyond a generic object write (§8): `name` and `ACL` are required,
/// the name matches `^[0-9a-zA-Z\-_ ]+$` (139) and never changes after creation (136).
public enum RoleRules {
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { b in
                (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
                    || b == UInt8(ascii: " ")
            }
    }

    /// The role name of a create body's fields. - Throws: 111 without a name or an ACL, 139 for a bad name.
    public static func validateCreate(_ o: [String: JSONValue]) throws(ParseError) -> String {
        guard let value = o["name"], !isRemoval(value) else { throw ParseError(.incorrectType, "name is required.") }
        guard case .string(let name) = value else { throw ParseError(.init(rawValue: 139), "A role's name must be a String.") }
        guard isValidName(name) else {
            throw ParseError(.init(rawValue: 139), "A role's name can only contain alphanumeric characters, _, -, and spaces.")
        }
        guard let acl = o["ACL"], !isRemoval(acl) else { throw ParseError(.incorrectType, "ACL is required.") }
        return name
    }

    /// - Parameter currentName: the stored name. - Throws: 111 when the name or ACL is removed, 136 on a rename.
    public static func validateUpdate(_ o: [String: JSONValue], currentName: String?) throws(ParseError) {
        if let value = o["name"] {
            if isRemoval(value) { throw ParseError(.incorrectType, "name is required.") }
            guard case .string(let name) = value, name == currentName else {
                throw ParseError(.changedImmutableField, "A role's name can only be set before it has been saved.")
            }
        }
        if let acl = o["ACL"], isRemoval(acl) { throw ParseError(.incorrectType, "ACL is required.") }
    }

    static func isRemoval(_ value: JSONValue) -> Bool {
        value.isNull || value["__op"]?.stringValue == "Delete"
    }
}
