/// Parse's `$relativeTime` grammar: `"in 2 days"`, `"3 hours ago"`, `"now"`, several `N unit` pairs allowed.
public enum RelativeTime {
    public static func resolve(_ text: String, now: ParseDate) -> ParseDate? {
        var words = text.lowercased().split(separator: " ").map(String.init)
        if words == ["now"] { return now }
        var sign: Int64
        if words.first == "in" {
            sign = 1
            words.removeFirst()
        } else if words.last == "ago" {
            sign = -1
            words.removeLast()
        } else {
            return nil
        }
        guard !words.isEmpty, words.count % 2 == 0 else { return nil }
        var seconds: Int64 = 0
        var i = 0
        while i < words.count {
            guard let n = Int64(words[i]), let unit = unitSeconds(words[i + 1]) else { return nil }
            // The client chooses the numbers: too large is no date (an overflow trap would stop the server).
            let (amount, overflow) = n.multipliedReportingOverflow(by: unit)
            let (sum, sumOverflow) = seconds.addingReportingOverflow(amount)
            guard !overflow, !sumOverflow else { return nil }
            seconds = sum
            i += 2
        }
        let (signed, signOverflow) = seconds.multipliedReportingOverflow(by: sign)
        let (delta, deltaOverflow) = signed.multipliedReportingOverflow(by: 1000)
        let (milliseconds, overflow) = now.milliseconds.addingReportingOverflow(delta)
        guard !signOverflow, !deltaOverflow, !overflow, ParseDate.range.contains(milliseconds) else { return nil }
        return ParseDate(milliseconds: milliseconds)
    }

    static func unitSeconds(_ unit: String) -> Int64? {
        switch unit {
        case "yr", "yrs", "year", "years": return 365 * 86400
        case "wk", "wks", "week", "weeks": return 7 * 86400
        case "d", "day", "days": return 86400
        case "hr", "hrs", "hour", "hours": return 3600
        case "min", "mins", "minute", "minutes": return 60
        case "sec", "secs", "second", "seconds": return 1
        default: return nil
        }
    }
}
