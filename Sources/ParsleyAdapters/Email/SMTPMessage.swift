import ParsleyCore
import ParsleyDomain

extension SMTPEmailAdapter {
    /// The message as sent after `DATA`: headers, body, CRLF line ends, dot-stuffed, with the final `.`.
    static func render(_ message: EmailMessage, from: String, heloName: String, date: ParseDateStamp) -> String {
        let ascii = message.text.utf8.allSatisfy { $0 < 128 }
        var headers = [
            "Date: \(date.rfc5322)",
            "From: \(from)",
            "To: \(message.to)",
            "Subject: \(encodeHeader(message.subject))",
            "Message-ID: <\(ObjectID.make(length: 24))@\(heloName)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
        ]
        var body: [String]
        if ascii {
            headers.append("Content-Transfer-Encoding: 7bit")
            body = message.text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
            }
        } else {
            headers.append("Content-Transfer-Encoding: base64")
            let encoded = Base64.encode(Array(message.text.utf8))
            body = stride(from: 0, to: encoded.count, by: 76).map { i in
                let start = encoded.index(encoded.startIndex, offsetBy: i)
                let end = encoded.index(start, offsetBy: min(76, encoded.count - i))
                return String(encoded[start..<end])
            }
        }
        body = body.map { $0.hasPrefix(".") ? "." + $0 : $0 }
        return (headers + [""] + body).joined(separator: "\r\n") + "\r\n.\r\n"
    }

    /// RFC 2047 encoded words for non-ASCII header text, each under the 75-character limit.
    static func encodeHeader(_ text: String) -> String {
        guard !text.utf8.allSatisfy({ $0 < 128 }) else { return text }
        var words: [String] = []
        var chunk: [UInt8] = []
        for ch in text {
            let bytes = Array(String(ch).utf8)
            if chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?\(Base64.encode(chunk))?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?\(Base64.encode(chunk))?=") }
        return words.joined(separator: "\r\n ")
    }
}

/// Standard base64 (RFC 4648) without Foundation.
enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i]
            let b1 = i + 1 < bytes.count ? bytes[i + 1] : 0
            let b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A moment formatted for the `Date:` header: `Thu, 01 Jan 2026 12:00:00 +0000`.
struct ParseDateStamp {
    var milliseconds: Int64

    static var now: ParseDateStamp { ParseDateStamp(milliseconds: ContinuousClockEpoch.millisecondsSince1970()) }

    var rfc5322: String {
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        // `YYYY-MM-DDTHH:MM:SS.sssZ`
        let iso = Array(ParseDate(milliseconds: milliseconds).iso.utf8)
        func part(_ r: Range<Int>) -> String { String(decoding: iso[r], as: UTF8.self) }
        let month = months[max(0, min(11, (Int(part(5..<7)) ?? 1) - 1))]
        return "\(weekday), \(part(8..<10)) \(month) \(part(0..<4)) \(part(11..<19)) +0000"
    }
}
