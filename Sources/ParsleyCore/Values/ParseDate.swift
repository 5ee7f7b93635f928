/// A Parse date: milliseconds since 1970 UTC, printed as `YYYY-MM-DDTHH:MM:SS.sssZ` like JavaScript's
/// `toISOString`. Hand-written (no Foundation formatter) because it runs on every object read and write.
public struct ParseDate: Sendable, Hashable, Comparable {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func < (a: ParseDate, b: ParseDate) -> Bool { a.milliseconds < b.milliseconds }

    /// The instants a JavaScript `Date` can hold, ±100,000,000 days around 1970 (years -271821 to 275760): the dates
    /// Parse Server accepts, and the ones `iso` prints as text that `init?(iso:)` reads back unchanged.
    public static let range: ClosedRange<Int64> = -8_640_000_000_000_000...8_640_000_000_000_000

    /// The ISO-8601 text, always 24 characters for years 0...9999 (a sign and six digits or more outside them).
    public var iso: String {
        var days = milliseconds / 86_400_000
        var msOfDay = milliseconds - days * 86_400_000
        if msOfDay < 0 { msOfDay += 86_400_000; days -= 1 }
        let (y, m, d) = Self.civil(fromDays: days)
        let hour = msOfDay / 3_600_000
        let minute = (msOfDay / 60_000) % 60
        let second = (msOfDay / 1000) % 60
        let ms = msOfDay % 1000
        var out: [UInt8] = []
        out.reserveCapacity(24)
        // `width` digits at least; all of them when there are more (a year past 999999 is not cut to its last six).
        func pad(_ v: Int64, _ width: Int) {
            var digits: [UInt8] = []
            var x = v
            repeat {
                digits.append(UInt8(ascii: "0") + UInt8(x % 10))
                x /= 10
            } while x > 0 || digits.count < width
            out.append(contentsOf: digits.reversed())
        }
        if y < 0 { out.append(UInt8(ascii: "-")); pad(-y, 6) } else if y > 9999 { out.append(UInt8(ascii: "+")); pad(y, 6) } else { pad(y, 4) }
        out.append(UInt8(ascii: "-")); pad(m, 2)
        out.append(UInt8(ascii: "-")); pad(d, 2)
        out.append(UInt8(ascii: "T")); pad(hour, 2)
        out.append(UInt8(ascii: ":")); pad(minute, 2)
        out.append(UInt8(ascii: ":")); pad(second, 2)
        out.append(UInt8(ascii: ".")); pad(ms, 3)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses ISO-8601 date-times leniently: `2022-01-01`, `2022-01-01T10:00Z`, `2022-01-01T10:00:00.123456+02:00`,
    /// a space instead of `T`, no zone meaning UTC. Nil outside `range`.
    public init?(iso text: String) {
        let b = Array(text.utf8)
        var i = 0
        func number(_ minDigits: Int, _ maxDigits: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while i < b.count, count < maxDigits, b[i] >= 48, b[i] <= 57 {
                value = value * 10 + Int64(b[i] - 48)
                i += 1
                count += 1
            }
            return count >= minDigits ? value : nil
        }
        func accept(_ c: Character) -> Bool {
            if i < b.count, b[i] == c.asciiValue { i += 1; return true }
            return false
        }
        var sign: Int64 = 1
        if accept("-") { sign = -1 } else { _ = accept("+") }
        guard let year = number(4, 6), accept("-"), let month = number(2, 2), accept("-"), let day = number(2, 2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var hour: Int64 = 0, minute: Int64 = 0, second: Int64 = 0, millis: Int64 = 0, offsetMinutes: Int64 = 0
        if i < b.count {
            guard accept("T") || accept("t") || accept(" ") else { return nil }
            guard let h = number(2, 2), accept(":"), let mi = number(2, 2), h < 24, mi < 60 else { return nil }
            hour = h
            minute = mi
            if accept(":") {
                guard let s = number(2, 2), s < 61 else { return nil }
                second = min(s, 59)
                if accept(".") || accept(",") {
                    var digits = 0
                    var fraction: Int64 = 0
                    while i < b.count, b[i] >= 48, b[i] <= 57 {
                        if digits < 3 { fraction = fraction * 10 + Int64(b[i] - 48) }
                        digits += 1
                        i += 1
                    }
                    guard digits > 0 else { return nil }
                    if digits < 3 { for _ in digits..<3 { fraction *= 10 } }
                    millis = fraction
                }
            }
            if accept("Z") || accept("z") {
            } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                let negative = b[i] == UInt8(ascii: "-")
                i += 1
                guard let oh = number(2, 2) else { return nil }
                _ = accept(":")
                let om = number(2, 2) ?? 0
                offsetMinutes = (oh * 60 + om) * (negative ? -1 : 1)
            }
        }
        guard i == b.count else { return nil }
        let days = Self.days(fromCivil: sign * year, month, day)
        let milliseconds = ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60_000 + second * 1000 + millis
        guard Self.range.contains(milliseconds) else { return nil }
        self.milliseconds = milliseconds
    }

    // Howard Hinnant's civil-date algorithms.
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp + (mp < 10 ? 3 : -9)
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
