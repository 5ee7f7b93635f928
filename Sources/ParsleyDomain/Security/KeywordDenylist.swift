public import ParsleyCore

/// Parse Server's `requestKeywordDenylist`: keys (and key/value pairs) refused anywhere in a request body, a
/// `where` or `/config`, at any depth, with 400/105 `Prohibited keyword in request data: {"key":"__proto__"}.`
/// Parsley is not JavaScript, but the JavaScript clients that read these objects back are.
///
/// As in Parse Server, a rule's key and string value are regular expressions tested against each key and each
/// string value (so `constructor` also refuses `myconstructor`); other values must be equal.
public struct KeywordDenylist: Sendable {
    /// A rule's pattern: a plain word (Parse Server's defaults) is found with a substring search, anything else
    /// with a regular expression.
    ///
    /// A class: every key and string of every request is tested against every rule, and copying a rule (its generic
    /// `Regex` above all) for each test cost a create about a tenth of its instructions; a reference is only retained.
    final class Pattern: @unchecked Sendable {  // Regex is immutable once built; it is only read.
        let text: String
        let isRegex: Bool
        let regex: Regex<AnyRegexOutput>?
        /// The word is ASCII (Parse Server's defaults are): found by a byte search, the check every key and string of
        /// every request goes through.
        let ascii: Bool

        init(_ text: String) {
            self.text = text
            let plain = text.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_" }
            regex = plain ? nil : try? Regex(text)
            isRegex = regex != nil
            ascii = plain && !text.isEmpty && text.utf8.allSatisfy { $0 < 128 }
        }

        func found(in s: String) -> Bool {
            if ascii { return s.containsUTF8(text) }
            if isRegex, let regex { return s.contains(regex) }
            return s.contains(text)
        }
    }

    final class Compiled: Sendable {
        let rule: KeywordRule
        let key: Pattern?
        let value: Pattern?

        init(rule: KeywordRule, key: Pattern?, value: Pattern?) {
            self.rule = rule
            self.key = key
            self.value = value
        }
    }

    let rules: [Compiled]

    public init(_ rules: [KeywordRule]) {
        self.rules = rules.map { rule in
            Compiled(rule: rule, key: rule.key.map(Pattern.init), value: rule.value?.stringValue.map(Pattern.init))
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
                for c in rules where matches(c, key: k, value: v) { return c.rule }
                if let found = firstMatch(in: v) { return found }
            }
            return nil
        case .array(let items):
            for item in items { if let found = firstMatch(in: item) { return found } }
            return nil
        default: return nil
        }
    }

    /// A rule with a key matches members whose key matches (and whose value matches, if it names one); a rule
    /// with only a value matches members whose value matches.
    func matches(_ c: Compiled, key: String, value: JSONValue) -> Bool {
        if let pattern = c.key, !pattern.found(in: key) { return false }
        guard let expected = c.rule.value else { return c.key != nil }
        if case .string(let s) = value, let pattern = c.value, pattern.found(in: s) { return true }
        return value == expected
    }
}
