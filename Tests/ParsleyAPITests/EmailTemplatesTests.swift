import Foundation
import HTTPTypes
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import Testing

/// The app's own mail wording (`emailTemplates`), HTML beside the text (`multipart/alternative`), and cloud code's
/// `sendEmail`, delivered to a real SMTP server.
@Suite("Mail templates, HTML mails and cloud code's sendEmail")
struct EmailTemplatesTests {
    static let templates = EmailTemplateSet(
        verification: .init(
            subject: "Welcome to {{appName}}, {{ username }}\r\nBcc: evil@example.com", text: "Confirm {{email}}: {{link}}",
            html: "<p>Hi {{username}}, <a href=\"{{link}}\">confirm</a> {{unknown}}</p>"),
        passwordReset: .init(html: "<a href=\"{{link}}\">Reset</a>"))

    @Test("templates: subject, text and HTML filled in (HTML escaped, one-line subject); a part left out keeps the default", arguments: Backend.all)
    func templatesAndHTML(_ backend: Backend) async throws {
        try await SMTPTestServer.with { smtp in
            let options = TestServer.options { o in
                o.accounts.bcryptCost = 4
                o.appName = "Tmpl"
                o.email.adapter = smtp.adapter()
                o.email.verifyUserEmails = true
                o.email.templates = Self.templates
            }
            try await TestServer.with(backend: backend, options) { p in
                _ = try await p.request(
                    .post, "/users", ["username": "<b>ann</b>", "password": "pw-123456", "email": "ann@example.com"], master: false)
                let verification = try await smtp.messages(count: 1)[0]
                #expect(verification["subject"] == "Welcome to Tmpl, <b>ann</b>Bcc: evil@example.com")
                #expect(verification["content_type"] == "multipart/alternative")
                let text = try #require(verification["body"]?.stringValue)
                #expect(text.hasPrefix("Confirm ann@example.com: http") && text.contains("/apps/test-app/verify_email?token="))
                let html = try #require(verification["html"]?.stringValue)
                #expect(html.contains("Hi &lt;b&gt;ann&lt;/b&gt;, <a href=\"http") && html.contains("{{unknown}}"), "\(html)")

                _ = try await p.request(.post, "/requestPasswordReset", ["email": "ann@example.com"], master: false)
                let reset = try await smtp.messages(count: 2)[1]
                #expect(reset["subject"] == "Password Reset for Tmpl")
                #expect(reset["body"]?.stringValue?.contains("You requested to reset your password for Tmpl") == true)
                #expect(reset["html"]?.stringValue?.hasPrefix("<a href=\"http") == true)
            }
        }
    }

    @Test("cloud code's sendEmail reaches the SMTP server, text and HTML; a header injection is refused", arguments: Backend.all)
    func cloudSendEmail(_ backend: Backend) async throws {
        var cloud = CloudCode()
        cloud.define("mailReceipt") { req in
            let to = req.param("to", as: String.self) ?? ""
            try await req.parse.sendEmail(to: to, subject: "Your receipt", text: "Total: 3 €", html: "<b>Total: 3 €</b>")
            return "sent"
        }
        try await SMTPTestServer.with { smtp in
            let options = TestServer.options { $0.email.adapter = smtp.adapter() }
            try await TestServer.with(backend: backend, options, cloud: cloud) { p in
                let sent = try await p.request(.post, "/functions/mailReceipt", ["to": "cat@example.com"], master: false)
                #expect(sent["result"] == "sent", "\(sent.json)")
                let message = try await smtp.messages(count: 1)[0]
                #expect(message["rcpt_tos"] == ["cat@example.com"] && message["subject"] == "Your receipt")
                #expect(
                    message["body"]?.stringValue?.hasPrefix("Total: 3 €") == true
                        && message["html"]?.stringValue?.hasPrefix("<b>Total: 3 €</b>") == true)
                let injected = try await p.request(.post, "/functions/mailReceipt", ["to": "x@example.com\r\nBcc: evil@example.com"], master: false)
                #expect(injected.code == 142, "\(injected.json)")
            }
        }
    }
}
