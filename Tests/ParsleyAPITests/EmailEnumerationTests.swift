import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// `/verificationEmailRequest`, `/requestPasswordReset` and the resend form do not tell an attacker which emails
/// (or usernames) have accounts: Parse Server's `emailVerifySuccessOnInvalidEmail` and
/// `passwordPolicy.resetPasswordSuccessOnInvalidEmail`, both true by default (also without a password policy).
@Suite("Emails: no account enumeration")
struct EmailEnumerationTests {
    static func options(_ mail: MailBox, _ configure: (inout ParseServerOptions) -> Void = { _ in }) -> ParseServerOptions {
        EmailTests.options(mail) { o in
            o.email.verifyUserEmails = true
            configure(&o)
        }
    }

    /// Signs up `name` with `name@example.com` and opens the verification link (mail `index`).
    static func verifiedUser(_ p: ParseClient, _ mail: MailBox, _ name: String, mailIndex index: Int) async throws {
        _ = try await p.signUp(name, "password-1", extra: ["email": .string("\(name)@example.com")])
        let opened = try await p.follow(try await mail.link(index))
        #expect(opened.status == 200)
    }

    @Test("by default: unknown and already verified emails answer {} like any other, and nothing is mailed", arguments: Backend.all)
    func successEitherWay(_ backend: Backend) async throws {
        let mail = MailBox()
        try await TestServer.with(backend: backend, Self.options(mail)) { p in
            #expect(p.options.email.verifySuccessOnInvalidEmail && p.options.accounts.passwordPolicy == nil)
            try await Self.verifiedUser(p, mail, "vera", mailIndex: 0)
            _ = try await p.signUp("uma", "password-1", extra: ["email": "uma@example.com"])
            _ = try await mail.wait(count: 2)

            let unknown = try await p.request(.post, "/verificationEmailRequest", ["email": "nobody@example.com"], master: false)
            #expect(unknown.status == 200 && unknown.json == [:], "\(unknown.json)")
            let verified = try await p.request(.post, "/verificationEmailRequest", ["email": "vera@example.com"], master: false)
            #expect(verified.status == 200 && verified.json == [:], "\(verified.json)")
            let pending = try await p.request(.post, "/verificationEmailRequest", ["email": "uma@example.com"], master: false)
            #expect(pending.status == 200 && pending.json == [:])
            let resent = try await mail.wait(count: 3)
            #expect(resent[2].to == "uma@example.com")

            // No password policy configured at all: an unknown email still answers {}.
            let reset = try await p.request(.post, "/requestPasswordReset", ["email": "nobody@example.com"], master: false)
            #expect(reset.status == 200 && reset.json == [:], "\(reset.json)")
            let knownReset = try await p.request(.post, "/requestPasswordReset", ["email": "vera@example.com"], master: false)
            #expect(knownReset.status == 200 && knownReset.json == [:])
            _ = try await mail.wait(count: 4)

            // The resend form of the invalid-link page: an unknown or verified username looks like any other.
            for username in ["nobody", "vera"] {
                let page = try await p.postForm("/apps/test-app/resend_verification_email", [("username", username)])
                #expect(page.status == 200 && page.html.contains("Link sent"), "\(username): \(page.status)")
            }
            // Invalid requests still answer their errors.
            let missing = try await p.request(.post, "/verificationEmailRequest", [:], master: false)
            #expect(missing.code == 204)
            let number = try await p.request(.post, "/verificationEmailRequest", ["email": 7], master: false)
            #expect(number.code == 125)
            try await Task.sleep(for: .milliseconds(200))
            #expect(await mail.messages.count == 4)
        }
    }

    @Test(
        "with emailVerifySuccessOnInvalidEmail and resetPasswordSuccessOnInvalidEmail false: 205, -1 and 101 as Parse Server", arguments: Backend.all)
    func errorsWhenConfigured(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = Self.options(mail) {
            $0.email.verifySuccessOnInvalidEmail = false
            $0.accounts.passwordPolicy = PasswordPolicy(resetPasswordSuccessOnInvalidEmail: false)
        }
        try await TestServer.with(backend: backend, options) { p in
            try await Self.verifiedUser(p, mail, "walt", mailIndex: 0)
            let unknown = try await p.request(.post, "/verificationEmailRequest", ["email": "nobody@example.com"], master: false)
            #expect(unknown.status == 400)
            #expect(unknown.json == ["code": 205, "error": "No user found with email nobody@example.com"])
            let verified = try await p.request(.post, "/verificationEmailRequest", ["email": "walt@example.com"], master: false)
            #expect(verified.status == 400)
            #expect(verified.json == ["code": -1, "error": "Email walt@example.com is already verified."])
            let reset = try await p.request(.post, "/requestPasswordReset", ["email": "nobody@example.com"], master: false)
            #expect(reset.status == 404)
            #expect(reset.json == ["code": 101, "error": "A user with that email does not exist."])
            let page = try await p.postForm("/apps/test-app/resend_verification_email", [("username", "nobody")])
            #expect(page.status == 400)
        }
    }
}
