import NIOCore
import NIOSSL

extension SMTPEmailAdapter {
    /// One SMTP conversation over a connection.
    struct Session {
        var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
        var pending: [UInt8] = []
        /// Puts TLS under the conversation (after `STARTTLS`); nil when it must stay plain (`security: none`).
        var startTLS: (@Sendable () async throws -> Void)?
        /// Whether the connection is encrypted by now.
        var encrypted = false

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
            if let startTLS, !encrypted, Self.offers(hello, "STARTTLS") {
                try await expect(try await command("STARTTLS"), 220, "STARTTLS")
                guard pending.isEmpty else { throw SMTPError("SMTP server sent data before the TLS handshake") }
                try await startTLS()
                encrypted = true
                // The server forgets what it said before TLS: greet again.
                hello = try await command("EHLO \(c.heloName)")
                try await expect(hello, 250, "EHLO after STARTTLS")
            }
            if c.username != nil, !encrypted, c.security != .none {
                throw SMTPError(
                    "SMTP server \(c.host):\(c.port) does not offer STARTTLS: the credentials are not sent over an unencrypted connection "
                        + "(PARSLEY_SMTP_SECURITY=tls for port 465, or none for a trusted relay)")
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

        /// Whether the EHLO reply lists `keyword` (`STARTTLS`, `8BITMIME` ...).
        static func offers(_ hello: Reply, _ keyword: String) -> Bool {
            hello.lines.contains { $0.uppercased() == keyword || $0.uppercased().hasPrefix(keyword + " ") }
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
