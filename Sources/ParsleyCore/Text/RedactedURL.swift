/// URLs as they may be logged or named in an error: the password of `scheme://user:password@host/...` replaced by
/// `[redacted]` (the user, host, port and path stay, so the message still says where). Works on any text; text
/// without a `scheme://user:password@` part comes back unchanged.
public enum RedactedURL {
    public static let mark = "[redacted]"

    public static func string(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        let authorityStart = schemeEnd.upperBound
        // The userinfo ends at the last `@` before the query; it may hold `@`, `/` or `#` when not percent-encoded, so
        // this errs on the side of hiding more (a `host:port/path@x` loses its port and path, never a password).
        let rest = url[authorityStart...]
        let end = rest.firstIndex { $0 == "?" } ?? url.endIndex
        guard let at = url[authorityStart..<end].lastIndex(of: "@") else { return url }
        guard let colon = url[authorityStart..<at].firstIndex(of: ":") else { return url }
        return String(url[url.startIndex...colon]) + mark + String(url[at...])
    }

    /// The scheme of a URI (`mongodb`, `postgres`), when it looks like one: letters, digits, `+`, `-`, `.`, at most
    /// 32 characters, before `:`. Safe to name in a message; nil for anything else.
    public static func scheme(_ uri: String) -> String? {
        guard let colon = uri.firstIndex(of: ":") else { return nil }
        let scheme = uri[uri.startIndex..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter, scheme.count <= 32,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
        else { return nil }
        return String(scheme)
    }
}
