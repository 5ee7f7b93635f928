import Foundation
import ParsleyCore
import ParsleyDomain

/// The pages router's templates: Mustache's tags as Parse Server's pages use them (`{{name}}` HTML-escaped,
/// `{{{name}}}` and `{{&name}}` as they are, `{{#name}}…{{/name}}` when set, `{{^name}}…{{/name}}` when not,
/// `{{! comment}}`), and Parsley's own page of each file name.
enum PageTemplate {
    static func render(_ template: String, _ values: [String: JSONValue]) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            out += rest[..<open.lowerBound]
            var after = rest[open.upperBound...]
            let triple = after.hasPrefix("{")
            if triple { after = after.dropFirst() }
            guard let close = after.range(of: triple ? "}}}" : "}}") else {
                out += rest[open.lowerBound...]
                return out
            }
            let tag = trim(after[..<close.lowerBound])
            rest = after[close.upperBound...]
            if triple {
                out += text(values[tag])
                continue
            }
            switch tag.first {
            case "!", "/": continue
            case "&": out += text(values[trim(tag.dropFirst())])
            case "#", "^":
                let name = trim(tag.dropFirst())
                guard let end = rest.range(of: "{{/\(name)}}") else { continue }
                let inner = rest[..<end.lowerBound]
                rest = rest[end.upperBound...]
                if isSet(values[name]) == (tag.first == "#") { out += render(String(inner), values) }
            default: out += EmailPages.escape(text(values[tag]))
            }
        }
        out += rest
        return out
    }

    static func trim(_ s: some StringProtocol) -> String {
        var t = Substring(s)
        while t.first == " " { t.removeFirst() }
        while t.last == " " { t.removeLast() }
        return String(t)
    }

    static func text(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: ""
        case .string(let s)?: s
        case let other?: JSONWriter.string(other)
        }
    }

    static func isSet(_ value: JSONValue?) -> Bool {
        switch value {
        case nil, .null?, .bool(false)?: false
        case .string(let s)?: !s.isEmpty
        case .array(let a)?: !a.isEmpty
        default: true
        }
    }

    /// Parsley's own page for a file name of Parse Server's pages, or nil.
    static func builtIn(_ file: String, options: ParseServerOptions) -> String? {
        var mount = options.mountPath.hasPrefix("/") ? options.mountPath : "/" + options.mountPath
        while mount.hasSuffix("/") { mount.removeLast() }
        let base = "\(mount)/\(options.pages.pagesEndpoint)/\(EmailTemplates.percentEncode(options.applicationId))"
        let title: String
        let body: String
        switch file {
        case "password_reset.html":
            title = "Reset your password"
            body = """
                {{#error}}<p class="error">{{error}}</p>{{/error}}<form method="POST" action="\(base)/request_password_reset">
                <p>Choose a new password.</p>
                <label>New password<input type="password" name="new_password" autocomplete="new-password" required autofocus></label>
                <input type="hidden" name="token" value="{{token}}">
                {{#locale}}<input type="hidden" name="locale" value="{{locale}}">{{/locale}}
                <button type="submit">Change password</button>
                </form>
                """
        case "password_reset_success.html":
            title = "Password changed"
            body = "<p>Your password has been updated.</p>"
        case "password_reset_link_invalid.html":
            title = "Invalid link"
            body = "<p>This password reset link is not valid, has expired, or has already been used.</p>"
        case "email_verification_success.html":
            title = "Email verified"
            body = "<p>Your email address has been verified.</p>"
        case "email_verification_send_fail.html":
            title = "Link not sent"
            body = "<p>No verification link could be sent.</p>"
        case "email_verification_send_success.html":
            title = "Link sent"
            body = "<p>A new verification link has been sent. Check your email.</p>"
        case "email_verification_link_invalid.html":
            title = "Invalid verification link"
            body = "<p>This verification link is not valid.</p>"
        case "email_verification_link_expired.html":
            title = "Expired verification link"
            body = """
                <p>This verification link has expired or has already been used.</p>{{#token}}
                <form method="POST" action="\(base)/resend_verification_email">
                <input type="hidden" name="token" value="{{token}}">
                <button type="submit">Send a new link</button></form>{{/token}}
                """
        default: return nil
        }
        return """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · {{appName}}</title>
            <style>body{font-family:system-ui,sans-serif;max-width:28em;margin:4em auto;padding:0 1em;color:#222}
            input{display:block;width:100%;margin:.4em 0 1em;padding:.5em;box-sizing:border-box}button{padding:.5em 1.2em}
            .error{color:#b00020}</style></head>
            <body><h1>{{appName}}</h1><h2>\(title)</h2>
            \(body)
            </body></html>

            """
    }
}
