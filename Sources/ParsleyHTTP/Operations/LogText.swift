#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-level pieces of a log line, written straight into the sink's buffer: the time stamp, logfmt values and
/// JSON strings. No Foundation, no intermediate strings.
enum LogText {
    static let hexDigits = Array("0123456789abcdef".utf8)

    /// Milliseconds since 1970 on the wall clock.
    static func nowMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// `2026-11-26T07:16:11.822Z` for `milliseconds` since 1970 (UTC). `cache` keeps the text of the last second.
    static func appendTime(_ milliseconds: Int64, to out: inout [UInt8], cache: inout (second: Int, text: [UInt8])) {
        let second = Int(milliseconds.dividedRounding(by: 1000))
        if cache.second != second || cache.text.isEmpty {
            cache = (second, secondText(second))
        }
        out.append(contentsOf: cache.text)
        let ms = Int(milliseconds - Int64(second) * 1000)
        out.append(UInt8(ascii: "."))
        appendDigits(ms, width: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// `YYYY-MM-DDTHH:MM:SS` of a second since 1970 (days to civil date as in Howard Hinnant's algorithm).
    static func secondText(_ second: Int) -> [UInt8] {
        let days = second >= 0 ? second / 86_400 : (second - 86_399) / 86_400
        let inDay = second - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        var out: [UInt8] = []
        out.reserveCapacity(19)
        appendDigits(year, width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(month, width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(day, width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        appendDigits(inDay / 3600, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(inDay / 60 % 60, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(inDay % 60, width: 2, to: &out)
        return out
    }

    /// `value` in decimal, zero-padded to `width`.
    static func appendDigits(_ value: Int, width: Int = 1, to out: inout [UInt8]) {
        var v = value
        if v < 0 {
            out.append(UInt8(ascii: "-"))
            v = -v
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0 && n < 20
            while n < width && n < 20 {
                d[n] = UInt8(ascii: "0")
                n += 1
            }
            for i in stride(from: n - 1, through: 0, by: -1) { out.append(d[i]) }
        }
    }

    /// A duration in milliseconds with two decimals (`12.34`).
    static func appendMilliseconds(_ duration: Duration, to out: inout [UInt8]) {
        let (seconds, attoseconds) = duration.components
        let hundredths = Int(seconds) * 100_000 + Int(attoseconds / 10_000_000_000_000)
        appendDigits(hundredths / 100, to: &out)
        out.append(UInt8(ascii: "."))
        appendDigits(hundredths % 100, width: 2, to: &out)
    }

    /// A logfmt value: as it is when it has no space, quote, `=`, backslash or control character; else quoted.
    static func appendLogfmt(_ value: String, to out: inout [UInt8]) {
        var value = value
        value.withUTF8 { bytes in
            let plain =
                !bytes.isEmpty
                && !bytes.contains { $0 <= 32 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\\") || $0 == 127 }
            if plain {
                out.append(contentsOf: bytes)
                return
            }
            out.append(UInt8(ascii: "\""))
            for b in bytes {
                switch b {
                case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), b]
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), b]
                case 10: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 13: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case 9: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                default: out.append(b)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }
}

extension Int64 {
    /// Division rounding towards minus infinity.
    func dividedRounding(by d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
