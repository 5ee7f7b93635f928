import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// `customPages` and `pages`: the email links' pages redirect to the app's own, or come from the app's files.
@Suite("Pages of the email links")
struct EmailPagesTests {
    static let custom: [String: String] = [
        "invalidLink": "https://app.example/invalid", "invalidVerificationLink": "https://app.example/invalid-verification",
        "linkSendSuccess": "https://app.example/sent", "linkSendFail": "https://app.example/not-sent",
        "choosePassword": "https://app.example/choose", "passwordResetSuccess": "https://app.example/reset-done",
        "verifyEmailSuccess": "https://app.example/verified", "parseFrameURL": "https://app.example/frame",
    ]

    /// The server path a `parseFrameURL` link stands for: its `link` with its token (no username since Parse Server 8).
    static func unframe(_ link: String) throws -> String {
        #expect(link.hasPrefix("https://app.example/frame?link="))
        #expect(linkParameter(link, "username") == nil)
        let path = try #require(linkParameter(link, "link"))
        let token = try #require(linkParameter(link, "token"))
        return "/parse\(path)?token=\(token)"
    }

    static func get(_ p: ParseClient, _ path: String, headers: HTTPFields = [:]) async throws -> Reply {
        try await p.raw(.get, path, headers: headers)
    }

    @Test(
        "customPages: Parse Server 8's 302 redirects with its query parameters (token, never username); parseFrameURL wraps the mailed links",
        arguments: Backend.all)
    func customPages(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = EmailTests.options(mail) {
            $0.email.verifyUserEmails = true
            $0.email.verifySuccessOnInvalidEmail = false
            $0.pages.customPages = Self.custom
        }
        try await TestServer.with(backend: backend, options) { p in
            _ = try await p.signUp("dave", "password-1", extra: ["email": "dave@example.com"])
            let verify = try Self.unframe(try await mail.link(0))
            #expect(verify.hasPrefix("/parse/apps/test-app/verify_email?token="))
            let verifyToken = try #require(linkParameter(verify, "token"))
            let opened = try await Self.get(p, verify)
            #expect(opened.status == 302)
            #expect(opened.headers[.location] == "https://app.example/verified")
            let again = try await Self.get(p, verify)
            #expect(again.status == 302)
            #expect(again.headers[.location] == "https://app.example/invalid-verification?token=\(verifyToken)&appId=test-app")
            let noToken = try await Self.get(p, "/parse/apps/test-app/verify_email?username=dave")
            #expect(noToken.headers[.location] == "https://app.example/invalid")

            // The invalid-verification page posts the token back (a spent one: nothing to send); 7.x forms a username.
            let spent = try await p.postForm("/apps/test-app/resend_verification_email", [("token", verifyToken)])
            #expect(spent.status == 302 && spent.headers[.location] == "https://app.example/not-sent")
            let verified = try await p.postForm("/apps/test-app/resend_verification_email", [("username", "dave")])
            #expect(verified.status == 302 && verified.headers[.location] == "https://app.example/not-sent")
            _ = try await p.signUp("erin", "password-1", extra: ["email": "erin@example.com"])
            let erinToken = try #require(linkParameter(try Self.unframe(try await mail.link(1)), "token"))
            let sent = try await p.postForm("/apps/test-app/resend_verification_email", [("token", erinToken)])
            #expect(sent.status == 302 && sent.headers[.location] == "https://app.example/sent")
            let byName = try await p.postForm("/apps/test-app/resend_verification_email", [("username", "erin")])
            #expect(byName.status == 302 && byName.headers[.location] == "https://app.example/sent")
            let nobody = try await p.postForm("/apps/test-app/resend_verification_email", [])
            #expect(nobody.headers[.location] == "https://app.example/invalid")

            // Password reset: the link redirects to the app's form with token, id and app.
            _ = try await p.request(.post, "/requestPasswordReset", ["email": "dave@example.com"], master: false)
            let reset = try Self.unframe(try await mail.link(4))
            let token = try #require(linkParameter(reset, "token"))
            let form = try await Self.get(p, reset)
            #expect(form.status == 302)
            #expect(form.headers[.location] == "https://app.example/choose?token=\(token)&id=test-app&app=Test%20App")
            let bogus = try await Self.get(p, "/parse/apps/test-app/request_password_reset?token=nope")
            #expect(bogus.headers[.location] == "https://app.example/invalid")

            // A failed reset goes back to the form with the error; a script (XHR) gets Parse errors instead.
            let wrong = try await p.postForm("/apps/test-app/request_password_reset", [("new_password", "new-password"), ("token", "wrong")])
            #expect(wrong.status == 302)
            let back = try #require(wrong.headers[.location])
            #expect(back.hasPrefix("https://app.example/choose?token=wrong&id=test-app&error="))
            #expect(back.hasSuffix("&app=Test%20App"))
            var xhr = HTTPFields()
            xhr[.contentType] = "application/x-www-form-urlencoded"
            xhr[HTTPField.Name("X-Requested-With")!] = "XMLHttpRequest"
            let missing = try await p.raw(.post, "/parse/apps/test-app/request_password_reset", body: "username=dave&new_password=x", headers: xhr)
            #expect(missing.status == 400 && missing.json == ["code": -1, "error": "Missing token"])

            let done = try await p.postForm("/apps/test-app/request_password_reset", [("new_password", "new-password"), ("token", token)])
            #expect(done.status == 302)
            #expect(done.headers[.location] == "https://app.example/reset-done")
            #expect(try await p.logIn("dave", "new-password").status == 200)
        }
    }

    @Test("pages router: pagesEndpoint, the app's page files with placeholders, customUrls, 303 after a POST", arguments: Backend.all)
    func pagesRouter(_ backend: Backend) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-pages-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("<p>Reset for [{{username}}] of {{appName}} token={{token}} {{greeting}} {{{raw}}}{{#error}} error!{{/error}}</p>".utf8)
            .write(to: dir.appendingPathComponent("password_reset.html"))
        try Data("body{color:red}".utf8).write(to: dir.appendingPathComponent("style.css"))
        try Data("secret".utf8).write(to: dir.appendingPathComponent(".hidden"))
        let mail = MailBox()
        let options = EmailTests.options(mail) {
            $0.email.verifyUserEmails = true
            $0.pages.enableRouter = true
            $0.pages.pagesEndpoint = "pages"
            $0.pages.pagesPath = dir.path
            $0.pages.placeholders = ["greeting": "Hello <friend>", "raw": "<b>x</b>"]
            $0.pages.customUrls = ["emailVerificationSuccess": "https://app.example/ok"]
        }
        try await TestServer.with(backend: backend, options) { p in
            _ = try await p.signUp("frank", "password-1", extra: ["email": "frank@example.com"])
            let link = try await mail.link(0)
            let range = try #require(link.range(of: "/parse/pages/test-app/verify_email?token="))
            let path = String(link[range.lowerBound...])
            let opened = try await Self.get(p, path)
            #expect(opened.status == 303)
            let location = try #require(opened.headers[.location])
            #expect(location.hasPrefix("https://app.example/ok?appId=test-app&appName=Test%20App&publicServerUrl="))
            #expect(opened.headers[HTTPField.Name("x-parse-page-param-username")!] == nil)
            // Spent: Parsley's own page (the folder has no email_verification_link_expired.html).
            let again = try await Self.get(p, path)
            #expect(again.status == 200 && again.isHTML)
            #expect(
                again.html.contains("expired") && again.html.contains("Test App")
                    && again.html.contains("/parse/pages/test-app/resend_verification_email") && again.html.contains("name=\"token\""))
            #expect(try await Self.get(p, "/parse/apps/test-app/verify_email?token=x&username=frank").status == 404)

            _ = try await p.request(.post, "/requestPasswordReset", ["email": "frank@example.com"], master: false)
            let reset = try await mail.link(1)
            let resetRange = try #require(reset.range(of: "/parse/pages/test-app/request_password_reset?token="))
            let token = try #require(linkParameter(reset, "token"))
            let page = try await Self.get(p, String(reset[resetRange.lowerBound...]))
            #expect(page.status == 200 && page.isHTML)
            #expect(page.html == "<p>Reset for [] of Test App token=\(token) Hello &lt;friend&gt; <b>x</b></p>")
            #expect(page.headers[HTTPField.Name("x-parse-page-param-token")!] == token)

            // A failed POST shows the form again with the error (content, not a redirect); a good one the success page.
            let failed = try await p.postForm("/pages/test-app/request_password_reset", [("new_password", "new-password"), ("token", "wrong")])
            #expect(failed.status == 200 && failed.html.contains("error!"), "\(failed.status) \(failed.json) \(failed.headers)")
            let done = try await p.postForm("/pages/test-app/request_password_reset", [("new_password", "new-password"), ("token", token)])
            #expect(done.status == 200 && done.html.contains("Your password has been updated."))
            #expect(try await p.logIn("frank", "new-password").status == 200)

            // A POST without its fields redirects (Post/Redirect/Get) to the invalid-link page, which the router serves.
            let invalid = try await p.postForm("/pages/test-app/request_password_reset", [("new_password", "x")])
            #expect(invalid.status == 303)
            let invalidURL = try #require(invalid.headers[.location])
            let invalidPath = try #require(invalidURL.range(of: "/parse/pages/password_reset_link_invalid.html?appId=test-app"))
            let invalidPage = try await Self.get(p, String(invalidURL[invalidPath.lowerBound...]))
            #expect(invalidPage.status == 200 && invalidPage.html.contains("not valid"))

            // The folder's other files, as they are; nothing outside it.
            let css = try await Self.get(p, "/parse/pages/style.css")
            #expect(css.status == 200 && css.headers[.contentType]?.hasPrefix("text/css") == true)
            let missing = try await Self.get(p, "/parse/pages/nothing.html")
            #expect(missing.status == 404)
            #expect(try await Self.get(p, "/parse/pages/%2E%2E/etc/passwd").status == 404)
            #expect(try await Self.get(p, "/parse/pages/..%2F..%2Fetc%2Fpasswd").status == 404)
            #expect(try await Self.get(p, "/parse/pages/.hidden").status == 404)
        }
    }

    @Test("pages router: forceRedirect answers every page with a 303 to its URL", arguments: Backend.all)
    func forceRedirect(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = EmailTests.options(mail) {
            $0.pages.enableRouter = true
            $0.pages.forceRedirect = true
        }
        try await TestServer.with(backend: backend, options) { p in
            let r = try await Self.get(p, "/parse/apps/test-app/request_password_reset?token=nope")
            #expect(r.status == 303)
            let location = try #require(r.headers[.location])
            #expect(location.contains("/parse/apps/password_reset_link_invalid.html?appId=test-app&appName=Test%20App"))
            let start = try #require(location.range(of: "/parse/apps/"))
            let page = try await Self.get(p, String(location[start.lowerBound...]))
            #expect(page.status == 200 && page.html.contains("Invalid link"))
        }
    }

    @Test("pages router: Parse Server 8's verification links (token only); the expired-link page posts the token back", arguments: Backend.all)
    func verificationByToken(_ backend: Backend) async throws {
        let mail = MailBox()
        let options = EmailTests.options(mail) {
            $0.email.verifyUserEmails = true
            $0.email.verifySuccessOnInvalidEmail = false
            $0.email.verifyTokenValidityDuration = 2
            $0.pages.enableRouter = true
        }
        try await TestServer.with(backend: backend, options) { p in
            let (_, session) = try await p.signUp("hana", "password-1", extra: ["email": "hana@example.com"])
            let first = try await mail.link(0)
            #expect(linkParameter(first, "username") == nil)
            let firstToken = try #require(linkParameter(first, "token"))
            try await Task.sleep(for: .milliseconds(2300))
            let expired = try await p.follow(first)
            #expect(expired.status == 200 && expired.html.contains("name=\"token\" value=\"\(firstToken)\""))
            #expect(expired.headers[HTTPField.Name("x-parse-page-param-token")!] == firstToken)
            let resent = try await p.postForm("/apps/test-app/resend_verification_email", [("token", firstToken)])
            #expect(resent.status == 303 && resent.headers[.location]?.contains("/email_verification_send_success.html?") == true)
            let fresh = try await mail.link(1)
            let verified = try await p.follow(fresh)
            #expect(verified.status == 200 && verified.html.contains("Your email address has been verified."))
            #expect(verified.headers[HTTPField.Name("x-parse-page-param-username")!] == nil)
            #expect(try await p.asUser(session, .get, "/users/me")["emailVerified"] == true)
            // A spent token finds no one to send to.
            let spent = try await p.postForm("/apps/test-app/resend_verification_email", [("token", try #require(linkParameter(fresh, "token")))])
            #expect(spent.status == 303 && spent.headers[.location]?.contains("/email_verification_send_fail.html?") == true)
        }
    }
}
