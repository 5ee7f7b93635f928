import Foundation
import NIOConcurrencyHelpers
import ParsleyCore
import ParsleyStorage
import SQLiteNIO

/// Parsley's SQL functions for SQLite: regular expressions with a time budget, word search, geo distance and
/// point-in-polygon. Installed on every connection.
enum SQLiteFunctions {
    /// One regular-expression evaluation may run this long before the statement is aborted.
    static let regexBudget: TimeInterval = 0.25

    struct RegexTimeout: Error {}

    static func all() -> [SQLiteCustomFunction] {
        [
            SQLiteCustomFunction("parsley_regex", argumentCount: 3, pure: true) { args in
                guard case .text(let pattern) = args[0], case .text(let options) = args[1], case .text(let subject) = args[2] else { return 0 }
                return try RegexCache.shared.matches(pattern: pattern, options: options, subject: subject) ? 1 : 0
            },
            SQLiteCustomFunction("parsley_text_score", argumentCount: 4, pure: true) { args in
                guard case .text(let text) = args[0], case .text(let term) = args[1] else { return 0.0 }
                return TextSearchScore.score(text: text, term: term, caseSensitive: args[2].integer == 1, diacriticSensitive: args[3].integer == 1)
            },
            SQLiteCustomFunction("parsley_geo_distance", argumentCount: 4, pure: true) { args in
                guard let lat = args[0].double, let lng = args[1].double, let lat2 = args[2].double, let lng2 = args[3].double else {
                    return nil as Double?
                }
                return GeoMath.distanceRadians(lat, lng, lat2, lng2)
            },
            SQLiteCustomFunction("parsley_polygon_contains", argumentCount: 3, pure: true) { args in
                guard case .text(let polygonText) = args[0], let lat = args[1].double, let lng = args[2].double,
                    let polygon = try? JSONParser.parse(polygonText), let points = ParseValue.polygonPoints(polygon)
                else { return 0 }
                return GeoMath.polygonContains(points, latitude: lat, longitude: lng) ? 1 : 0
            },
        ]
    }
}

/// Compiled patterns, shared by all connections.
final class RegexCache: Sendable {
    static let shared = RegexCache()
    private let cache = NIOLockedValueBox<[String: NSRegularExpression]>([:])

    /// Its description carries `WhereCompiler.invalidRegexMarker` into the SQLite error message.
    struct InvalidPattern: Error, CustomStringConvertible {
        var description: String { "parsley: \(WhereCompiler.invalidRegexMarker)" }
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
