import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Records what the server mails: a test double of the email transport only; everything else is the real server.
actor MailBox: EmailAdapter {
    private(set) var messages: [EmailMessage] = []

    func send(_ message: EmailMessage) {
        messages.append(message)
    }

    /// The messages once there are at least `count` (sign-up mails are sent in the background).
    func wait(count: Int) async throws -> [EmailMessage] {
        for _ in 0..<200 {
            if messages.count >= count { return messages }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw Failure("expected \(count) emails, got \(messages.count): \(messages.map(\.subject))")
    }

    /// The link of message `index` (waiting for it).
    func link(_ index: Int) async throws -> String {
        guard let link = try await wait(count: index + 1)[index].link else { throw Failure("message \(index) has no link") }
        return link
    }

    /// The token of the link of message `index`.
    func token(_ index: Int) async throws -> String {
        let link = try await link(index)
        guard let token = linkParameter(link, "token") else { throw Failure("no token in \(link)") }
        return token
    }
}

extension ParseClient {
    /// Opens a mailed link on this server: the part from the mount path on, without credentials.
    func follow(_ link: String) async throws -> Reply {
        guard let range = link.range(of: mount + "/apps/") else { throw Failure("not a link to this server: \(link)") }
        return try await raw(.get, String(link[range.lowerBound...]), headers: HTTPFields())
    }

    /// Posts an HTML form (`application/x-www-form-urlencoded`), as a browser does.
    func postForm(_ path: String, _ fields: [(String, String)]) async throws -> Reply {
        var headers = HTTPFields()
        headers[.contentType] = "application/x-www-form-urlencoded"
        let body = fields.map { "\($0.0)=\(Self.encode($0.1))" }.joined(separator: "&")
        return try await raw(.post, mount + path, body: body, headers: headers)
    }

    func logIn(_ username: String, _ password: String) async throws -> Reply {
        try await request(.post, "/login", ["username": .string(username), "password": .string(password)], master: false)
    }
}

extension Reply {
    var html: String { json.stringValue ?? "" }
    var isHTML: Bool { headers[.contentType]?.hasPrefix("text/html") == true }
}

/// A query parameter of a link.
func linkParameter(_ link: String, _ name: String) -> String? {
    guard let query = link.split(separator: "?", maxSplits: 1).last else { return nil }
    for pair in query.split(separator: "&") {
        let kv = pair.split(separator: "=", maxSplits: 1)
        if kv.count == 2, kv[0] == name { return String(kv[1]).removingPercentEncoding }
    }
    return nil
}

@Suite("Emails, password policy, account lockout")
struct EmailTests {
    static func options(_ mail: MailBox, _ configure: (inout ParseServerOptions) -> Void = { _ in }) -> ParseServerOptions {
        TestServer.options { o in
            o.accounts.bcryptCost = 4
            o.email.adapter = mail
            o.appName = "Test App"
            configure(&o)
        }
    }

    @Test("password reset: mail with link, HTML form, new password set, sessions revoked, link single-use", arguments: Backend.all)
    func passwordReset(_ backend: Backend) async throws {
        let mail = MailBox()
        try await TestServer.with(backend: backend, Self.options(mail)) { p in
            let (_, session) = try await p.signUp("carol", "old-password", extra: ["email": "carol@example.com"])
            let r = try await p.request(.post, "/requestPasswordReset", ["email": "carol@example.com"], master: false)
            #expect(r.status == 200)
            #expect(r.json == [:])
            let message = try await mail.wait(count: 1)[0]
            #expect(message.to == "carol@example.com")
            #expect(message.subject == "Password Reset for Test App")
            let link = try #require(message.link)
            #expect(link.contains("/parse/apps/test-app/request_password_reset?token="))
            #expect(linkParameter(link, "username") == nil, "Parse Server 8's links carry the token alone")
            #expect(message.text.contains(link) && message.text.contains("your username is 'carol'"))
            let token = try #require(linkParameter(link, "token"))
            #expect(token.count == 25)

            // The link opens a form, without any Parse credentials.
            let page = try await p.follow(link)
            #expect(page.status == 200)
            #expect(page.isHTML)
            #expect(page.html.contains("name=\"new_password\"") && page.html.contains(token))
            #expect(page.headers[.cacheControl] == "no-store")

            let done = try await p.postForm("/apps/test-app/request_password_reset", [("new_password", "new-password"), ("token", token)])
            #expect(done.status == 200)
            #expect(done.isHTML && done.html.contains("Your password has been updated."))

            let me = try await p.asUser(session, .get, "/users/me")
            #expect(me.code == 209)
            let old = try await p.logIn("carol", "old-password")
            #expect(old.status == 404 && old.code == 101)
            let new = try await p.logIn("carol", "new-password")
            #expect(new.status == 200 && new["sessionToken"] != nil)

            // Spent: neither the page nor the form accept the token again.
            let reopened = try await p.follow(link)
            #expect(reopened.status == 400 && reopened.html.contains("Invalid link"))
            let replay = try await p.postForm(
                "/apps/test-app/request_password_reset", [("new_password", "third-password"), ("token", token), ("username", "carol")])
            #expect(replay.status == 400)
            let still = try await p.logIn("carol", "new-password")
            #expect(still.status == 200)
        }
    }

    @Test("requestPasswordReset errors: 204, 125, unknown email {} (101 when configured), wrong app id 403", arguments: Backend.all)
    func passwordResetErrors(_ backend: Backend) async throws {
        let mail = MailBox()
        try await TestServer.with(backend: backend, Self.options(mail)) { p in
            let missing = try await p.request(.post, "/requestPasswordReset", [:], master: false)
            #expect(missing.status == 400)
            #expect(missing.json == ["code": 204, "error": "you must provide an email"])
            let number = try await p.request(.post, "/requestPasswordReset", ["email": 5], master: false)
            #expect(number.code == 125)
            let unknown = try await p.request(.post, "/requestPasswordReset", ["email": "nobody@example.com"], master: false)
            #expect(unknown.status == 200 && unknown.json == [:])
            let noAppId = try await p.raw(.post, "/parse/requestPasswordReset", body: "{\"email\":\"a@b.co\"}", headers: HTTPFields())
            #expect(noAppId.status == 403)
            let wrongApp = try await p.raw(.get, "/parse/apps/other-app/request_password_reset?token=x&username=y", headers: HTTPFields())
            #expect(wrongApp.status == 403)
            let badToken = try await p.raw(.get, "/parse/apps/test-app/request_password_reset?token=nope&username=y", headers: HTTPFields())
            #expect(badToken.status == 400 && badToken.isHTML)
            let sent = await mail.messages
            #expect(sent.isEmpty)
        }
        let strict = Self.options(mail) { $0.accounts.passwordPolicy = PasswordPolicy(resetPasswordSuccessOnInvalidEmail: false) }
        try await TestServer.with(backend: backend, strict) { p in
            let unknown = try await p.request(.post, "/requestPasswordReset", ["email": "nobody@example.com"], master: false)
            #expect(unknown.status == 404)
            #expect(unknown.json == ["code": 101, "error": "A user with that email does not exist."])
        }
    }

    @Test("a reset link expires after passwordPolicy.resetTokenValidityDuration", arguments: Backend.all)
    func resetLinkExpires(_ backend: Backend) async throws {
        let mail = MailBox()
        try await TestServer.with(backend: backend, Self.options(mail) { $0.accounts.passwordPolicy = PasswordPolicy(resetTokenValidityDuration: 5) })
        { p in
            _ = try await p.signUp("dan", "password-1", extra: ["email": "dan@example.com"])
            _ = try await p.request(.post, "/requestPasswordReset", ["email": "dan@example.com"], master: false)
            let link = try await mail.link(0)
            let fresh = try await p.follow(link)
            #expect(fresh.status == 200)
            try await Task.sleep(for: .milliseconds(5300))
            let stale = try await p.follow(link)
            #expect(stale.status == 400 && stale.html.contains("expired"))
            let token = try #require(linkParameter(link, "token"))
            let post = try await p.postForm("/apps/test-app/request_password_reset", [("new_password", "password-2"), ("token", token)])
            #expect(post.status == 400)
            let login = try await p.logIn("dan", "password-1")
            #expect(login.status == 200)
        }
    }

    @Test(
        "verifyUserEmails: sign-up mails a link, emailVerified false until it is opened; single use; email change resets it", arguments: Backend.all)
    func emailVerification(_ backend: Backend) async throws {
        let mail = MailBox()
        // The -1 for an already verified email only shows with emailVerifySuccessOnInvalidEmail off (EmailEnumerationTests).
        let options = Self.options(mail) {
            $0.email.verifyUserEmails = true
            $0.email.verifySuccessOnInvalidEmail = false
        }
        try await TestServer.with(backend: backend, options) { p in
            let (id, session) = try await p.signUp("frank", "password-1", extra: ["email": "frank@example.com"])
            let message = try await mail.wait(count: 1)[0]
            #expect(message.to == "frank@example.com")
            #expect(message.subject == "Please verify your e-mail for Test App")
            let link = try #require(message.link)
            #expect(link.contains("/parse/apps/test-app/verify_email?token=") && linkParameter(link, "username") == nil)
            #expect(message.text.contains("confirm the e-mail address frank@example.com"))
            let before = try await p.asUser(session, .get, "/users/me")
            #expect(before["emailVerified"] == false)

            let opened = try await p.follow(link)
            #expect(opened.status == 200 && opened.isHTML && opened.html.contains("verified"))
            let after = try await p.asUser(session, .get, "/users/me")
            #expect(after["emailVerified"] == true)
            let again = try await p.follow(link)
            #expect(again.status == 400 && again.html.contains("resend_verification_email"))

            let already = try await p.request(.post, "/verificationEmailRequest", ["email": "frank@example.com"], master: false)
            #expect(already.status == 400)
            #expect(already.json == ["code": -1, "error": "Email frank@example.com is already verified."])

            // A new address must be verified again.
            let changed = try await p.asUser(session, .put, "/users/\(id)", ["email": "frank2@example.com"])
            #expect(changed.status == 200)
            let second = try await mail.wait(count: 2)[1]
            #expect(second.to == "frank2@example.com")
            let unverified = try await p.asUser(session, .get, "/users/me")
            #expect(unverified["emailVerified"] == false)
            // Asking again replaces the token: the previous link stops working, the new one verifies.
            let resend = try await p.request(.post, "/verificationEmailRequest", ["email": "frank2@example.com"], master: false)
            #expect(resend.status == 200 && resend.json == [:])
            let third = try await mail.wait(count: 3)[2]
            #expect(third.to == "frank2@example.com")
            let previous = try await p.follow(try #require(second.link))
            #expect(previous.status == 400)
            let latest = try await p.follow(try #require(third.link))
            #expect(latest.status == 200)
            let verified = try await p.asUser(session, .get, "/users/me")
            #expect(verified["emailVerified"] == true)
            // Other fields leave the state alone.
            _ = try await p.asUser(session, .put, "/users/\(id)", ["nickname": "f"])
            let same = try await p.asUser(session, .get, "/users/me")
            #expect(same["emailVerified"] == true)
        }
    }

    @Test("verificationEmailRequest errors: 204, 125, 205; links expire after emailVerifyTokenValidityDuration", arguments: Backend.all)
    func verificationRequests(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = Self.options(mail) {
            $0.email.verifyUserEmails = true
            // 3 s: long enough for the fresh link to be followed in time on a loaded machine.
            $0.email.verifyTokenValidityDuration = 3
            $0.email.verifySuccessOnInvalidEmail = false  // for the 205 (the default answers {}: EmailEnumerationTests)
        }
        try await TestServer.with(backend: backend, options) { p in
            let missing = try await p.request(.post, "/verificationEmailRequest", [:], master: false)
            #expect(missing.json == ["code": 204, "error": "you must provide an email"])
            let number = try await p.request(.post, "/verificationEmailRequest", ["email": true], master: false)
            #expect(number.code == 125)
            let unknown = try await p.request(.post, "/verificationEmailRequest", ["email": "who@example.com"], master: false)
            #expect(unknown.status == 400)
            #expect(unknown.json == ["code": 205, "error": "No user found with email who@example.com"])

            let (_, session) = try await p.signUp("gina", "password-1", extra: ["email": "gina@example.com"])
            let first = try await mail.link(0)
            try await Task.sleep(for: .milliseconds(3300))
            let stale = try await p.follow(first)
            #expect(stale.status == 400)
            // The invalid-link page's form posts the expired link's token back and sends a fresh link.
            let staleToken = try #require(linkParameter(first, "token"))
            #expect(stale.html.contains("name=\"token\" value=\"\(staleToken)\""))
            let resent = try await p.postForm("/apps/test-app/resend_verification_email", [("token", staleToken)])
            #expect(resent.status == 200)
            let fresh = try await mail.link(1)
            let ok = try await p.follow(fresh)
            #expect(ok.status == 200)
            let me = try await p.asUser(session, .get, "/users/me")
            #expect(me["emailVerified"] == true)
        }
    }

    @Test("preventLoginWithUnverifiedEmail: no session at sign-up, log-in 205 until verified; preventSignup answers 205", arguments: Backend.all)
    func preventLogin(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = Self.options(mail) {
            $0.email.verifyUserEmails = true
            $0.email.preventLoginWithUnverifiedEmail = true
        }
        try await TestServer.with(backend: backend, options) { p in
            let signUp = try await p.request(
                .post, "/users", ["username": "hank", "password": "password-1", "email": "hank@example.com"], master: false)
            #expect(signUp.status == 201)
            #expect(signUp["objectId"] != nil && signUp["sessionToken"] == nil)
            let refused = try await p.logIn("hank", "password-1")
            #expect(refused.status == 400)
            #expect(refused.json == ["code": 205, "error": "User email is not verified."])
            let wrong = try await p.logIn("hank", "nope")
            #expect(wrong.code == 101)
            let link = try await mail.link(0)
            _ = try await p.follow(link)
            let allowed = try await p.logIn("hank", "password-1")
            #expect(allowed.status == 200 && allowed["emailVerified"] == true)
        }
        let strict = Self.options(mail) {
            $0.email.verifyUserEmails = true
            $0.email.preventLoginWithUnverifiedEmail = true
            $0.email.preventSignupWithUnverifiedEmail = true
        }
        try await TestServer.with(backend: backend, strict) { p in
            let signUp = try await p.request(
                .post, "/users", ["username": "ivy", "password": "password-1", "email": "ivy@example.com"], master: false)
            #expect(signUp.status == 400)
            #expect(signUp.json == ["code": 205, "error": "User email is not verified."])
            let users = try await p.request(.get, "/users")
            #expect(users.results.count == 1)
        }
    }

    @Test("password policy: pattern and username at sign-up, update and reset (142); history of the last N passwords", arguments: Backend.all)
    func passwordPolicy(_ backend: Backend) async throws {
        let mail = MailBox()
        let policy = PasswordPolicy(validatorPattern: "^(?=.*[0-9]).{8,}$", doNotAllowUsername: true, maxPasswordHistory: 2)
        try await TestServer.with(backend: backend, Self.options(mail) { $0.accounts.passwordPolicy = policy }) { p in
            let weak = try await p.request(.post, "/users", ["username": "jack", "password": "short"], master: false)
            #expect(weak.status == 400)
            #expect(weak.json == ["code": 142, "error": "Password does not meet the Password Policy requirements."])
            let named = try await p.request(.post, "/users", ["username": "jack", "password": "jack-12345"], master: false)
            #expect(named.json == ["code": 142, "error": "Password cannot contain your username."])
            let (id, session) = try await p.signUp("jack", "first-pass1", extra: ["email": "jack@example.com"])

            let cases: [(String, String?)] = [
                ("weak", "Password does not meet the Password Policy requirements."),
                ("first-pass1", "New password should not be the same as last 2 passwords."),
                ("second-pass2", nil),
                ("first-pass1", "New password should not be the same as last 2 passwords."),
                ("third-pass3", nil),
                ("first-pass1", nil),  // two changes later it may come back
            ]
            var token = session
            for (password, error) in cases {
                let r = try await p.asUser(token, .put, "/users/\(id)", ["password": .string(password)])
                if let error {
                    #expect(r.json == ["code": 142, "error": .string(error)], "\(password)")
                } else {
                    #expect(r.status == 200, "\(password): \(r.json)")
                    token = r["sessionToken"]?.stringValue ?? token
                }
            }
            let master = try await p.request(.put, "/users/\(id)", ["password": "nodigits"])
            #expect(master.code == 142)

            // Reset: a refused password shows the form again with the reason, and the link still works.
            _ = try await p.request(.post, "/requestPasswordReset", ["email": "jack@example.com"], master: false)
            let link = try await mail.link(0)
            let resetToken = try #require(linkParameter(link, "token"))
            let refused = try await p.postForm(
                "/apps/test-app/request_password_reset", [("new_password", "weak"), ("token", resetToken), ("username", "jack")])
            #expect(refused.status == 400)
            #expect(refused.html.contains("Password does not meet the Password Policy requirements.") && refused.html.contains("new_password"))
            let repeated = try await p.postForm(
                "/apps/test-app/request_password_reset", [("new_password", "first-pass1"), ("token", resetToken), ("username", "jack")])
            #expect(repeated.html.contains("New password should not be the same as last 2 passwords."))
            let accepted = try await p.postForm(
                "/apps/test-app/request_password_reset", [("new_password", "fourth-pass4"), ("token", resetToken), ("username", "jack")])
            #expect(accepted.status == 200)
            let login = try await p.logIn("jack", "fourth-pass4")
            #expect(login.status == 200)
        }
    }

    @Test("account lockout: locked after N failures with Parse Server's message, success resets the count, reset unlocks", arguments: Backend.all)
    func accountLockout(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = Self.options(mail) { $0.accounts.lockout = AccountLockout(duration: 5, threshold: 3, unlockOnPasswordReset: true) }
        let locked = "Your account is locked due to multiple failed login attempts. Please try again after 5 minute(s)"
        try await TestServer.with(backend: backend, options) { p in
            _ = try await p.signUp("kate", "right-pass", extra: ["email": "kate@example.com"])
            for _ in 0..<2 { _ = try await p.logIn("kate", "wrong") }
            let ok = try await p.logIn("kate", "right-pass")
            #expect(ok.status == 200)
            for _ in 0..<2 { _ = try await p.logIn("kate", "wrong") }
            let stillOpen = try await p.logIn("kate", "right-pass")
            #expect(stillOpen.status == 200, "a success resets the count")
            for attempt in 1...3 {
                let r = try await p.logIn("kate", "wrong")
                #expect(r.json == ["code": 101, "error": "Invalid username/password."], "attempt \(attempt)")
            }
            let refused = try await p.logIn("kate", "right-pass")
            #expect(refused.status == 404)
            #expect(refused.json == ["code": 101, "error": .string(locked)])
            let verify = try await p.request(.get, "/verifyPassword?username=kate&password=right-pass", master: false)
            #expect(verify["error"]?.stringValue == locked)
            // Other users are not affected.
            _ = try await p.signUp("liam", "liam-pass")
            let other = try await p.logIn("liam", "liam-pass")
            #expect(other.status == 200)

            _ = try await p.request(.post, "/requestPasswordReset", ["email": "kate@example.com"], master: false)
            let token = try await mail.token(0)
            let reset = try await p.postForm("/apps/test-app/request_password_reset", [("new_password", "fresh-pass"), ("token", token)])
            #expect(reset.status == 200)
            let unlocked = try await p.logIn("kate", "fresh-pass")
            #expect(unlocked.status == 200)
        }
    }

    @Test("without unlockOnPasswordReset a reset leaves the lock in place", arguments: Backend.all)
    func lockSurvivesReset(_ backend: Backend) async throws {
        let mail = MailBox()
        try await TestServer.with(backend: backend, Self.options(mail) { $0.accounts.lockout = AccountLockout(duration: 1, threshold: 1) }) { p in
            _ = try await p.signUp("mia", "mia-pass-1", extra: ["email": "mia@example.com"])
            _ = try await p.logIn("mia", "wrong")
            _ = try await p.request(.post, "/requestPasswordReset", ["email": "mia@example.com"], master: false)
            let token = try await mail.token(0)
            _ = try await p.postForm("/apps/test-app/request_password_reset", [("new_password", "mia-pass-2"), ("token", token)])
            let r = try await p.logIn("mia", "mia-pass-2")
            #expect(r.json["error"]?.stringValue?.hasPrefix("Your account is locked") == true)
        }
    }
}
