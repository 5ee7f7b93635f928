/// An object's access control list: who may read and who may write. `*` is everyone, `role:Name` a role,
/// anything else a user id. Stored as the two permission lists `_rperm` / `_wperm`.
public struct ACL: Sendable, Equatable {
    public var readers: [String]
    public var writers: [String]

    public init(readers: [String], writers: [String]) {
        self.readers = readers
        self.writers = writers
    }

    /// - Throws: 123 for anything that is not `{"<who>": {"read": Bool, "write": Bool}}`.
    public init(json: JSONValue) throws(ParseError) {
        guard case .object(let entries) = json else { throw ParseError(.invalidACL, "Invalid ACL") }
        var readers: [String] = [], writers: [String] = []
        for who in entries.keys.sorted() {
            guard !who.isEmpty, case .object(let perms) = entries[who]! else { throw ParseError(.invalidACL, "Invalid ACL") }  // who from keys
            for (perm, flag) in perms {
                guard perm == "read" || perm == "write", case .bool(let allowed) = flag else {
                    throw ParseError(.invalidACL, "invalid permission type.")
                }
                if allowed { if perm == "read" { readers.append(who) } else { writers.append(who) } }
            }
        }
        self.init(readers: readers, writers: writers)
    }

    public var json: JSONValue {
        var o = [String: JSONValue](minimumCapacity: readers.count + writers.count)
        for r in readers { o[r] = Self.readOnly }
        for w in writers { o[w] = o[w] == nil ? Self.writeOnly : Self.readWrite }
        return .object(o)
    }

    private static let readOnly: JSONValue = ["read": true]
    private static let writeOnly: JSONValue = ["write": true]
    private static let readWrite: JSONValue = ["read": true, "write": true]
}
