public import ParsleyCore

/// Values that reach a write, a query or an answer without coming through a client's request body get the checks
/// that body gets at the edge (ParseTransport): what a `beforeSave` (Swift or webhook) hands back, cloud code's own
/// writes, a webhook's or a Swift function's result, `afterFind`/`beforeFind` answers, file metadata and tags,
/// pushes sent from cloud code, the cloud context. Field names and Parse types are then the write parser's
/// (WriteParser), as for a client's body.
extension KeywordDenylist {
    /// Throws 105 `Prohibited keyword in request data: …` for a refused keyword at any depth, and 107 (the edge's
    /// words) for a NUL character in any key or string, which no backend stores.
    public func screen(_ value: JSONValue) throws(ParseError) {
        try check(value)
        if Self.holdsNUL(value) { throw ParseError.nulRefused }
    }

    /// `screen` for a list of objects (find results).
    public func screen(_ objects: [[String: JSONValue]]) throws(ParseError) {
        for object in objects { try screen(.object(object)) }
    }

    static func holdsNUL(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let s): return s.utf8.contains(0)
        case .array(let items): return items.contains(where: holdsNUL)
        case .object(let members): return members.contains { $0.key.utf8.contains(0) || holdsNUL($0.value) }
        default: return false
        }
    }
}

extension ParseError {
    /// A NUL character (`\u0000`) in a key or string: PostgreSQL's text cannot hold it, so no backend stores it.
    /// The same words as the edge's answer to a client's body.
    public static let nulRefused = ParseError.invalidJSON("Invalid JSON: strings may not contain the NUL character (\\u0000)")
}

extension CloudRuntime {
    /// What cloud code or a webhook hands back (a function's result, find answers, a push's body), checked as a
    /// client's body is: `KeywordDenylist.screen`.
    func screened(_ value: JSONValue) throws -> JSONValue {
        try attached().objects.options.security.keywordDenylist.screen(value)
        return value
    }

    func screened(_ objects: [[String: JSONValue]]) throws -> [[String: JSONValue]] {
        try attached().objects.options.security.keywordDenylist.screen(objects)
        return objects
    }
}
