public import ParsleyCore

/// The options of Parse Server's S3 files adapter (`@parse/s3-files-adapter` 5.x), from the `options` object of
/// `filesAdapter` and then the environment: the adapter's `S3_*` variables and the AWS SDK's own.
public struct S3FileOptions: Sendable {
    public var bucket: String
    public var region = "us-east-1"
    /// Put before every stored name (`files/` keeps them in a folder).
    public var bucketPrefix = ""
    /// Objects are public-read and file URLs point at the bucket (or `baseUrl`) instead of the server.
    public var directAccess = false
    /// With `directAccess`: the base of file URLs (a CDN), followed by the prefix and the name.
    public var baseUrl: String?
    /// With `baseUrl`: leave the prefix out of the URL (the CDN points at the prefix already).
    public var baseUrlDirect = false
    /// With `directAccess`: URLs are presigned GETs, valid for `presignedUrlExpires` seconds.
    public var presignedUrl = false
    public var presignedUrlExpires = 900
    /// `Cache-Control` of every object.
    public var globalCacheControl: String?
    /// The canned ACL of every object (`none`: send none); default `public-read` with `directAccess`, else none.
    public var fileAcl: String?
    /// `s3overrides.endpoint`: MinIO, R2, GCS (`https://storage.googleapis.com`), moto; nil: AWS in `region`.
    public var endpoint: String?
    /// `s3overrides.forcePathStyle`; default: path style with a custom endpoint, virtual-hosted on AWS.
    public var forcePathStyle: Bool?
    public var credentials: S3Credentials
    /// Bytes per part of a multipart upload (at least 5 MiB, S3's minimum); smaller files are one PUT.
    public var partSize = 8 << 20

    public init(bucket: String, credentials: S3Credentials) {
        self.bucket = bucket
        self.credentials = credentials
    }

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The names Parse Server and Parsley accept in `filesAdapter` (`module`, or the whole value) for S3.
    public static let moduleNames: Set<String> = ["@parse/s3-files-adapter", "parse-server-s3-adapter", "s3", "s3adapter"]

    /// Reads `options` (the adapter's object), then the environment for what it leaves out.
    /// - Throws: `Invalid` naming the option, never showing a secret.
    public static func parse(_ options: [String: JSONValue], environment: [String: String]) throws -> S3FileOptions {
        func env(_ names: String...) -> String? {
            for name in names { if let v = environment[name], !v.isEmpty { return v } }
            return nil
        }
        func string(_ key: String, in object: [String: JSONValue] = options) throws -> String? {
            guard let value = object[key], !value.isNull else { return nil }
            guard let text = value.stringValue else { throw Invalid(description: "filesAdapter.options.\(key) must be a string") }
            return text
        }
        func bool(_ key: String, _ envName: String?) throws -> Bool? {
            if let value = options[key], !value.isNull {
                if let b = value.boolValue { return b }
                if let t = value.stringValue, let b = flag(t) { return b }
                throw Invalid(description: "filesAdapter.options.\(key) must be true or false")
            }
            guard let envName, let text = env(envName) else { return nil }
            guard let b = flag(text) else { throw Invalid(description: "\(envName) must be true or false") }
            return b
        }
        let overrides = options["s3overrides"]?.objectValue ?? [:]
        let given = overrides["credentials"]?.objectValue ?? [:]
        let key = try string("accessKeyId", in: given) ?? string("accessKey") ?? env("AWS_ACCESS_KEY_ID", "S3_ACCESS_KEY")
        let secret = try string("secretAccessKey", in: given) ?? string("secretKey") ?? env("AWS_SECRET_ACCESS_KEY", "S3_SECRET_KEY")
        guard let bucket = try string("bucket") ?? env("S3_BUCKET"), !bucket.isEmpty else {
            throw Invalid(description: "filesAdapter (S3): bucket is required (options.bucket or S3_BUCKET)")
        }
        guard let key, let secret else {
            throw Invalid(
                description:
                    "filesAdapter (S3): credentials are required (s3overrides.credentials, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
        }
        let token = try string("sessionToken", in: given) ?? env("AWS_SESSION_TOKEN")
        var o = S3FileOptions(bucket: bucket, credentials: S3Credentials(accessKeyId: key, secretAccessKey: secret, sessionToken: token))
        o.region = try string("region", in: overrides) ?? string("region") ?? env("S3_REGION", "AWS_REGION", "AWS_DEFAULT_REGION") ?? "us-east-1"
        o.bucketPrefix = try string("bucketPrefix") ?? env("S3_BUCKET_PREFIX") ?? ""
        o.directAccess = try bool("directAccess", "S3_DIRECT_ACCESS") ?? false
        o.baseUrl = try string("baseUrl") ?? env("S3_BASE_URL")
        while o.baseUrl?.hasSuffix("/") == true { o.baseUrl?.removeLast() }
        o.baseUrlDirect = try bool("baseUrlDirect", "S3_BASE_URL_DIRECT") ?? false
        o.presignedUrl = try bool("presignedUrl", "S3_PRESIGNED_URL") ?? false
        if let value = options["presignedUrlExpires"] ?? env("S3_PRESIGNED_URL_EXPIRES").map(JSONValue.string), !value.isNull {
            guard let n = integer(value), n >= 1, n <= 604_800 else {
                throw Invalid(description: "presignedUrlExpires (S3_PRESIGNED_URL_EXPIRES) must be seconds between 1 and 604800")
            }
            o.presignedUrlExpires = n
        }
        o.globalCacheControl = try string("globalCacheControl") ?? env("S3_GLOBAL_CACHE_CONTROL")
        o.fileAcl = try string("fileAcl") ?? env("S3_FILE_ACL")
        o.endpoint = try string("endpoint", in: overrides) ?? env("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
        if let endpoint = o.endpoint, !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) {
            throw Invalid(description: "filesAdapter (S3): the endpoint must start with http:// or https://")
        }
        if let value = overrides["forcePathStyle"], !value.isNull {
            guard let b = value.boolValue else { throw Invalid(description: "s3overrides.forcePathStyle must be true or false") }
            o.forcePathStyle = b
        }
        if let value = options["partSize"], !value.isNull {
            guard let n = integer(value), n >= 5 << 20 else { throw Invalid(description: "filesAdapter.options.partSize must be at least 5242880") }
            o.partSize = n
        }
        return o
    }

    static func integer(_ value: JSONValue) -> Int? {
        switch value {
        case .int(let n): Int(exactly: n)
        case .string(let s): Int(s)
        default: nil
        }
    }

    static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "1", "yes": true
        case "false", "0", "no": false
        default: nil
        }
    }

    /// The endpoint requests go to (scheme, host and port) and whether the bucket is in the path.
    var resolvedEndpoint: (url: String, pathStyle: Bool) {
        if let endpoint {
            var e = endpoint
            // A path after the host is not part of S3 addressing.
            if let schemeEnd = e.firstRange(of: "://"), let slash = e[schemeEnd.upperBound...].firstIndex(of: "/") { e = String(e[..<slash]) }
            return (e, forcePathStyle ?? true)
        }
        return ("https://s3.\(region).amazonaws.com", forcePathStyle ?? false)
    }
}
