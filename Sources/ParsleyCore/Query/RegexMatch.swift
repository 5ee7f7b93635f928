/// Parse's `$regex` with its options (`i` case-insensitive, `m` anchors at line breaks, `s` dot matches newlines,
/// `x` extended) on Swift's regular expressions; a pattern Swift cannot compile matches nothing.
enum RegexMatch {
    static func matches(_ text: String, _ pattern: RegexPattern) -> Bool {
        let prefix = pattern.options.contains("x") ? "(?x)" : ""
        guard var regex = try? Regex(prefix + pattern.pattern) else { return false }
        if pattern.options.contains("i") { regex = regex.ignoresCase() }
        if pattern.options.contains("m") { regex = regex.anchorsMatchLineEndings() }
        if pattern.options.contains("s") { regex = regex.dotMatchesNewlines() }
        return (try? regex.firstMatch(in: text)) != nil
    }
}
