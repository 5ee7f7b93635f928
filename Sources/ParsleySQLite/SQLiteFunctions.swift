import Foundation
import NIOConcurrencyHelpers
import ParsleyCore
import ParsleyStorage

/// Parsley's SQL functions for SQLite: regular expressions with a time budget, word search, geo distance and
/// point-in-polygon. Installed on every connection.
enum SQLiteFunctions {
    /// One regular-expression evaluation may run this long before the statement is aborted.
    static let regexBudget: TimeInterval = 0.25

    struct RegexTimeout: Error {}
}

/// Compiled patterns, shared by all connections.
final class RegexCache: Sendable {
    static let shared = RegexCache()
    private let cache = NIOLockedValueBox<[String: NSRegularExpression]>([:])

    /// A pattern that does not compile (`parsley_regex` reports `SQLiteErrors.invalidRegexMessage`).
    struct InvalidPattern: Error, CustomStringConvertible {
        var description: String { SQLiteErrors.invalidRegexMessage }
    }

    func regex(pattern: String, options: String) throws -> NSRegularExpression {
        let key = options + "\u{0}" + pattern
        if let hit = cache.withLockedValue({ $0[key] }) { return hit }
        var opts: NSRegularExpression.Options = []
        if options.contains("i") { opts.insert(.caseInsensitive) }
        if options.contains("m") { opts.insert(.anchorsMatchLines) }
        if options.contains("x") { opts.insert(.allowCommentsAndWhitespace) }
        if options.contains("s") { opts.insert(.dotMatchesLineSeparators) }
        guard let regex = try? NSRegularExpression(pattern: pattern, options: opts) else { throw InvalidPattern() }
        cache.withLockedValue { c in
            if c.count > 512 { c.removeAll() }
            c[key] = regex
        }
        return regex
    }

    /// Matches with a time budget; a pattern that backtracks past it aborts the statement.
    func matches(pattern: String, options: String, subject: String) throws -> Bool {
        let regex = try regex(pattern: pattern, options: options)
        let deadline = Date().addingTimeInterval(SQLiteFunctions.regexBudget)
        var found = false
        var timedOut = false
        let ns = subject as NSString
        regex.enumerateMatches(in: subject, options: [.reportProgress], range: NSRange(location: 0, length: ns.length)) { result, _, stop in
            if result != nil {
                found = true
                stop.pointee = true
            } else if Date() > deadline {
                timedOut = true
                stop.pointee = true
            }
        }
        if timedOut { throw SQLiteFunctions.RegexTimeout() }
        return found
    }
}

/// `$text` scoring: the number of query words found among the text's words (0 means no match when every
/// word is required). Words are split on anything that is not a letter or digit.
enum TextSearchScore {
    static func words(_ s: String, caseSensitive: Bool, diacriticSensitive: Bool) -> [Substring] {
        var t = s
        if !caseSensitive { t = t.lowercased() }
        if !diacriticSensitive { t = t.folding(options: .diacriticInsensitive, locale: nil) }
        return t.split { !($0.isLetter || $0.isNumber) }
    }

    static func score(text: String, term: String, caseSensitive: Bool, diacriticSensitive: Bool) -> Double {
        let queryWords = words(term, caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
        guard !queryWords.isEmpty else { return 0 }
        let textWords = words(text, caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
        var score = 0.0
        for q in queryWords {
            // A word matches itself or a longer word it starts (simple stemming: "run" finds "running").
            let hits = textWords.filter { $0 == q || ($0.hasPrefix(q) && q.count >= 3) }.count
            if hits == 0 { return 0 }
            score += Double(hits)
        }
        return score
    }
}
