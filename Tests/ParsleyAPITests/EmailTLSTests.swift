import Foundation
import HTTPTypes
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import Testing

/// A certificate authority made for one test (openssl), and a server certificate it signed.
struct TestCertificates {
    let dir: URL
    var caFile: String { dir.appendingPathComponent("ca.pem").path }
    var certFile: String { dir.appendingPathComponent("server.pem").path }
    var keyFile: String { dir.appendingPathComponent("server.key").path }
    var pair: (cert: String, key: String) { (certFile, keyFile) }

    /// A CA, and a server certificate for `names` (`IP:127.0.0.1`, `DNS:localhost`).
    static func make(names: String = "IP:127.0.0.1,DNS:localhost") async throws -> TestCertificates {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-certs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let script = """
            set -e
            cd '\(dir.path)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 \
              -subj '/CN=Parsley Test CA' -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign'
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr -subj '/CN=parsley-test-smtp'
            printf 'subjectAltName=\(names)\\nextendedKeyUsage=serverAuth\\nbasicConstraints=CA:FALSE\\n' > ext.cnf
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext.cnf
            """
        // posix_spawn and waitpid (spawned), not Foundation's Process, whose end may never be noticed on Linux
        // once this process has many descriptors open.
        guard await spawned(["/bin/sh", "-c", script]) == 0 else { throw Failure("openssl could not make the test certificates") }
        return TestCertificates(dir: dir)
    }

    func remove() { try? FileManager.default.removeItem(at: dir) }
}

/// Mail over TLS against a real SMTP server (aiosmtpd) with a certificate of a CA made for the test: STARTTLS,
/// implicit TLS, a server without TLS (credentials must not leave), an unknown CA, a wrong host name.
@Suite("Mail over TLS: STARTTLS, implicit TLS, certificates, credentials never in the clear")
struct EmailTLSTests {
    static let login = (username: "mailer", password: "s3cret pass")

    static func message(_ subject: String) -> EmailMessage { EmailMessage(to: "bob@example.com", subject: subject, text: "Hello over TLS") }

    @Test("STARTTLS: the connection is upgraded before AUTH; the message and the login arrive over TLS")
    func starttls() async throws {
        let certs = try await TestCertificates.make()
        defer { certs.remove() }
        try await SMTPTestServer.with(.starttls, certificate: certs.pair) { smtp in
            let adapter = smtp.adapter(username: Self.login.username, password: Self.login.password, security: .starttls, caFile: certs.caFile)
            try await adapter.send(Self.message("starttls"))
            let received = try await smtp.messages(count: 1)
            #expect(received[0]["tls"] == true && received[0]["login"] == "mailer" && received[0]["subject"] == "starttls")
            #expect(smtp.authAttempts.allSatisfy { $0["tls"] == true } && !smtp.authAttempts.isEmpty)
            // By name too (the certificate names localhost).
            try await smtp.adapter(host: "localhost", security: .starttls, caFile: certs.caFile).send(Self.message("by name"))
            #expect(try await smtp.messages(count: 2)[1]["tls"] == true)
        }
    }

    @Test("implicit TLS (port 465 style): TLS from the first byte")
    func implicitTLS() async throws {
        let certs = try await TestCertificates.make()
        defer { certs.remove() }
        try await SMTPTestServer.with(.tls, certificate: certs.pair) { smtp in
            let adapter = smtp.adapter(username: Self.login.username, password: Self.login.password, security: .tls, caFile: certs.caFile)
            try await adapter.send(Self.message("implicit"))
            let received = try await smtp.messages(count: 1)
            #expect(received[0]["tls"] == true && received[0]["login"] == "mailer")
            // A plain client against it gets nowhere (and gives up within its timeout).
            await #expect(throws: (any Error).self) {
                try await SMTPEmailAdapter(
                    .init(host: "127.0.0.1", port: smtp.port, from: "a@b.test", timeout: .seconds(3), security: .none)
                ).send(Self.message("plain"))
            }
        }
    }

    @Test("a server without STARTTLS: credentials are refused before they leave; without credentials the mail goes out")
    func noTLSOffered() async throws {
        try await SMTPTestServer.with(.plain) { smtp in
            let withLogin = smtp.adapter(username: Self.login.username, password: Self.login.password, security: .starttls)
            let error = await #expect(throws: SMTPEmailAdapter.SMTPError.self) { try await withLogin.send(Self.message("refused")) }
            #expect(error.map { "\($0)".contains("does not offer STARTTLS") } == true)
            #expect(smtp.authAttempts.isEmpty, "the server saw an AUTH: \(smtp.authAttempts)")
            // A local relay without credentials: sent as is.
            try await smtp.adapter(security: .starttls).send(Self.message("relay"))
            let received = try await smtp.messages(count: 1)
            #expect(received.count == 1 && received[0]["subject"] == "relay" && received[0]["tls"] == false)
        }
    }

    @Test("an unknown CA or a certificate for another name: nothing is sent")
    func certificateChecks() async throws {
        let certs = try await TestCertificates.make()
        let other = try await TestCertificates.make(names: "DNS:mail.example.test")
        defer {
            certs.remove()
            other.remove()
        }
        try await SMTPTestServer.with(.starttls, certificate: certs.pair) { smtp in
            let untrusted = smtp.adapter(username: Self.login.username, password: Self.login.password, security: .starttls)
            await #expect(throws: (any Error).self) { try await untrusted.send(Self.message("untrusted")) }
            #expect(smtp.authAttempts.isEmpty)
        }
        try await SMTPTestServer.with(.tls, certificate: other.pair) { smtp in
            let wrongName = smtp.adapter(username: Self.login.username, password: Self.login.password, security: .tls, caFile: other.caFile)
            await #expect(throws: (any Error).self) { try await wrongName.send(Self.message("wrong name")) }
            #expect(smtp.authAttempts.isEmpty)
            let none = (try? String(contentsOf: smtp.messagesFile, encoding: .utf8)) ?? ""
            #expect(none.isEmpty)
        }
    }

    @Test("PARSLEY_SMTP_SECURITY and PARSLEY_SMTP_CA_FILE: the parsley process mails over TLS; bad values stop the start")
    func options() async throws {
        typealias Config = ParseServerConfigProcessTests
        let certs = try await TestCertificates.make()
        let dir = try ProcessTests.tempDir()
        defer {
            certs.remove()
            try? FileManager.default.removeItem(at: dir)
        }
        try await SMTPTestServer.with(.starttls, certificate: certs.pair) { smtp in
            var environment = [
                "PARSE_SERVER_APPLICATION_ID": Config.appId, "PARSE_SERVER_MASTER_KEY": Config.masterKey, "PORT": "0",
                "PARSE_SERVER_HOST": "127.0.0.1", "PARSE_SERVER_MOUNT_PATH": Config.mount,
                "PARSLEY_SMTP_HOST": "127.0.0.1", "PARSLEY_SMTP_PORT": String(smtp.port), "PARSLEY_SMTP_FROM": "noreply@parsley.test",
                "PARSLEY_SMTP_USERNAME": "mailer", "PARSLEY_SMTP_PASSWORD": "s3cret pass", "PARSLEY_SMTP_CA_FILE": certs.caFile,
                "PARSE_SERVER_VERIFY_USER_EMAILS": "true", "PARSE_SERVER_PUBLIC_SERVER_URL": "http://127.0.0.1/api",
                "PARSE_SERVER_APP_NAME": "TLS test",
            ]
            let server = try Config.Child([], environment: environment, dataDir: dir)
            defer { server.process.killNow() }
            try await server.waitUntilHealthy(mount: Config.mount)
            try await server.client { p in
                let signUp = try await p.request(
                    .post, "/users", ["username": "tina", "password": "pw-123456", "email": "tina@example.com"], master: false)
                #expect(signUp.status == 201, "\(signUp.json)")
            }
            let received = try await smtp.messages(count: 1)
            #expect(received[0]["tls"] == true && received[0]["login"] == "mailer" && received[0]["to"] == "tina@example.com")
            #expect(!server.output.contains("s3cret pass"))

            environment["PARSLEY_SMTP_SECURITY"] = "ssl3"
            let (status, refused) = try await Config.refusedStart([], environment)
            #expect(status == 2 && refused.contains("PARSLEY_SMTP_SECURITY must be starttls, tls or none"), "\(refused)")
            environment["PARSLEY_SMTP_SECURITY"] = "tls"
            environment["PARSLEY_SMTP_CA_FILE"] = "/nonexistent/ca.pem"
            #expect(try await Config.refusedStart([], environment).1.contains("PARSLEY_SMTP_CA_FILE"))
        }
    }
}
