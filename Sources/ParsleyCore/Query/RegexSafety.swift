/// Whether a `$regex` pattern is safe to run in memory against any text: a backtracking engine spends exponential
/// time on a quantified group that itself holds a quantifier or an alternation (`(a+)+`, `(a|aa)*`), and on
/// back-references. LiveQuery evaluates patterns in memory for every event (a database would stop a query at its
/// statement timeout), so it refuses such patterns (Parse Server's 2026 `$regex` denial-of-service advisory).
public enum RegexSafety {
    public static let maxLength = 512

    public static func isSafe(_ pattern: String) -> Bool {
        guard pattern.utf8.count <= maxLength else { return false }
        let chars = Array(pattern)
        // Per open group: whether it holds a quantifier or an alternation.
        var groups: [Bool] = []
        var risky = false  // the group just closed holds one
        var i = 0
        var inClass = false
        while i < chars.count {
            let c = chars[i]
            if c == "\\" {
                if i + 1 < chars.count, chars[i + 1].isNumber, chars[i + 1] != "0" { return false }  // back-reference
                i += 2
                risky = false
                continue
            }
            if inClass {
                if c == "]" { inClass = false }
                i += 1
                continue
            }
            switch c {
            case "[":
                inClass = true
                risky = false
            case "(":
                groups.append(false)
                risky = false
            case ")":
                risky = groups.popLast() ?? false
                if risky, !groups.isEmpty { groups[groups.count - 1] = true }
                i += 1
                if risky, i < chars.count, "*+{".contains(chars[i]) { return false }
                continue
            case "*", "+", "{", "|":
                if !groups.isEmpty { groups[groups.count - 1] = true }
                risky = false
            default:
                risky = false
            }
            i += 1
        }
        return true
    }
}
