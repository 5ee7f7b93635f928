import ParsleyCore
import ParsleyDomain

/// Parse Server's PagesRouter (`pages.enableRouter`): the email flows' routes under `<mount>/<pagesEndpoint>`
/// answer with pages by file name (`password_reset.html`, `email_verification_success.html`, ...): a GET gets the
/// page's content, a POST a 303 redirect to the page's URL (Post/Redirect/Get), `forceRedirect` always redirects,
/// and a page in `customUrls` is a 303 to that URL. The page's parameters (`appId`, `appName`, `publicServerUrl`,
/// `token`, `error`, `locale`; no `username` since Parse Server 8) are query parameters of a redirect, `{{placeholders}}` of the content
/// (with `placeholders`), and `x-parse-page-param-*` headers of both. The files come from `pagesPath`, else Parsley's
/// own pages (also for a file that folder lacks). Localization (`enableLocalization`) is not implemented: pages are served as they are.
struct PagesRouter: Sendable {
    let emails: EmailFlows
    let options: ParseServerOptions

    /// Page ids (`customUrls` keys) and their files.
    enum Page: String, Sendable {
        case passwordReset, passwordResetSuccess, passwordResetLinkInvalid, emailVerificationSuccess, emailVerificationSendFail
        case emailVerificationSendSuccess, emailVerificationLinkInvalid, emailVerificationLinkExpired

        var file: String {
            switch self {
            case .passwordReset: "password_reset.html"
            case .passwordResetSuccess: "password_reset_success.html"
            case .passwordResetLinkInvalid: "password_reset_link_invalid.html"
            case .emailVerificationSuccess: "email_verification_success.html"
            case .emailVerificationSendFail: "email_verification_send_fail.html"
            case .emailVerificationSendSuccess: "email_verification_send_success.html"
            case .emailVerificationLinkInvalid: "email_verification_link_invalid.html"
            case .emailVerificationLinkExpired: "email_verification_link_expired.html"
            }
        }
    }

    var endpoint: String { options.pages.pagesEndpoint }
    var appName: String { options.appName ?? options.applicationId }

    func add(to table: inout RouteTable) {
        let router = self
        let e = endpoint
        table.on(.get, "\(e)/:appId/verify_email") { req, p in
            try router.checkApp(p.values["appId"])
            guard let token = req.params["token"]?.stringValue, !token.isEmpty else {
                return try await router.go(req, .emailVerificationLinkInvalid)
            }
            guard try await router.emails.verifyEmail(token: token, username: nil) else {
                return try await router.go(req, .emailVerificationLinkExpired, [("token", token)])
            }
            return try await router.go(req, .emailVerificationSuccess)
        }
        table.on(.post, "\(e)/:appId/resend_verification_email") { req, p in
            try router.checkApp(p.values["appId"])
            // The expired link's token (Parse Server 8's page), or a username (7.x pages).
            let token = req.bodyObject["token"]?.stringValue ?? ""
            let username = req.bodyObject["username"]?.stringValue ?? ""
            guard !token.isEmpty || !username.isEmpty else { return try await router.go(req, .emailVerificationLinkInvalid) }
            let sent = try await router.emails.resendVerification(token: token, username: username, mountURL: req.mountURL)
            let ok = sent || router.options.email.verifySuccessOnInvalidEmail
            return try await router.go(req, ok ? .emailVerificationSendSuccess : .emailVerificationSendFail)
        }
        table.on(.get, "\(e)/choose_password") { req, _ in
            try router.checkApp(req.params["appId"]?.stringValue ?? req.params["id"]?.stringValue)
            let params: [(String, String?)] = [
                ("appId", router.options.applicationId), ("appName", router.appName), ("token", req.params["token"]?.stringValue),
            ]
            return try await router.go(req, .passwordReset, params.compactMap { k, v in v.map { (k, $0) } })
        }
        table.on(.get, "\(e)/:appId/request_password_reset") { req, p in
            try router.checkApp(p.values["appId"])
            guard let token = req.params["token"]?.stringValue, !token.isEmpty else { return try await router.go(req, .passwordResetLinkInvalid) }
            guard case .valid = try await router.emails.checkResetLink(token: token, username: nil) else {
                return try await router.go(req, .passwordResetLinkInvalid)
            }
            return try await router.go(
                req, .passwordReset, [("token", token), ("appId", router.options.applicationId), ("appName", router.appName)])
        }
        table.on(.post, "\(e)/:appId/request_password_reset") { req, p in
            try router.checkApp(p.values["appId"])
            return try await router.resetPassword(req)
        }
        // The folder's files (one level: `<pagesEndpoint>/<file>`; the router's parameter node, which the routes above
        // share, names the file).
        table.on(.get, "\(e)/:appId") { req, _ in
            try await router.staticPage(req)
        }
    }

    func checkApp(_ appId: String?) throws {
        guard appId == options.applicationId else { throw AccessDenied.unauthorized }
    }

    func resetPassword(_ req: ParseRequest) async throws -> ParseResponse {
        let form = req.bodyObject
        let xhr = req.headers["x-requested-with"] == "XMLHttpRequest"
        let token = form["token"]?.stringValue ?? ""
        let password = form["new_password"]?.stringValue ?? ""
        if token.isEmpty || password.isEmpty {
            if !xhr { return try await go(req, .passwordResetLinkInvalid) }
            if token.isEmpty { throw ParseError(.otherCause, "Missing token") }
            throw ParseError(ParseError.Code(rawValue: 201), "Missing password")
        }
        var failure: String?
        do {
            switch try await emails.resetPassword(token: token, username: nil, newPassword: password) {
            case .valid: break
            case .invalid: failure = "Failed to reset password: username / email or token is invalid"
            case .expired: failure = "The password reset link has expired"
            }
        } catch let error as ParseError {
            failure = error.message
        }
        if xhr {
            if let failure { throw ParseError(.otherCause, failure) }
            return ParseResponse(body: .string("Password successfully reset"))
        }
        guard let failure else { return try await go(req, .passwordResetSuccess, redirect: false) }
        return try await go(
            req, .passwordReset, [("token", token), ("appId", options.applicationId), ("error", failure), ("appName", appName)], redirect: false)
    }

    /// `<pagesEndpoint>/<file>`: a file of `pagesPath` (an `.html` one with its placeholders filled), else
    /// Parsley's own page of that name.
    func staticPage(_ req: ParseRequest) async throws -> ParseResponse {
        let parts = Array(req.path.dropFirst())
        // One name of the folder: no path, no hidden file (`.env`), nothing a decoded `%2F` or `..` could lead out of it.
        guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") && !$0.contains("/") }) else { return Self.notFound() }
        let relative = parts.joined(separator: "/")
        guard relative.hasSuffix(".html") else {
            guard let root = options.pages.pagesPath, let bytes = try await PageFiles.read(root + "/" + relative) else { return Self.notFound() }
            var response = ParseResponse(body: .string(""))
            response.rawBody = bytes
            response.contentType = FileNames.mimeType(forName: relative) ?? "application/octet-stream"
            return response
        }
        let params = defaultParams(req)
        guard let template = try await template(relative) else { return Self.notFound() }
        return content(template, params)
    }

    // MARK: Answers

    /// Parse Server's `goToPage`: a redirect (POST, `forceRedirect`, a custom URL) or the page's content.
    func go(_ req: ParseRequest, _ page: Page, _ pageParams: [(String, String)] = [], redirect: Bool? = nil) async throws -> ParseResponse {
        var params = pageParams
        for (key, value) in defaultParams(req) {
            if let i = params.firstIndex(where: { $0.0 == key }) {
                params[i].1 = value
            } else {
                params.append((key, value))
            }
        }
        if let url = options.pages.customUrls[page.rawValue] { return Self.redirect(url, params) }
        if options.pages.forceRedirect || (redirect ?? (req.method == .post)) {
            var base = publicServerURL(req)
            if !base.hasSuffix("/") { base += "/" }
            return Self.redirect(base + endpoint + "/" + page.file, params)
        }
        guard let template = try await template(page.file) else { return Self.notFound() }
        return content(template, params)
    }

    func publicServerURL(_ req: ParseRequest) -> String { options.publicServerURL ?? req.mountURL }

    func defaultParams(_ req: ParseRequest) -> [(String, String)] {
        var params = [("appId", options.applicationId), ("appName", appName), ("publicServerUrl", publicServerURL(req))]
        let locale =
            req.params["locale"]?.stringValue ?? req.bodyObject["locale"]?.stringValue ?? req.headers["x-parse-page-param-locale"]
        if let locale, !locale.isEmpty { params.append(("locale", locale)) }
        return params
    }

    func content(_ template: String, _ params: [(String, String)]) -> ParseResponse {
        var values: [String: JSONValue] = [:]
        for (key, value) in params { values[key] = .string(value) }
        for (key, value) in options.pages.placeholders { values[key] = value }
        var response = ParseResponse(body: .string(PageTemplate.render(template, values)))
        response.contentType = "text/html; charset=utf-8"
        response.headers = Self.paramHeaders(params)
        return response
    }

    static func redirect(_ url: String, _ params: [(String, String)]) -> ParseResponse {
        let query = params.map { "\(EmailTemplates.percentEncode($0.0))=\(EmailTemplates.percentEncode($0.1))" }.joined(separator: "&")
        let location = query.isEmpty ? url : url + (url.contains("?") ? "&" : "?") + query
        var response = ParseResponse(status: 303, body: .string(""), location: location)
        response.contentType = "text/plain; charset=utf-8"
        response.headers = paramHeaders(params)
        return response
    }

    /// `x-parse-page-param-<name>`: the parameters for scripts that read the answer rather than the page.
    static func paramHeaders(_ params: [(String, String)]) -> [String: String] {
        var headers: [String: String] = [:]
        for (key, value) in params where !value.contains(where: { $0 == "\r" || $0 == "\n" }) {
            headers["x-parse-page-param-" + key.lowercased()] = value
        }
        return headers
    }

    static func notFound() -> ParseResponse {
        var response = ParseResponse(status: 404, body: .string("Not found."))
        response.contentType = "text/plain; charset=utf-8"
        return response
    }

    // MARK: Files

    /// The page file: from `pagesPath`, else (or when that folder lacks it) Parsley's own; nil when neither has it.
    func template(_ file: String) async throws -> String? {
        if let root = options.pages.pagesPath, let bytes = try await PageFiles.read(root + "/" + file) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return PageTemplate.builtIn(file, options: options)
    }
}
