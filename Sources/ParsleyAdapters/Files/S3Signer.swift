#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif
import Crypto
import ParsleyCore

/// An access key and its secret for S3 requests. The secret never appears in a description or a log line.
public struct S3Credentials: Sendable, CustomStringConvertible {
    public var accessKeyId: String
    public var secretAccessKey: String
    /// `AWS_SESSION_TOKEN` of temporary credentials (sent as `x-amz-security-token`).
    public var sessionToken: String?

    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String { "S3Credentials(accessKeyId: \(accessKeyId), secretAccessKey: <redacted>)" }
}

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for S3: signed headers and presigned URLs, on swift-crypto.
/// Paths given to it are already URI-encoded (`S3Signer.encodePath`); query keys and values are encoded here.
struct S3Signer: Sendable {
    let credentials: S3Credentials
    let region: String
    var service = "s3"

    /// The payload hash that leaves the body out of the signature (S3 accepts it over HTTP and HTTPS).
    static let unsignedPayload = "UNSIGNED-PAYLOAD"
    static let emptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// `20150830T123600Z` and its day.
    struct Timestamp: Sendable {
        let stamp: String
        var day: String { String(stamp.prefix(8)) }

        init(stamp: String) { self.stamp = stamp }

        static func now() -> Timestamp {
            var t = time(nil)
            var parts = tm()
            gmtime_r(&t, &parts)
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            let date = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))"
            return Timestamp(stamp: date + "T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z")
        }
    }

    /// The headers to add to a request: `x-amz-date`, `x-amz-content-sha256`, the session token when there is one,
    /// and `Authorization`. `headers` are the other headers to sign (`host` is always signed).
    func sign(
        method: String, host: String, path: String, query: [(String, String)] = [], headers: [(String, String)] = [],
        payloadHash: String, at time: Timestamp = .now()
    ) -> [(String, String)] {
        var added: [(String, String)] = [("x-amz-date", time.stamp), ("x-amz-content-sha256", payloadHash)]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        var all: [(String, String)] = [("host", host)] + added
        for (name, value) in headers { all.append((name.lowercased(), value)) }
        all.sort { $0.0 < $1.0 }
        let signedHeaders = all.map(\.0).joined(separator: ";")
        let canonicalHeaders = all.map { "\($0.0):\(Self.trim($0.1))\n" }.joined()
        let canonical = [method, path, Self.canonicalQuery(query), canonicalHeaders, signedHeaders, payloadHash].joined(separator: "\n")
        let signature = self.signature(canonical, at: time)
        let authorization =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyId)/\(scope(time)), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return added + [("Authorization", authorization)]
    }

    /// The query string of a presigned GET (`X-Amz-Algorithm=…&X-Amz-Signature=…`), valid for `expires` seconds.
    func presignedQuery(method: String = "GET", host: String, path: String, expires: Int, at time: Timestamp = .now()) -> String {
        var query: [(String, String)] = [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Credential", "\(credentials.accessKeyId)/\(scope(time))"),
            ("X-Amz-Date", time.stamp),
            ("X-Amz-Expires", String(expires)),
            ("X-Amz-SignedHeaders", "host"),
        ]
        if let token = credentials.sessionToken { query.append(("X-Amz-Security-Token", token)) }
        let canonical = [method, path, Self.canonicalQuery(query), "host:\(host)\n", "host", Self.unsignedPayload].joined(separator: "\n")
        return Self.canonicalQuery(query) + "&X-Amz-Signature=" + signature(canonical, at: time)
    }

    func scope(_ time: Timestamp) -> String { "\(time.day)/\(region)/\(service)/aws4_request" }

    func signature(_ canonicalRequest: String, at time: Timestamp) -> String {
        let stringToSign = ["AWS4-HMAC-SHA256", time.stamp, scope(time), Self.hex(SHA256.hash(data: Array(canonicalRequest.utf8)))]
            .joined(separator: "\n")
        var key = SymmetricKey(data: Array(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [time.day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return Self.hex(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
    }

    static func payloadHash(_ bytes: some Sequence<UInt8>) -> String { hex(SHA256.hash(data: Array(bytes))) }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Keys and values URI-encoded (`/` too), sorted by key then value.
    /// (Written with named types and steps: as one chain of closures it took the type checker 8 to 17 seconds.)
    static func canonicalQuery(_ query: [(String, String)]) -> String {
        var pairs: [(key: String, value: String)] = []
        pairs.reserveCapacity(query.count)
        for (key, value) in query {
            pairs.append((key: FileNames.urlEncode(key), value: FileNames.urlEncode(value)))
        }
        pairs.sort { (a: (key: String, value: String), b: (key: String, value: String)) -> Bool in
            a.key == b.key ? a.value < b.value : a.key < b.key
        }
        var parts: [String] = []
        parts.reserveCapacity(pairs.count)
        for pair in pairs { parts.append(pair.key + "=" + pair.value) }
        return parts.joined(separator: "&")
    }

    /// A key as a URI path: every segment encoded, the slashes kept.
    static func encodePath(_ key: String) -> String {
        key.split(separator: "/", omittingEmptySubsequences: false).map { FileNames.urlEncode(String($0)) }.joined(separator: "/")
    }

    /// A header value with its ends trimmed and inner runs of spaces as one.
    static func trim(_ value: String) -> String {
        var out = ""
        var space = false
        for c in value {
            if c == " " || c == "\t" {
                space = !out.isEmpty
                continue
            }
            if space { out.append(" ") }
            space = false
            out.append(c)
        }
        return out
    }
}
