import Foundation

/// Parse Server's names for a class's GraphQL types and fields (docs/graphql-contract.md §2), Relay global ids and
/// connection cursors (§3, §4.4).
enum GraphQLNames {
    /// `G(C)`: one leading `_` dropped, the first character upper-cased (`_User` → `User`, `gameScore` → `GameScore`).
    static func typeName(_ className: String) -> String {
        let name = className.hasPrefix("_") ? String(className.dropFirst()) : className
        guard let first = name.first else { return name }
        return first.uppercased() + name.dropFirst()
    }

    /// `g(C)`: `G(C)` with the first letter lower-cased: the get query and the payload's object field.
    static func fieldName(_ className: String) -> String {
        let name = typeName(className)
        guard let first = name.first else { return name }
        return first.lowercased() + name.dropFirst()
    }

    /// The find query: the plural of `g(C)`.
    static func pluralFieldName(_ className: String) -> String { plural(fieldName(className)) }

    /// npm `pluralize` 8's plural, as Parse Server names find queries (`Pluralizer`).
    static func plural(_ word: String) -> String { Pluralizer.plural(word) }

    /// A valid GraphQL name (`^[_a-zA-Z][_a-zA-Z0-9]*$`), not one of the reserved `__` names.
    static func isValid(_ name: String) -> Bool {
        // Byte by byte (this runs for every field of every class on each request): ASCII letters, `_`, digits.
        var bytes = name.utf8.makeIterator()
        guard let first = bytes.next(), !name.hasPrefix("__") else { return false }
        func letter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F }
        guard letter(first) else { return false }
        while let b = bytes.next() {
            guard letter(b) || (b >= 0x30 && b <= 0x39) else { return false }
        }
        return true
    }

    /// graphql-relay's `toGlobalId`: base64 of `<ParseClassName>:<objectId>`.
    static func globalId(_ className: String, _ objectId: String) -> String {
        Data("\(className):\(objectId)".utf8).base64EncodedString()
    }

    /// The objectId an `id` argument names: a global id of `className` decoded, anything else as it is (Parse
    /// Server accepts both).
    static func objectId(from id: String, className: String) -> String {
        guard let data = Data(base64Encoded: id), let decoded = String(data: data, encoding: .utf8),
            let colon = decoded.firstIndex(of: ":"), decoded[..<colon] == className
        else { return id }
        return String(decoded[decoded.index(after: colon)...])
    }

    /// graphql-relay's `offsetToCursor`: base64 of `arrayconnection:<offset>`.
    static func cursor(_ offset: Int) -> String {
        Data("arrayconnection:\(offset)".utf8).base64EncodedString()
    }

    /// The offset a cursor names; nil when it is not one.
    static func offset(fromCursor cursor: String) -> Int? {
        guard let data = Data(base64Encoded: cursor), let decoded = String(data: data, encoding: .utf8),
            decoded.hasPrefix("arrayconnection:")
        else { return nil }
        return Int(decoded.dropFirst("arrayconnection:".count))
    }
}
