public import NIOCore
public import NIOPosix
import NIOSSL
import ParsleyCore
public import ParsleyDomain

/// Sends mail to an SMTP server (RFC 5321): greeting, `EHLO` (falling back to `HELO`), `STARTTLS` (RFC 3207) or
/// implicit TLS (RFC 8314, port 465), optional `AUTH PLAIN` or `AUTH LOGIN`, `MAIL FROM`, `RCPT TO`, `DATA` with
/// dot-stuffing, `QUIT`. One connection per message. Certificates are verified against the system's roots (plus a CA
/// file), and the host name (or IP address) against the certificate; credentials never cross an unencrypted
/// connection unless `security` is `.none`.
public struct SMTPEmailAdapter: EmailAdapter {
    /// How the connection is protected (`PARSLEY_SMTP_SECURITY`).
    public enum Security: String, Sendable {
        /// Upgrade with `STARTTLS` when the server offers it; without the offer, send only when there are no
        /// credentials to send (a local relay), else refuse.
        case starttls
        /// TLS from the first byte (implicit TLS, port 465).
        case tls
        /// Plain TCP, credentials included: a relay on a trusted network only.
        case none
    }

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
        public var security: Security
        /// PEM certificates trusted besides the system's roots (a private CA).
        public var caFile: String?

        public init(
            host: String, port: Int = 25, username: String? = nil, password: String? = nil, from: String, heloName: String = "localhost",
            authMethod: AuthMethod = .automatic, timeout: Duration = .seconds(30), security: Security = .starttls, caFile: String? = nil
        ) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.from = from
            self.heloName = heloName
            self.authMethod = authMethod
            self.timeout = timeout
            self.security = security
            self.caFile = caFile
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
        for value in [message.to, message.subject, c.from, sender] where value.contains(where: \.isNewline) {
            throw SMTPError("line breaks are not allowed in addresses or the subject")
        }
        let data = Self.render(message, from: c.from, heloName: c.heloName, date: .now)
        let tls = c.security == .none ? nil : try Self.tlsContext(caFile: c.caFile)
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(min(10, max(1, c.timeout.components.seconds))))
                .connect(host: c.host, port: c.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if c.security == .tls, let tls {
                            try channel.pipeline.syncOperations.addHandler(try Self.tlsHandler(tls, host: c.host))
                        }
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
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
                        if c.security == .starttls, let tls {
                            // The handler is made and added on the channel's event loop (it is not Sendable).
                            session.startTLS = {
                                try await raw.eventLoop.submit {
                                    try raw.pipeline.syncOperations.addHandler(try Self.tlsHandler(tls, host: c.host), position: .first)
                                }.get()
                            }
                        }
                        session.encrypted = c.security == .tls
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

    /// The TLS settings: full certificate verification against the system's roots plus `caFile`.
    static func tlsContext(caFile: String?) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        if let caFile { configuration.additionalTrustRoots = [.file(caFile)] }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw SMTPError("cannot set up TLS for SMTP (PARSLEY_SMTP_CA_FILE \(caFile ?? "unset")): \(error)")
        }
    }

    /// A TLS client for `host`: its name is sent (SNI) and checked against the certificate; an IP address is checked
    /// against the certificate's IP addresses.
    static func tlsHandler(_ context: NIOSSLContext, host: String) throws -> NIOSSLClientHandler {
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        return try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host)
    }
}
