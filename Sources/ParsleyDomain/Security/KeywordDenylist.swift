public import ParsleyCore

/// Parse Server's `requestKeywordDenylist`: keys (and key/value pairs) refused anywhere in a request body, a
/// `where` or `/config`, at any depth, with 400/105 `Prohibited keyword in request data: {"key":"__proto__"}.`
/// Parsley is not JavaScript, but the JavaScript clients that read these objects back are.
///
/// As in Parse Server, a rule's key and string value are regular expressions tested against each key and each
/// string value (so `constructor` also refuses `myconstructor`); other values must be equal.
public struct KeywordDenylist: Sendable {
    struct Compiled: @unchecked Sendable {  // Regex is immutable once built; it is only read.
        let rule: KeywordRule
        let key: Regex<AnyRegexOutput>?
        let value: Regex<AnyRegexOutput>?
    }

    let rules: [Compiled]

    public init(_ rules: [KeywordRule]) {
        self.rules = rules.map { rule in
            Compiled(
                rule: rule, key: rule.key.flatMap { try? Regex($0) },
                value: rule.value?.stringValue.flatMap { try? Regex($0) })
        }
    }

    /// Throws 105 when `value` holds a refused keyword.
    public func check(_ value: JSONValue) throws(ParseError) {
        guard !rules.isEmpty else { return }
        if let rule = firstMatch(in: value) {
            var described: [String: JSONValue] = [:]
            if let key = rule.key { described["key"] = .string(key) }
            if let v = rule.value { described["value"] = v }
            throw ParseError(.invalidKeyName, "Prohibited keyword in request data: \(JSONWriter.string(.object(described))).")
        }
    }

    func firstMatch(in value: JSONValue) -> KeywordRule? {
        switch value {
        case .object(let members):
            for (k, v) in members {
                for c in rules {
                    let keyMatches: Bool? = c.rule.key.map { key in matches(.string(k), .string(key), c.key) }
                    let valueMatches: Bool? = c.rule.value.map { value in matches(v, value, c.value) }
                    switch (keyMatches, valueMatches) {
                    case (true?, nil), (nil, true?), (true?, true?): return c.rule
                    default: continue
                    }
                }
                if let found = firstMatch(in: v) { return found }
            }
            return nil
        case .array(let items):
            for item in items { if let found = firstMatch(in: item) { return found } }
            return nil
        default: return nil
        }
    }

    func matches(_ candidate: JSONValue, _ expected: JSONValue, _ pattern: Regex<AnyRegexOutput>?) -> Bool {
        if case .string(let s) = candidate, let pattern, s.contains(pattern) { return true }
        return candidate == expected
    }
}
