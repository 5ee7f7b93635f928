/// The texts of the mails Parsley sends, worded like Parse Server's defaults so apps migrating keep their mails.
public enum EmailTemplates {
    /// `<mount>/<apps or pages.pagesEndpoint>/<appId>/<page>?token=…` (the token alone, as Parse Server 8 builds them;
    /// 7.x added `&username=…`); with `customPages.parseFrameURL`, that frame with the page's path (below the mount)
    /// in `link`.
    public static func link(
        mountURL: String, applicationId: String, page: String, token: String, pages: PagesOptions = PagesOptions()
    ) -> String {
        let base = mountURL.hasSuffix("/") ? String(mountURL.dropLast()) : mountURL
        let path = "/\(pages.linkEndpoint)/\(percentEncode(applicationId))/\(page)"
        let query = "token=\(percentEncode(token))"
        if let frame = pages.customPages["parseFrameURL"] { return "\(frame)?link=\(percentEncode(path))&\(query)" }
        return base + path + "?" + query
    }

    public static func verification(to email: String, appName: String, link: String) -> EmailMessage {
        EmailMessage(
            to: email, subject: "Please verify your e-mail for \(appName)",
            text: "Hi,\n\nYou are being asked to confirm the e-mail address \(email) with \(appName)\n\nClick here to confirm it:\n\(link)",
            link: link)
    }

    public static func passwordReset(to email: String, username: String?, appName: String, link: String) -> EmailMessage {
        let who = username.map { " (your username is '\($0)')" } ?? ""
        return EmailMessage(
            to: email, subject: "Password Reset for \(appName)",
            text: "Hi,\n\nYou requested to reset your password for \(appName)\(who).\n\nClick here to reset it:\n\(link)",
            link: link)
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters (what `encodeURIComponent` keeps, minus `!'()*`).
    public static func percentEncode(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        return out
    }
}
