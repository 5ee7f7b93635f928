/// The verification and password-reset mails as an app words them (`emailTemplates`: a folder of
/// `verification_email.subject.txt`, `verification_email.txt`, `verification_email.html`, and the same for
/// `password_reset_email`, each optional). Placeholders: `{{appName}}`, `{{link}}`, `{{email}}`, `{{username}}`; in
/// HTML they are escaped. What a template leaves out keeps Parse Server's default wording; HTML is sent beside the
/// text as `multipart/alternative`.
public struct EmailTemplateSet: Sendable, Equatable {
    public struct Template: Sendable, Equatable {
        public var subject: String?
        public var text: String?
        public var html: String?
        public init(subject: String? = nil, text: String? = nil, html: String? = nil) {
            self.subject = subject
            self.text = text
            self.html = html
        }
        var isEmpty: Bool { subject == nil && text == nil && html == nil }
    }

    public var verification = Template()
    public var passwordReset = Template()
    public init(verification: Template = Template(), passwordReset: Template = Template()) {
        self.verification = verification
        self.passwordReset = passwordReset
    }

    public func verification(to email: String, username: String, appName: String, link: String) -> EmailMessage {
        let standard = EmailTemplates.verification(to: email, appName: appName, link: link)
        return verification.apply(to: standard, values: ["appName": appName, "link": link, "email": email, "username": username])
    }

    public func passwordReset(to email: String, username: String?, appName: String, link: String) -> EmailMessage {
        let standard = EmailTemplates.passwordReset(to: email, username: username, appName: appName, link: link)
        return passwordReset.apply(to: standard, values: ["appName": appName, "link": link, "email": email, "username": username ?? ""])
    }
}

extension EmailTemplateSet.Template {
    func apply(to standard: EmailMessage, values: [String: String]) -> EmailMessage {
        guard !isEmpty else { return standard }
        var message = standard
        if let subject {
            // A subject is one line: line breaks in the template or a value would start new headers.
            message.subject = Self.fill(subject, values).filter { !$0.isNewline }
        }
        if let text { message.text = Self.fill(text, values) }
        if let html { message.html = Self.fill(html, values.mapValues(Self.escapeHTML)) }
        return message
    }

    /// Replaces `{{name}}` (spaces inside the braces allowed) with its value; unknown names are left as they are.
    static func fill(_ template: String, _ values: [String: String]) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstRange(of: "{{") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else {
                rest = rest[open.lowerBound...]
                break
            }
            let name = rest[open.upperBound..<close.lowerBound].filter { $0 != " " }
            out += values[String(name)] ?? String(rest[open.lowerBound..<close.upperBound])
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    static func escapeHTML(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
