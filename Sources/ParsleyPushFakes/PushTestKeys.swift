public import Crypto
public import Foundation
public import ParsleyCore
public import _CryptoExtras

/// Push credentials made at test time, never checked in: an APNs `.p8` key (P-256) and a Firebase service account
/// (RSA 2048) whose key file is written to a temporary file, as the console would download it.
public enum PushTestKeys {
    /// An APNs signing key with its ids.
    public struct APNsKey: Sendable {
        public let privateKey: P256.Signing.PrivateKey
        public let keyId: String
        public let teamId: String
        /// The `.p8` text: PKCS#8 PEM.
        public var pem: String { privateKey.pemRepresentation }
        public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }
    }

    /// A service account of project `projectId`.
    public struct ServiceAccount: Sendable {
        public let privateKey: _RSA.Signing.PrivateKey
        public let projectId: String
        public let clientEmail: String
        public let privateKeyId: String
        public init(privateKey: _RSA.Signing.PrivateKey, projectId: String, clientEmail: String, privateKeyId: String) {
            self.privateKey = privateKey
            self.projectId = projectId
            self.clientEmail = clientEmail
            self.privateKeyId = privateKeyId
        }
        public var publicKey: _RSA.Signing.PublicKey { privateKey.publicKey }

        /// The key file's JSON, its `token_uri` pointing at `tokenURI`.
        public func json(tokenURI: String) -> JSONValue {
            [
                "type": "service_account", "project_id": .string(projectId), "private_key_id": .string(privateKeyId),
                "private_key": .string(privateKey.pkcs8PEMRepresentation), "client_email": .string(clientEmail),
                "client_id": "100000000000000000001", "token_uri": .string(tokenURI),
                "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            ]
        }

        /// Writes the key file to a new temporary file and returns its path.
        public func writeKeyFile(tokenURI: String) throws -> String {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("service-account-\(UUID().uuidString).json").path
            try Data(JSONWriter.bytes(json(tokenURI: tokenURI))).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    public static func apnsKey(keyId: String = "KEY1234567", teamId: String = "TEAM123456") -> APNsKey {
        APNsKey(privateKey: P256.Signing.PrivateKey(), keyId: keyId, teamId: teamId)
    }

    /// RSA 2048 generation takes a moment in debug builds: one account serves the whole test run.
    public static let serviceAccount: ServiceAccount = {
        // Only fails if BoringSSL cannot make a key at all.
        let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
        return ServiceAccount(
            privateKey: key, projectId: "parsley-test", clientEmail: "firebase-adminsdk@parsley-test.iam.gserviceaccount.com",
            privateKeyId: "0123456789abcdef")
    }()

    /// Writes `text` to a new temporary file (a `.p8`, a CA file) and returns its path.
    public static func temporaryFile(_ text: String, suffix: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("push-\(UUID().uuidString)\(suffix)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Base64url (no padding) to bytes, for the fakes' JWT checks.
    public static func base64URLDecode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    /// A compact JWT split and decoded: header, claims, signed bytes, signature; nil when malformed.
    public static func decodeJWT(_ jwt: String) -> (header: JSONValue, claims: JSONValue, signingInput: Data, signature: Data)? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = base64URLDecode(parts[0]), let claims = base64URLDecode(parts[1]),
            let signature = base64URLDecode(parts[2]), let headerJSON = try? JSONParser.parse(header),
            let claimsJSON = try? JSONParser.parse(claims)
        else { return nil }
        return (headerJSON, claimsJSON, Data("\(parts[0]).\(parts[1])".utf8), signature)
    }
}
