public import ParsleyCore

/// The parts of a Google service-account key file (the JSON downloaded from the Firebase console) that FCM HTTP v1
/// needs: the project to send for and the RSA key that signs the OAuth2 assertion.
public struct FCMServiceAccount: Sendable, Equatable {
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"

    public var projectId: String
    public var clientEmail: String
    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public var privateKeyPEM: String
    /// The key's id (the assertion's `kid`), when the file has one.
    public var privateKeyId: String?
    /// Where the assertion is exchanged for an access token.
    public var tokenURI: String

    public init(projectId: String, clientEmail: String, privateKeyPEM: String, privateKeyId: String? = nil, tokenURI: String = Self.defaultTokenURI) {
        self.projectId = projectId
        self.clientEmail = clientEmail
        self.privateKeyPEM = privateKeyPEM
        self.privateKeyId = privateKeyId
        self.tokenURI = tokenURI
    }

    /// Reads the key file's JSON: `project_id`, `client_email`, `private_key`, optional `private_key_id` and
    /// `token_uri`. Throws, naming the missing key, when one of the required ones is absent or not a string.
    public init(json: JSONValue) throws(PushConfigurationError) {
        guard json.objectValue != nil else { throw PushConfigurationError(key: "firebaseServiceAccount", "is not a JSON object") }
        func required(_ key: String) throws(PushConfigurationError) -> String {
            guard let value = json[key]?.stringValue, !value.isEmpty else {
                throw PushConfigurationError(key: "firebaseServiceAccount.\(key)", "is missing from the service account key")
            }
            return value
        }
        projectId = try required("project_id")
        clientEmail = try required("client_email")
        privateKeyPEM = try required("private_key")
        privateKeyId = json["private_key_id"]?.stringValue
        tokenURI = json["token_uri"]?.stringValue ?? Self.defaultTokenURI
    }
}

/// FCM HTTP v1 for one Firebase project: Parse Server's `push.android` option.
public struct FCMConfiguration: Sendable, Equatable {
    public static let defaultEndpoint = "https://fcm.googleapis.com"

    public var serviceAccount: FCMServiceAccount
    /// The FCM base URL (`https://fcm.googleapis.com`), replaceable for proxies and tests.
    public var endpoint: String
    /// Replaces the key file's `token_uri`.
    public var tokenURI: String?
    /// A PEM file of extra trust roots for TLS.
    public var caFile: String?

    public init(serviceAccount: FCMServiceAccount, endpoint: String = Self.defaultEndpoint, tokenURI: String? = nil, caFile: String? = nil) {
        self.serviceAccount = serviceAccount
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.tokenURI = tokenURI
        self.caFile = caFile
    }

    /// Where access tokens come from: the override, else the key file's.
    public var effectiveTokenURI: String { tokenURI ?? serviceAccount.tokenURI }

    /// `POST` here sends one message.
    public var sendURL: String { "\(endpoint)/v1/projects/\(serviceAccount.projectId)/messages:send" }

    /// `FCM HTTP v1, project my-app, as firebase-adminsdk@my-app.iam.gserviceaccount.com`.
    var summary: String {
        var line = "FCM HTTP v1, project \(serviceAccount.projectId), as \(serviceAccount.clientEmail)"
        if endpoint != Self.defaultEndpoint { line += ", endpoint \(RedactedURL.string(endpoint))" }
        return line
    }
}
