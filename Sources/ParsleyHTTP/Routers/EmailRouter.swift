import Hummingbird
import NIOCore
import ParsleyCore
import ParsleyDomain

/// `POST /requestPasswordReset`, `POST /verificationEmailRequest`, and the public pages the mailed links open:
/// `GET /apps/:appId/verify_email`, `GET|POST /apps/:appId/request_password_reset`, `GET /apps/choose_password`,
/// `POST /apps/:appId/resend_verification_email`.
struct EmailRouter: ParseRouter {
    let emails: EmailFlows
    let options: ParseServerOptions
    private var table = RouteTable()

    init(emails: EmailFlows, options: ParseServerOptions) {
        self.emails = emails
        self.options = options
        table.on(.post, "requestPasswordReset") { [emails] req, _ in
            try await emails.requestPasswordReset(try PasswordResetRequest(decoding: req.body), mountURL: req.mountURL, auth: req.auth)
            return .ok([:])
        }
        table.on(.post, "verificationEmailRequest") { [emails] req, _ in
            try await emails.requestVerificationEmail(try VerificationEmailRequest(decoding: req.body), mountURL: req.mountURL)
            return .ok([:])
        }
        if options.pages.enableRouter {
            PagesRouter(emails: emails, options: options).add(to: &table)
        } else {
            addAppsPages(emails: emails, options: options)
        }
    }

    /// Parse Server's PublicAPIRouter: Parsley's own pages, or with `customPages` 302 redirects to the app's, with
    /// the query parameters Parse Server 8 sends (the token, never the username; a 7.x link's `username` is ignored).
    private mutating func addAppsPages(emails: EmailFlows, options: ParseServerOptions) {
        let pages = EmailPages(options: options)
        let custom = CustomPages(options: options)
        table.on(.get, "apps/:appId/verify_email") { [emails] req, p in
            try pages.checkApp(p.values["appId"])
            let token = req.params["token"]?.stringValue ?? ""
            if custom.has("invalidLink"), token.isEmpty { return custom.redirect("invalidLink") }
            guard try await emails.verifyEmail(token: token, username: nil) else {
                if custom.has("invalidVerificationLink") {
                    return custom.redirect("invalidVerificationLink", [("token", token), ("appId", options.applicationId)])
                }
                return pages.invalidVerificationLink(token: token)
            }
            if custom.has("verifyEmailSuccess") { return custom.redirect("verifyEmailSuccess") }
            return pages.page(200, "Email verified", "<p>Your email address has been verified.</p>")
        }
        table.on(.post, "apps/:appId/resend_verification_email") { [emails, options] req, p in
            try pages.checkApp(p.values["appId"])
            let notSent = pages.page(400, "Link not sent", "<p>No verification link could be sent.</p>")
            // The expired link's token (Parse Server 8's form), or a username (7.x forms).
            let token = req.bodyObject["token"]?.stringValue ?? req.params["token"]?.stringValue ?? ""
            let username = req.bodyObject["username"]?.stringValue ?? req.params["username"]?.stringValue ?? ""
            guard !token.isEmpty || !username.isEmpty else { return custom.has("invalidLink") ? custom.redirect("invalidLink") : notSent }
            // Like /verificationEmailRequest: an unknown or verified user looks like any other
            // (emailVerifySuccessOnInvalidEmail), so the form does not tell which usernames exist.
            let sent = try await emails.resendVerification(token: token, username: username, mountURL: req.mountURL)
            guard sent || options.email.verifySuccessOnInvalidEmail else {
                return custom.has("linkSendFail") ? custom.redirect("linkSendFail") : notSent
            }
            if custom.has("linkSendSuccess") { return custom.redirect("linkSendSuccess") }
            return pages.page(200, "Link sent", "<p>A new verification link has been sent. Check your email.</p>")
        }
        table.on(.get, "apps/:appId/request_password_reset") { [emails, options] req, p in
            try pages.checkApp(p.values["appId"])
            let token = req.params["token"]?.stringValue
            switch try await emails.checkResetLink(token: token, username: nil) {
            case .valid(let username):
                guard custom.has("choosePassword") else { return pages.resetForm(token: token ?? "", username: username, error: nil) }
                return custom.redirect("choosePassword", [("token", token ?? ""), ("id", options.applicationId), ("app", pages.appName)])
            case .invalid: return custom.has("invalidLink") ? custom.redirect("invalidLink") : pages.invalidLink()
            case .expired: return custom.has("invalidLink") ? custom.redirect("invalidLink") : pages.expiredLink()
            }
        }
        // Parse Server's choose_password page (`?id=<appId>&token=…`), for links made by Parse Server.
        table.on(.get, "apps/choose_password") { [emails] req, _ in
            try pages.checkApp(req.params["id"]?.stringValue)
            let token = req.params["token"]?.stringValue
            guard case .valid(let username) = try await emails.checkResetLink(token: token, username: nil) else {
                return pages.invalidLink()
            }
            return pages.resetForm(token: token ?? "", username: username, error: req.params["error"]?.stringValue)
        }
        table.on(.post, "apps/:appId/request_password_reset") { [emails, options] req, p in
            try pages.checkApp(p.values["appId"])
            let form = req.bodyObject
            let xhr = req.headers["x-requested-with"] == "XMLHttpRequest"
            let token = form["token"]?.stringValue ?? ""
            let password = form["new_password"]?.stringValue ?? ""
            if xhr {
                // Parse Server 8's answers to a script posting the form (the username is no longer asked for).
                if token.isEmpty { throw ParseError(.otherCause, "Missing token") }
                if password.isEmpty { throw ParseError(ParseError.Code(rawValue: 201), "Missing password") }
            }
            guard !token.isEmpty, !password.isEmpty else {
                return custom.has("invalidLink") ? custom.redirect("invalidLink") : pages.invalidLink()
            }
            let failure: String
            do {
                switch try await emails.resetPassword(token: token, username: nil, newPassword: password) {
                case .valid:
                    if xhr { return ParseResponse(body: .string("Password successfully reset")) }
                    if custom.has("passwordResetSuccess") { return custom.redirect("passwordResetSuccess") }
                    return pages.page(200, "Password changed", "<p>Your password has been updated.</p>")
                case .invalid:
                    if !xhr, !custom.has("choosePassword") { return custom.has("invalidLink") ? custom.redirect("invalidLink") : pages.invalidLink() }
                    failure = "Failed to reset password: username / email or token is invalid"
                case .expired:
                    if !xhr, !custom.has("choosePassword") { return custom.has("invalidLink") ? custom.redirect("invalidLink") : pages.expiredLink() }
                    failure = "The password reset link has expired"
                }
            } catch let error as ParseError {
                if !xhr, !custom.has("choosePassword") {
                    return pages.resetForm(token: token, username: nil, error: error.message, status: 400)
                }
                failure = error.message
            }
            if xhr { throw ParseError(.otherCause, failure) }
            return custom.redirect(
                "choosePassword", [("token", token), ("id", options.applicationId), ("error", failure), ("app", pages.appName)])
        }
    }

    var routes: RouteTable { table }
}

/// The small HTML pages of the email flows.
struct EmailPages: Sendable {
    let options: ParseServerOptions

    var appName: String { options.appName ?? options.applicationId }

    /// `<mountPath>/apps/<appId>/` as a path, so forms post back to this server whatever the host is called.
    var appsPath: String {
        var mount = options.mountPath.hasPrefix("/") ? options.mountPath : "/" + options.mountPath
        while mount.hasSuffix("/") { mount.removeLast() }
        return "\(mount)/apps/\(EmailTemplates.percentEncode(options.applicationId))"
    }

    func checkApp(_ appId: String?) throws {
        guard appId == options.applicationId else { throw AccessDenied.unauthorized }
    }

    func page(_ status: Int, _ title: String, _ content: String) -> ParseResponse {
        let name = Self.escape(appName)
        let html = """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Self.escape(title)) · \(name)</title>
            <style>body{font-family:system-ui,sans-serif;max-width:28em;margin:4em auto;padding:0 1em;color:#222}
            input{display:block;width:100%;margin:.4em 0 1em;padding:.5em;box-sizing:border-box}button{padding:.5em 1.2em}
            .error{color:#b00020}</style></head>
            <body><h1>\(name)</h1><h2>\(Self.escape(title))</h2>
            \(content)
            </body></html>

            """
        var response = ParseResponse(status: status, body: .string(html))
        response.contentType = "text/html; charset=utf-8"
        return response
    }

    func resetForm(token: String, username: String?, error: String?, status: Int = 200) -> ParseResponse {
        let message = error.map { "<p class=\"error\">\(Self.escape($0))</p>" } ?? ""
        let who = username.map { " for <b>\(Self.escape($0))</b>" } ?? ""
        return page(
            status, "Reset your password",
            """
            \(message)<form method="POST" action="\(appsPath)/request_password_reset">
            <p>Choose a new password\(who).</p>
            <label>New password<input type="password" name="new_password" autocomplete="new-password" required autofocus></label>
            <input type="hidden" name="token" value="\(Self.escape(token))">
            <button type="submit">Change password</button>
            </form>
            """)
    }

    func invalidLink() -> ParseResponse {
        page(400, "Invalid link", "<p>This link is not valid, or it has already been used.</p>")
    }

    func expiredLink() -> ParseResponse {
        page(400, "Expired link", "<p>This link has expired. Please ask for a new one.</p>")
    }

    func invalidVerificationLink(token: String) -> ParseResponse {
        var content = "<p>This verification link is not valid, has expired, or has already been used.</p>"
        if !token.isEmpty {
            content += """
                <form method="POST" action="\(appsPath)/resend_verification_email">
                <input type="hidden" name="token" value="\(Self.escape(token))">
                <button type="submit">Send a new link</button></form>
                """
        }
        return page(400, "Invalid verification link", content)
    }

    static func escape(_ s: String) -> String { s.escaping(htmlEntities) }

    static let htmlEntities: [Character: String] = ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;"]
}

/// `customPages`: the app's own page URLs, redirected to with a 302 and Parse Server's query parameters.
struct CustomPages: Sendable {
    let urls: [String: String]

    init(options: ParseServerOptions) { urls = options.pages.customPages }

    var isEmpty: Bool { urls.isEmpty }

    func has(_ page: String) -> Bool { urls[page] != nil }

    func redirect(_ page: String, _ query: [(String, String)] = []) -> ParseResponse {
        var location = urls[page] ?? ""
        if !query.isEmpty { location += "?" + query.map { "\($0.0)=\(EmailTemplates.percentEncode($0.1))" }.joined(separator: "&") }
        var response = ParseResponse(status: 302, body: .string(""), location: location)
        response.contentType = "text/plain; charset=utf-8"
        return response
    }
}
