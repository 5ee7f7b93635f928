/// `application/x-www-form-urlencoded` and query strings: `key=value` pairs separated by `&`, each side with `+` for a
/// space and `%XX` for a byte. Read on the UTF-8 bytes (`&`, `=`, `+` and `%` are ASCII): splitting the text by
/// characters cost a find about 4% of its instructions.
enum FormEncoding {
    /// The pairs in order; a pair with an empty key is skipped, a piece without `=` has the empty value.
    static func decode(_ text: String) -> [(String, String)] {
        var text = text
        return text.withUTF8 { bytes in
            var pairs: [(String, String)] = []
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
                let pair = UnsafeBufferPointer(rebasing: bytes[start..<end])
                let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.count
                let key = percentDecoded(UnsafeBufferPointer(rebasing: pair[0..<equals]), plusAsSpace: true)
                if !key.isEmpty {
                    let value = equals < pair.count ? percentDecoded(UnsafeBufferPointer(rebasing: pair[(equals + 1)...]), plusAsSpace: true) : ""
                    pairs.append((key, value))
                }
                start = end + 1
            }
            return pairs
        }
    }

    /// `%XX` as its byte (a `%` not followed by two hex digits stays as it is; invalid UTF-8 is repaired), and with
    /// `plusAsSpace` a `+` as a space (a `%2B` stays a plus).
    static func percentDecoded(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String {
        guard bytes.contains(where: { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "%"), i + 2 < bytes.count, let high = hexDigit(bytes[i + 1]), let low = hexDigit(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }
}

extension String {
    /// Decodes `%XX` escapes (and leaves malformed ones as they are); a `+` stays a plus (paths are not forms).
    func removingPercentEncoding() -> String {
        guard utf8.contains(UInt8(ascii: "%")) else { return self }
        var text = self
        return text.withUTF8 { FormEncoding.percentDecoded($0, plusAsSpace: false) }
    }
}
