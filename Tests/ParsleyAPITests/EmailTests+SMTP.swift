import Foundation
import HTTPTypes
import Logging
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import Testing

/// A real SMTP server: Python's aiosmtpd on 127.0.0.1 and a free port, writing each message it accepts as a
/// JSON line (envelope, headers, decoded body, the AUTH login used, whether TLS was on) and each AUTH attempt to
/// `auth.jsonl`. Plain, with STARTTLS (required before AUTH and MAIL) or implicit TLS, with a certificate of a CA made
/// for the test. Installs aiosmtpd when it is missing.
final class SMTPTestServer: @unchecked Sendable {
    static let script = #"""
        import email, json, socket, ssl, sys
        from email import policy
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult, LoginPassword

        out, ready, mode = sys.argv[1], sys.argv[2], sys.argv[3]
        attempts = out.replace("messages.jsonl", "auth.jsonl")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]

        def encrypted(server, session):
            return bool(session.ssl) or server.transport.get_extra_info("ssl_object") is not None

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                msg = email.message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
                record = {"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos, "from": str(msg["from"]),
                          "to": str(msg["to"]), "subject": str(msg["subject"]),
                          "body": msg.get_body(preferencelist=("plain",)).get_content(), "content_type": msg.get_content_type(),
                          "html": msg.get_body(preferencelist=("html",)).get_content() if msg.is_multipart() else None,
                          "date": str(msg["date"]), "message_id": str(msg["message-id"]),
                          "login": getattr(session, "parsley_login", None), "mechanism": getattr(session, "parsley_mechanism", None),
                          "tls": encrypted(server, session)}
                with open(out, "a") as f:
                    f.write(json.dumps(record) + "\n")
                return "250 Message accepted for delivery"

        def authenticator(server, session, envelope, mechanism, auth_data):
            with open(attempts, "a") as f:
                f.write(json.dumps({"mechanism": mechanism, "tls": encrypted(server, session)}) + "\n")
            if isinstance(auth_data, LoginPassword) and auth_data.login == b"mailer" and auth_data.password == b"s3cret pass":
                session.parsley_login = "mailer"
                session.parsley_mechanism = mechanism
                return AuthResult(success=True)
            return AuthResult(success=False, handled=False)

        options = {}
        if mode != "plain":
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(sys.argv[4], sys.argv[5])
            if mode == "starttls":
                options = {"tls_context": context, "require_starttls": True, "auth_require_tls": True}
            else:
                options = {"ssl_context": context, "auth_require_tls": False}
        if mode == "plain":
            options = {"auth_require_tls": False}
        controller = Controller(Handler(), hostname="127.0.0.1", port=port, authenticator=authenticator, ready_timeout=20, **options)
        controller.start()
        with open(ready, "w") as f:
            f.write(str(port))
        sys.stdin.read()
        controller.stop()
        """#

    let dir: URL
    let port: Int
    var messagesFile: URL { dir.appendingPathComponent("messages.jsonl") }

    private init(dir: URL, port: Int) {
        self.dir = dir
        self.port = port
    }

    /// aiosmtpd, installed from PyPI once per test process when python3 lacks it, so that
    /// `swift test` on a fresh machine needs no step by hand.
    static let aiosmtpdReady = Task { await PythonPackages.ensure(imports: "aiosmtpd", requirement: "aiosmtpd") }

    enum Mode: String { case plain, starttls, tls }

    /// Starts the server, runs `body`, stops it. Fails (never skips) when the server cannot start. `certificate`:
    /// the PEM certificate and key files for `starttls` and `tls`.
    static func with(
        _ mode: Mode = .plain, certificate: (cert: String, key: String)? = nil, _ body: (SMTPTestServer) async throws -> Void
    ) async throws {
        _ = await aiosmtpdReady.value
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-smtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let scriptURL = dir.appendingPathComponent("smtp_server.py")
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)
        let ready = dir.appendingPathComponent("ready")
        let log = dir.appendingPathComponent("server.log")
        let process: ChildProcess
        do {
            process = try ChildProcess(
                "/usr/bin/env",
                ["python3", scriptURL.path, dir.appendingPathComponent("messages.jsonl").path, ready.path, mode.rawValue]
                    + (certificate.map { [$0.cert, $0.key] } ?? []),
                keepInputOpen: true, output: log)
        } catch {
            throw Failure("cannot start the SMTP test server (python3 with aiosmtpd; `python3 -m pip install aiosmtpd`): \(error)")
        }
        func stop() async {
            process.closeInput()
            process.signal(SIGTERM)
            await process.exited(killAfter: .seconds(10))
        }
        do {
            var port: Int?
            for _ in 0..<300 {
                if let text = try? String(contentsOf: ready, encoding: .utf8), let p = Int(text) {
                    port = p
                    break
                }
                if !process.isRunning { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            guard let port else {
                let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw Failure("could not start the aiosmtpd SMTP test server (install it with `python3 -m pip install aiosmtpd`):\n\(output)")
            }
            let server = SMTPTestServer(dir: dir, port: port)
            try await body(server)
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    /// The messages received so far, once there are at least `count`.
    func messages(count: Int) async throws -> [JSONValue] {
        for _ in 0..<200 {
            let text = (try? String(contentsOf: messagesFile, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
            if lines.count >= count { return lines }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw Failure("the SMTP server did not receive \(count) message(s)")
    }

    /// The AUTH attempts the server saw (each with whether TLS was on).
    var authAttempts: [JSONValue] {
        let text = (try? String(contentsOf: dir.appendingPathComponent("auth.jsonl"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
    }

    func adapter(
        username: String? = nil, password: String? = nil, auth: SMTPEmailAdapter.AuthMethod = .automatic, host: String = "127.0.0.1",
        security: SMTPEmailAdapter.Security = .none, caFile: String? = nil
    ) -> SMTPEmailAdapter {
        SMTPEmailAdapter(
            .init(
                host: host, port: port, username: username, password: password, from: "Parsley Tests <noreply@parsley.test>",
                heloName: "parsley.test", authMethod: auth, timeout: .seconds(30), security: security, caFile: caFile))
    }
}

/// Log lines kept in memory.
final class LogCapture: LogHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [(Logger.Level, String)] = []
    var lines: [(Logger.Level, String)] { lock.withLock { stored } }
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let meta = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        lock.withLock { stored.append((event.level, "\(event.message) \(meta)")) }
    }
}

@Suite("SMTP email adapter")
struct SMTPTests {
    @Test("sends to a real SMTP server: envelope, headers, body, dot-stuffing, UTF-8; AUTH PLAIN and LOGIN; bad login fails")
    func adapter() async throws {
        try await SMTPTestServer.with { smtp in
            let body =
                "Hi,\n\n.a line that starts with a dot\n..two dots\n.\nClick here:\nhttp://localhost/parse/apps/x/verify_email?token=abc&username=bob"
            try await smtp.adapter().send(EmailMessage(to: "bob@example.com", subject: "Plain subject", text: body))
            try await smtp.adapter(username: "mailer", password: "s3cret pass")
                .send(EmailMessage(to: "ann@example.com", subject: "Grüße aus Zürich – ✓", text: "Ünïcödé body\nline 2"))
            try await smtp.adapter(username: "mailer", password: "s3cret pass", auth: .login)
                .send(EmailMessage(to: "cy@example.com", subject: "login", text: "via AUTH LOGIN"))
            let messages = try await smtp.messages(count: 3)
            let first = messages[0]
            #expect(first["mail_from"] == "noreply@parsley.test")
            #expect(first["rcpt_tos"] == ["bob@example.com"])
            #expect(first["to"] == "bob@example.com")
            #expect(first["from"] == "Parsley Tests <noreply@parsley.test>")
            #expect(first["subject"] == "Plain subject")
            #expect(first["body"]?.stringValue?.replacingOccurrences(of: "\r\n", with: "\n") == body + "\n")
            #expect(first["login"] == .null)
            #expect(first["date"]?.stringValue?.hasSuffix("+0000") == true)
            #expect(first["message_id"]?.stringValue?.hasSuffix("@parsley.test>") == true)
            let second = messages[1]
            #expect(second["subject"] == "Grüße aus Zürich – ✓")
            #expect(second["body"]?.stringValue?.replacingOccurrences(of: "\r\n", with: "\n") == "Ünïcödé body\nline 2")
            #expect(second["login"] == "mailer")
            #expect(second["mechanism"] == "PLAIN")
            #expect(messages[2]["mechanism"] == "LOGIN")

            await #expect(throws: SMTPEmailAdapter.SMTPError.self) {
                try await smtp.adapter(username: "mailer", password: "wrong").send(EmailMessage(to: "x@example.com", subject: "s", text: "t"))
            }
            await #expect(throws: SMTPEmailAdapter.SMTPError.self) {
                try await smtp.adapter().send(EmailMessage(to: "x@example.com\r\nBcc: evil@example.com", subject: "s", text: "t"))
            }
        }
    }

    @Test("nothing listening: the adapter fails with a clear error")
    func unreachable() async throws {
        let adapter = SMTPEmailAdapter(.init(host: "127.0.0.1", port: 1, from: "a@b.co", timeout: .seconds(2)))
        let error = await #expect(throws: SMTPEmailAdapter.SMTPError.self) {
            try await adapter.send(EmailMessage(to: "x@example.com", subject: "s", text: "t"))
        }
        #expect(error?.description.contains("cannot connect") == true)
    }

    @Test("a server that accepts but never answers: the send gives up after the timeout")
    func silentServer() async throws {
        // A listening socket nobody accepts on: the kernel completes the connection, no greeting ever comes.
        let fd = LoopbackSocket.socket()
        defer { close(fd) }
        let port = LoopbackSocket.bind(fd, port: 0)
        try #require(port > 0 && listen(fd, 4) == 0)
        let adapter = SMTPEmailAdapter(.init(host: "127.0.0.1", port: port, from: "a@b.co", timeout: .milliseconds(500)))
        let started = ContinuousClock.now
        let error = await #expect(throws: SMTPEmailAdapter.SMTPError.self) {
            try await adapter.send(EmailMessage(to: "x@example.com", subject: "s", text: "t"))
        }
        #expect(error?.description.contains("timed out") == true)
        // 0.5 s of timeout, with room for a loaded machine: what matters is that it does not hang.
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test("end to end: a password reset mailed through SMTP, its link followed over HTTP", arguments: Backend.all)
    func endToEnd(_ backend: Backend) async throws {
        try await SMTPTestServer.with { smtp in
            let options = TestServer.options { o in
                o.accounts.bcryptCost = 4
                o.appName = "SMTP App"
                o.email.adapter = smtp.adapter()
            }
            try await TestServer.with(backend: backend, options) { p in
                _ = try await p.signUp("nora", "old-password", extra: ["email": "nora@example.com"])
                let r = try await p.request(.post, "/requestPasswordReset", ["email": "nora@example.com"], master: false)
                #expect(r.status == 200)
                let message = try await smtp.messages(count: 1)[0]
                #expect(message["rcpt_tos"] == ["nora@example.com"])
                #expect(message["subject"] == "Password Reset for SMTP App")
                let text = try #require(message["body"]?.stringValue)
                let link = try #require(text.split(whereSeparator: \.isNewline).map(String.init).first { $0.hasPrefix("http") })
                #expect(link.contains("/parse/apps/test-app/request_password_reset?token=") && !link.contains("username="))
                let page = try await p.follow(link)
                #expect(page.status == 200 && page.isHTML)
                let token = try #require(linkParameter(link, "token"))
                let done = try await p.postForm("/apps/test-app/request_password_reset", [("new_password", "new-password"), ("token", token)])
                #expect(done.status == 200)
                let login = try await p.logIn("nora", "new-password")
                #expect(login.status == 200)
            }
        }
    }

    @Test("the logging adapter logs recipient and subject at info, the link only at debug")
    func loggingAdapter() async throws {
        let capture = LogCapture()
        let logger = Logger(label: "test") { _ in capture }
        let link = "http://localhost/parse/apps/a/request_password_reset?token=SECRET-TOKEN&username=u"
        try await LoggingEmailAdapter(logger: logger).send(EmailTemplates.passwordReset(to: "u@example.com", username: "u", appName: "A", link: link))
        let lines = capture.lines
        let info = lines.filter { $0.0 >= .info }.map(\.1).joined(separator: "\n")
        #expect(info.contains("u@example.com") && info.contains("Password Reset for A"))
        #expect(!info.contains("SECRET-TOKEN"))
        #expect(lines.contains { $0.0 == .debug && $0.1.contains("SECRET-TOKEN") })
    }
}
