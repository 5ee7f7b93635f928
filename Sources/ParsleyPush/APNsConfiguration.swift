import ParsleyCore

/// One APNs token-auth credential and the app(s) it sends for: an entry of Parse Server's `push.ios` option.
///
/// The `.p8` key Apple issues signs an ES256 provider token (`kid` = `keyId`, `iss` = `teamId`) that works for every
/// app of the team; `topic` is the bundle id the notifications are for. Without a topic, each message's
/// `appIdentifier` is used.
public struct APNsConfiguration: Sendable, Equatable {
    public static let productionHost = "https://api.push.apple.com"
    public static let sandboxHost = "https://api.sandbox.push.apple.com"

    /// The `.p8` private key, PEM text (PKCS#8, `-----BEGIN PRIVATE KEY-----`).
    public var privateKeyPEM: String
    /// The key's 10-character id (the JWT `kid`).
    public var keyId: String
    /// The Apple developer team id (the JWT `iss`).
    public var teamId: String
    /// The bundle id notifications are sent for (`apns-topic`); nil: the message's `appIdentifier`.
    public var topic: String?
    /// APNs production (`api.push.apple.com`) or the sandbox, for development builds' tokens.
    public var production: Bool
    /// Replaces the APNs base URL (a proxy, a test server): `https://host:port`, no path.
    public var host: String?
    /// A PEM file of extra trust roots for the TLS connection.
    public var caFile: String?

    public init(
        privateKeyPEM: String, keyId: String, teamId: String, topic: String? = nil, production: Bool = false, host: String? = nil,
        caFile: String? = nil
    ) {
        self.privateKeyPEM = privateKeyPEM
        self.keyId = keyId
        self.teamId = teamId
        self.topic = topic
        self.production = production
        self.host = host
        self.caFile = caFile
    }

    /// Where requests go: `host` when set, else production or sandbox; no trailing slash.
    public var baseURL: String {
        let url = host ?? (production ? Self.productionHost : Self.sandboxHost)
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// `token auth, topic com.example.app, sandbox`.
    var summary: String {
        let environment = host.map { "host \(RedactedURL.string($0))" } ?? (production ? "production" : "sandbox")
        return "token auth (key \(keyId), team \(teamId)), topic \(topic ?? "from appIdentifier"), \(environment)"
    }
}
