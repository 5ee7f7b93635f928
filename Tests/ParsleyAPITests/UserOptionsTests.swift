import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

@testable import ParsleyServer

/// Parse Server's `convertEmailToLowercase`, `convertUsernameToLowercase`, `sendUserEmailVerification`,
/// `emailVerifyTokenReuseIfValid` and `preserveFileName`, through the real server.
@Suite("Parse Server options: lower-cased users, verification mails, kept file names")
struct UserOptionsTests {
    static func lowercasing(_ mail: MailBox) -> ParseServerOptions {
        EmailTests.options(mail) { o in
            o.accounts.convertEmailToLowercase = true
            o.accounts.convertUsernameToLowercase = true
        }
    }

    @Test("convertEmailToLowercase/convertUsernameToLowercase: sign-up and updates store lower case", arguments: Backend.all)
    func lowercaseStored(_ backend: Backend) async throws {
        let mail = MailBox()
        try await TestServer.with(backend: backend, Self.lowercasing(mail)) { p in
            let (id, session) = try await p.signUp("Alice.Smith", extra: ["email": "Alice@Example.COM"])
            let me = try await p.asUser(session, .get, "/users/me")
            #expect(me["username"] == "alice.smith")
            #expect(me["email"] == "alice@example.com")
            // Queries match what is stored.
            let found = try await p.request(.get, "/classes/_User?where=" + ParseClient.encode(#"{"username":"alice.smith"}"#))
            #expect(found["results"]?.arrayValue?.count == 1)

            let changed = try await p.asUser(session, .put, "/users/\(id)", ["username": "ALICE", "email": "A.Smith@Example.org"])
            #expect(changed.status == 200)
            let after = try await p.asUser(session, .get, "/users/me")
            #expect(after["username"] == "alice")
            #expect(after["email"] == "a.smith@example.org")

            // The master key's writes are lower-cased too (Parse Server does it below the permission checks).
            let byMaster = try await p.request(.put, "/users/\(id)", ["username": "Alice.Master"])
            #expect(byMaster.status == 200)
            let stored = try await p.request(.get, "/users/\(id)")
            #expect(stored["username"] == "alice.master")
        }
    }

    @Test("convertEmailToLowercase/convertUsernameToLowercase: log-in, reset and verification requests find any case", arguments: Backend.all)
    func lowercaseLookups(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = EmailTests.options(mail) { o in
            o.accounts.convertEmailToLowercase = true
            o.accounts.convertUsernameToLowercase = true
            o.email.verifyUserEmails = true
            o.accounts.passwordPolicy = PasswordPolicy(resetPasswordSuccessOnInvalidEmail: false)
        }
        try await TestServer.with(backend: backend, options) { p in
            _ = try await p.signUp("Bob", "bob-secret", extra: ["email": "Bob@Example.com"])
            _ = try await mail.wait(count: 1)
            let byName = try await p.logIn("BOB", "bob-secret")
            #expect(byName.status == 200 && byName["username"] == "bob")
            let byEmail = try await p.request(
                .post, "/login", ["email": "BOB@example.COM", "password": "bob-secret"], master: false)
            #expect(byEmail.status == 200 && byEmail["email"] == "bob@example.com")
            let wrong = try await p.logIn("BOB", "not-it")
            #expect(wrong.status == 404 && wrong.code == 101)

            let reset = try await p.request(.post, "/requestPasswordReset", ["email": "BOB@EXAMPLE.COM"], master: false)
            #expect(reset.status == 200 && reset.json == [:])
            let resetMail = try await mail.wait(count: 2)[1]
            #expect(resetMail.to == "bob@example.com")

            let verify = try await p.request(.post, "/verificationEmailRequest", ["email": "Bob@Example.Com"], master: false)
            #expect(verify.status == 200 && verify.json == [:])
            let verifyMail = try await mail.wait(count: 3)[2]
            #expect(verifyMail.to == "bob@example.com")
            #expect(linkParameter(try #require(verifyMail.link), "token") != nil)
        }
    }

    @Test("without the options, names and emails are stored and looked up as sent", arguments: Backend.all)
    func caseKeptByDefault(_ backend: Backend) async throws {
        let mail = MailBox()
        try await TestServer.with(backend: backend, EmailTests.options(mail)) { p in
            let (_, session) = try await p.signUp("Carol", extra: ["email": "Carol@Example.com"])
            let me = try await p.asUser(session, .get, "/users/me")
            #expect(me["username"] == "Carol" && me["email"] == "Carol@Example.com")
            let other = try await p.logIn("CAROL", "secret-pw")
            #expect(other.status == 404 && other.code == 101)
        }
    }

    @Test("sendUserEmailVerification false: no verification mail, yet emailVerified false and the request answers {}", arguments: Backend.all)
    func noVerificationMail(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = EmailTests.options(mail) { o in
            o.email.verifyUserEmails = true
            o.email.sendUserEmailVerification = false
        }
        try await TestServer.with(backend: backend, options) { p in
            let (id, session) = try await p.signUp("dora", extra: ["email": "dora@example.com"])
            let me = try await p.asUser(session, .get, "/users/me")
            #expect(me["emailVerified"] == false)
            let changed = try await p.asUser(session, .put, "/users/\(id)", ["email": "dora2@example.com"])
            #expect(changed.status == 200)
            let request = try await p.request(.post, "/verificationEmailRequest", ["email": "dora2@example.com"], master: false)
            #expect(request.status == 200 && request.json == [:])
            // Password-reset mails are not verification mails: still sent (and they show the adapter works).
            let reset = try await p.request(.post, "/requestPasswordReset", ["email": "dora2@example.com"], master: false)
            #expect(reset.status == 200)
            let sent = try await mail.wait(count: 1)
            try await Task.sleep(for: .milliseconds(200))
            let all = await mail.messages
            #expect(sent[0].link?.contains("request_password_reset") == true)
            #expect(all.count == 1, "\(all.map(\.subject))")
            let after = try await p.asUser(session, .get, "/users/me")
            #expect(after["emailVerified"] == false)
        }
    }

    @Test("emailVerifyTokenReuseIfValid: a verification request re-sends the unexpired token", arguments: Backend.all)
    func reuseVerifyToken(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = EmailTests.options(mail) { o in
            o.email.verifyUserEmails = true
            o.email.verifyTokenValidityDuration = 3600
            o.email.verifyTokenReuseIfValid = true
        }
        try await TestServer.with(backend: backend, options) { p in
            let (_, session) = try await p.signUp("emil", extra: ["email": "emil@example.com"])
            let first = try await mail.token(0)
            let again = try await p.request(.post, "/verificationEmailRequest", ["email": "emil@example.com"], master: false)
            #expect(again.status == 200)
            #expect(try await mail.token(1) == first)
            // The resend form of the invalid-link page reuses it too.
            let form = try await p.postForm("/apps/test-app/resend_verification_email", [("token", first)])
            #expect(form.status == 200)
            #expect(try await mail.token(2) == first)
            let opened = try await p.follow(try await mail.link(2))
            #expect(opened.status == 200)
            let me = try await p.asUser(session, .get, "/users/me")
            #expect(me["emailVerified"] == true)
        }
    }

    @Test("emailVerifyTokenReuseIfValid: an expired token is replaced", arguments: Backend.all)
    func reuseOnlyWhileValid(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = EmailTests.options(mail) { o in
            o.email.verifyUserEmails = true
            o.email.verifyTokenValidityDuration = 1
            o.email.verifyTokenReuseIfValid = true
        }
        try await TestServer.with(backend: backend, options) { p in
            _ = try await p.signUp("fred", extra: ["email": "fred@example.com"])
            let first = try await mail.token(0)
            try await Task.sleep(for: .milliseconds(1100))
            _ = try await p.request(.post, "/verificationEmailRequest", ["email": "fred@example.com"], master: false)
            let second = try await mail.token(1)
            #expect(second != first)
            let opened = try await p.follow(try await mail.link(1))
            #expect(opened.status == 200)
        }
    }

    @Test("emailVerifyTokenReuseIfValid without emailVerifyTokenValidityDuration stops the start")
    func reuseNeedsValidity() throws {
        try ParseServerOptionsTests.withTempDir { dir in
            var env = ParseServerOptionsTests.baseEnvironment(dir)
            env["PARSE_SERVER_EMAIL_VERIFY_TOKEN_REUSE_IF_VALID"] = "true"
            #expect(throws: (any Error).self) {
                _ = try ServeSetup(OptionValues(environment: env), logger: ParseServerOptionsTests.quietLogger)
            }
            env["PARSE_SERVER_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION"] = "60"
            env["PARSE_SERVER_SEND_USER_EMAIL_VERIFICATION"] = "false"
            env["PARSE_SERVER_CONVERT_EMAIL_TO_LOWERCASE"] = "true"
            env["PARSE_SERVER_PRESERVE_FILE_NAME"] = "true"
            let setup = try ServeSetup(OptionValues(environment: env), logger: ParseServerOptionsTests.quietLogger)
            #expect(setup.options.email.verifyTokenReuseIfValid)
            #expect(!setup.options.email.sendUserEmailVerification)
            #expect(setup.options.accounts.convertEmailToLowercase && !setup.options.accounts.convertUsernameToLowercase)
            #expect(setup.options.files.preserveFileName)
        }
    }

    @Test(
        "preserveFileName: uploads keep the client's name; the same name again replaces the file",
        arguments: [FileBackend.filesystem, .database], Backend.all)
    func preserveFileName(_ files: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(files, database: database, { $0.files.preserveFileName = true }) { f in
            let first = try await f.stored("report.txt", Array("first".utf8), contentType: "text/plain")
            #expect(first.name == "report.txt")
            #expect(first.path.hasSuffix("/parse/files/test-app/report.txt"))
            let got = try await f.get(first.path)
            #expect(got.bytes == Array("first".utf8))
            // The extension is still added from the content type.
            let pic = try await f.stored("pic", [0x89, 0x50, 0x4E, 0x47], contentType: "image/png")
            #expect(pic.name == "pic.png")

            let second = try await f.stored("report.txt", Array("second, longer".utf8), contentType: "text/plain")
            #expect(second.name == "report.txt")
            let replaced = try await f.get(first.path)
            #expect(replaced.status == 200)
            #expect(replaced.bytes == Array("second, longer".utf8))
        }
    }
}
