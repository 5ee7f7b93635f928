public import NIOCore
public import NIOPosix
import ParsleyCore
public import ParsleyDomain

/// Sends mail to an SMTP server over plain TCP (RFC 5321): greeting, `EHLO` (falling back to `HELO`), optional
/// `AUTH PLAIN` or `AUTH LOGIN`, `MAIL FROM`, `RCPT TO`, `DATA` with dot-stuffing, `QUIT`. One connection per
/// message. No TLS: use it with a local relay or a submission port that accepts plain connections.
public struct SMTPEmailAdapter: EmailAdapter {
    public enum AuthMethod: String, Sendable {
        /// `PLAIN` when the server offers it, else `LOGIN`.
        case automatic, plain, login
    }

    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var username: String?
        public var password: String?
        /// The sender, `noreply@example.com` or `My App <noreply@example.com>`.
        public var from: String
        /// The name sent with `EHLO`.
        public var heloName: String
        public var authMethod: AuthMethod
        /// Longest time one message may take, connection included.
        public var timeout: Duration

        public init(
            host: String, port: Int = 25, username: String? = nil, password: String? = nil, from: String, heloName: String = "localhost",
            authMethod: AuthMethod = .automatic, timeout: Duration = .seconds(30)
        ) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.from = from
            self.heloName = heloName
            self.authMethod = authMethod
            self.timeout = timeout
        }
    }

    public let configuration: Configuration
    let group: any EventLoopGroup

    public init(_ configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = group
    }

    /// What went wrong, with the server's reply when there was one.
    public struct SMTPError: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    public func send(_ message: EmailMessage) async throws {
        let c = configuration
        let sender = Self.address(c.from)
        for value in [message.to, message.subject, c.from, sender] where value.contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw SMTPError("line breaks are not allowed in addresses or the subject")
        }
        let data = Self.render(message, from: c.from, heloName: c.heloName, date: .now)
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(min(10, max(1, c.timeout.components.seconds))))
                .connect(host: c.host, port: c.port) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
        } catch {
            throw SMTPError("cannot connect to SMTP server \(c.host):\(c.port): \(error)")
        }
        // The conversation races the deadline, which closes the connection (ending whatever read is waiting).
        let raw = channel.channel
        let started = ContinuousClock.now
        let timedOut = SMTPError("SMTP send to \(c.host):\(c.port) timed out after \(c.timeout)")
        do {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await channel.executeThenClose { inbound, outbound in
                        var session = Session(inbound: inbound.makeAsyncIterator(), outbound: outbound)
                        try await session.converse(configuration: c, sender: sender, recipient: message.to, data: data)
                    }
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: c.timeout)
                    raw.close(promise: nil)
                    return false
                }
                let sent = try await group.next() ?? false
                group.cancelAll()
                if !sent { throw timedOut }
            }
        } catch {
            if error is CancellationError || ContinuousClock.now - started >= c.timeout { throw timedOut }
            throw error is SMTPError ? error : SMTPError("SMTP send to \(c.host):\(c.port) failed: \(error)")
        }
    }

    /// `Name <a@b>` → `a@b`.
    static func address(_ from: String) -> String {
        if let open = from.lastIndex(of: "<"), let close = from.lastIndex(of: ">"), open < close {
            return String(from[from.index(after: open)..<close])
        }
        var s = Substring(from)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }

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

    /// One SMTP conversation over a connection.
    struct Session {
        var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
        var pending: [UInt8] = []

        struct Reply {
            var code: Int
            var lines: [String]
            var text: String { "\(code) \(lines.joined(separator: " / "))" }
        }

        mutating func converse(configuration c: Configuration, sender: String, recipient: String, data: String) async throws {
            try await expect(try await readReply(), 220, "greeting")
            var hello = try await command("EHLO \(c.heloName)")
            if hello.code != 250 {
                hello = try await command("HELO \(c.heloName)")
                try await expect(hello, 250, "HELO")
            }
            if let username = c.username {
                try await authenticate(username: username, password: c.password ?? "", method: c.authMethod, offered: Self.mechanisms(hello))
            }
            try await expect(try await command("MAIL FROM:<\(sender)>"), 250, "MAIL FROM")
            let rcpt = try await command("RCPT TO:<\(recipient)>")
            guard rcpt.code == 250 || rcpt.code == 251 else { throw SMTPError("SMTP server refused recipient \(recipient): \(rcpt.text)") }
            try await expect(try await command("DATA"), 354, "DATA")
            try await write(data)
            try await expect(try await readReply(), 250, "message")
            _ = try? await command("QUIT")
        }

        /// Mechanisms from the `AUTH` (or `AUTH=`) line of the EHLO reply.
        static func mechanisms(_ hello: Reply) -> Set<String> {
            var found: Set<String> = []
            for line in hello.lines {
                let upper = line.uppercased()
                guard upper.hasPrefix("AUTH ") || upper.hasPrefix("AUTH=") else { continue }
                for word in upper.dropFirst(5).split(separator: " ") { found.insert(String(word)) }
            }
            return found
        }

        mutating func authenticate(username: String, password: String, method: AuthMethod, offered: Set<String>) async throws {
            let useLogin: Bool
            switch method {
            case .plain: useLogin = false
            case .login: useLogin = true
            case .automatic: useLogin = !offered.contains("PLAIN") && offered.contains("LOGIN")
            }
            if useLogin {
                try await expect(try await command("AUTH LOGIN"), 334, "AUTH LOGIN")
                try await expect(try await command(Base64.encode(Array(username.utf8))), 334, "AUTH LOGIN username")
                try await expect(try await command(Base64.encode(Array(password.utf8))), 235, "AUTH LOGIN password")
            } else {
                let token = Base64.encode([0] + Array(username.utf8) + [0] + Array(password.utf8))
                try await expect(try await command("AUTH PLAIN \(token)"), 235, "AUTH PLAIN")
            }
        }

        func expect(_ reply: Reply, _ code: Int, _ step: String) async throws {
            guard reply.code == code else { throw SMTPError("SMTP server answered \(reply.text) to \(step)") }
        }

        mutating func command(_ line: String) async throws -> Reply {
            try await write(line + "\r\n")
            return try await readReply()
        }

        func write(_ text: String) async throws {
            try await outbound.write(ByteBuffer(string: text))
        }

        /// A reply: `250-first` continuation lines up to `250 last`.
        mutating func readReply() async throws -> Reply {
            var lines: [String] = []
            while true {
                let line = try await readLine()
                let bytes = Array(line.utf8)
                guard bytes.count >= 3, let code = Int(String(decoding: bytes[0..<3], as: UTF8.self)) else {
                    throw SMTPError("SMTP server sent a malformed reply: \(line)")
                }
                lines.append(bytes.count > 4 ? String(decoding: bytes[4...], as: UTF8.self) : "")
                if bytes.count == 3 || bytes[3] == UInt8(ascii: " ") { return Reply(code: code, lines: lines) }
                if lines.count > 100 { throw SMTPError("SMTP reply too long") }
            }
        }

        mutating func readLine() async throws -> String {
            while true {
                if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    var line = Array(pending[..<newline])
                    pending.removeFirst(newline + 1)
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    return String(decoding: line, as: UTF8.self)
                }
                guard pending.count < 65_536 else { throw SMTPError("SMTP reply line too long") }
                guard let chunk = try await inbound.next() else { throw SMTPError("SMTP server closed the connection") }
                pending += chunk.readableBytesView
            }
        }
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
