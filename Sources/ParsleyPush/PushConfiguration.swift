public import AsyncHTTPClient
import Crypto
import Foundation
public import Logging
import NIOSSL
public import ParsleyCore
public import ParsleyDomain
import _CryptoExtras

/// Parse Server's `push` option, read and checked: APNs token-auth credentials per Apple family and the FCM HTTP v1
/// service account.
///
///     {"ios": {"token": {"key": "AuthKey_ABC.p8", "keyId": "ABC", "teamId": "TEAM"}, "topic": "com.example.app", "production": true},
///      "android": {"firebaseServiceAccount": "service-account.json"}}
///
/// `ios` (and `osx`, `tvos`, which then take those device types from it) may be an array of such objects, one per
/// bundle id or key. `key` is a path to the `.p8` file or its PEM text; `firebaseServiceAccount` a path to the key
/// file, its JSON text, or the JSON object. Parsley's extensions: `host` (APNs base URL), `endpoint` and `tokenURI`
/// (FCM), and `caFile` (a PEM file of extra trust roots) in either. Certificate-based APNs (`pfx`, `cert`) and the
/// legacy FCM `apiKey` are refused: Parsley speaks token auth and FCM HTTP v1 only. `queueOptions` is left to the
/// push queue.
public struct PushConfiguration: Sendable, Equatable {
    /// The APNs configurations per option key (`ios`, `osx`, `tvos`).
    public var apns: [String: [APNsConfiguration]]
    public var fcm: FCMConfiguration?

    public static let appleKeys = ["ios", "osx", "tvos"]

    public init(apns: [String: [APNsConfiguration]] = [:], fcm: FCMConfiguration? = nil) {
        self.apns = apns
        self.fcm = fcm
    }

    /// Reads the option (files it names included); throws a `PushConfigurationError` naming the first bad key.
    public init(option: JSONValue) throws(PushConfigurationError) {
        guard let keys = option.objectValue else { throw PushConfigurationError(key: "push", "is not an object") }
        self.init()
        for (key, value) in keys.sorted(by: { $0.key < $1.key }) {
            let path = "push." + key
            switch key {
            case _ where Self.appleKeys.contains(key):
                let entries = value.arrayValue?.enumerated().map { ("\(path)[\($0.offset)]", $0.element) } ?? [(path, value)]
                guard !entries.isEmpty else { throw PushConfigurationError(key: path, "is an empty array") }
                apns[key] = try entries.map { path, entry throws(PushConfigurationError) in try PushConfigurationReader.apns(entry, at: path) }
            case "android":
                fcm = try PushConfigurationReader.fcm(value, at: path)
            case "queueOptions":
                continue
            case "adapter":
                throw PushConfigurationError(key: path, "custom push adapters are not supported; configure ios and android instead")
            default:
                throw PushConfigurationError(key: path, "is not a push type Parsley sends to (ios, osx, tvos, android)")
            }
        }
    }

    /// The device types each APNs key serves: `osx` and `tvos` take theirs from `ios` when they are configured.
    func deviceTypes(forAppleKey key: String) -> Set<String> {
        guard key == "ios" else { return [key] }
        return APNsProvider.appleDeviceTypes.subtracting(apns.keys.filter { $0 != "ios" })
    }

    /// One provider per configured family (`ios`, `osx`, `tvos`, `android`), each with its own HTTP client unless
    /// `httpClient` is given.
    public func makeProviders(
        httpClient: HTTPClient? = nil, logger: Logger = Logger(label: "parsley.push")
    ) async throws -> [any PushProvider] {
        var providers: [any PushProvider] = []
        do {
            for key in Self.appleKeys {
                guard let configurations = apns[key] else { continue }
                let provider = try APNsProvider(
                    configurations: configurations, name: key, deviceTypes: deviceTypes(forAppleKey: key), httpClient: httpClient, logger: logger)
                providers.append(provider)
            }
            if let fcm { providers.append(try FCMProvider(configuration: fcm, httpClient: httpClient, logger: logger)) }
        } catch {
            for provider in providers { try? await provider.shutdown() }
            throw error
        }
        return providers
    }

    /// Reads `option` and makes its providers.
    public static func providers(from option: JSONValue, httpClient: HTTPClient? = nil, logger: Logger = Logger(label: "parsley.push")) async throws
        -> [any PushProvider]
    {
        try await PushConfiguration(option: option).makeProviders(httpClient: httpClient, logger: logger)
    }
}

/// Reads the parts of the `push` option, each error naming its key.
enum PushConfigurationReader {
    static func apns(_ entry: JSONValue, at path: String) throws(PushConfigurationError) -> APNsConfiguration {
        guard entry.objectValue != nil else { throw PushConfigurationError(key: path, "is not an object") }
        for key in ["pfx", "cert"] where entry[key] != nil {
            throw PushConfigurationError(
                key: "\(path).\(key)", "certificate-based APNs is not supported; use token auth: token {key, keyId, teamId} with a .p8 key")
        }
        guard let token = entry["token"] else {
            let problem = entry["key"] != nil ? "is missing (a top-level key means certificate auth, which is not supported)" : "is missing"
            throw PushConfigurationError(key: "\(path).token", problem)
        }
        guard token.objectValue != nil else { throw PushConfigurationError(key: "\(path).token", "is not an object") }
        let keyPEM = try pemOrFile(token["key"], at: "\(path).token.key")
        guard (try? P256.Signing.PrivateKey(pemRepresentation: keyPEM)) != nil else {
            throw PushConfigurationError(key: "\(path).token.key", "is not a P-256 private key in PEM form (an APNs .p8 key)")
        }
        var production = false
        if let value = entry["production"] {
            guard let flag = value.boolValue else { throw PushConfigurationError(key: "\(path).production", "is not true or false") }
            production = flag
        }
        return APNsConfiguration(
            privateKeyPEM: keyPEM, keyId: try string(token["keyId"], at: "\(path).token.keyId"),
            teamId: try string(token["teamId"], at: "\(path).token.teamId"),
            topic: try optionalString(entry["topic"] ?? entry["bundleId"], at: "\(path).topic"), production: production,
            host: try url(entry["host"], at: "\(path).host"), caFile: try caFile(entry["caFile"], at: "\(path).caFile"))
    }

    static func fcm(_ entry: JSONValue, at path: String) throws(PushConfigurationError) -> FCMConfiguration {
        guard entry.objectValue != nil else { throw PushConfigurationError(key: path, "is not an object") }
        guard let source = entry["firebaseServiceAccount"] else {
            if entry["apiKey"] != nil {
                throw PushConfigurationError(
                    key: "\(path).apiKey", "the legacy FCM API (server key) was shut down in 2024; use firebaseServiceAccount (FCM HTTP v1)")
            }
            throw PushConfigurationError(key: "\(path).firebaseServiceAccount", "is missing")
        }
        let accountPath = "\(path).firebaseServiceAccount"
        let json: JSONValue
        if source.objectValue != nil {
            json = source
        } else {
            let text = try pemOrFile(source, at: accountPath, inline: { $0.hasPrefix("{") })
            guard let parsed = try? JSONParser.parse(text) else { throw PushConfigurationError(key: accountPath, "is not JSON") }
            json = parsed
        }
        let account: FCMServiceAccount
        do { account = try FCMServiceAccount(json: json) } catch { throw error.under(path) }
        guard (try? _RSA.Signing.PrivateKey(pemRepresentation: account.privateKeyPEM)) != nil else {
            throw PushConfigurationError(key: "\(accountPath).private_key", "is not an RSA private key in PEM form")
        }
        return FCMConfiguration(
            serviceAccount: account, endpoint: try url(entry["endpoint"], at: "\(path).endpoint") ?? FCMConfiguration.defaultEndpoint,
            tokenURI: try url(entry["tokenURI"], at: "\(path).tokenURI"), caFile: try caFile(entry["caFile"], at: "\(path).caFile"))
    }

    static func string(_ value: JSONValue?, at path: String) throws(PushConfigurationError) -> String {
        guard let value else { throw PushConfigurationError(key: path, "is missing") }
        guard let text = value.stringValue, !text.isEmpty else { throw PushConfigurationError(key: path, "is not a non-empty string") }
        return text
    }

    static func optionalString(_ value: JSONValue?, at path: String) throws(PushConfigurationError) -> String? {
        guard let value, !value.isNull else { return nil }
        return try string(value, at: path)
    }

    /// An `http(s)://` base URL, without a trailing slash.
    static func url(_ value: JSONValue?, at path: String) throws(PushConfigurationError) -> String? {
        guard let text = try optionalString(value, at: path) else { return nil }
        guard text.hasPrefix("https://") || text.hasPrefix("http://") else { throw PushConfigurationError(key: path, "is not an http(s) URL") }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    /// A PEM file of certificates that loads.
    static func caFile(_ value: JSONValue?, at path: String) throws(PushConfigurationError) -> String? {
        guard let file = try optionalString(value, at: path) else { return nil }
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(file), !certificates.isEmpty else {
            throw PushConfigurationError(key: path, "names no readable file of PEM certificates")
        }
        return file
    }

    /// The text itself when `inline` says it is one (PEM by default), else the contents of the file it names.
    static func pemOrFile(
        _ value: JSONValue?, at path: String, inline: (String) -> Bool = { $0.contains("-----BEGIN") }
    ) throws(PushConfigurationError) -> String {
        let text = try string(value, at: path)
        if inline(text.trimmingCharacters(in: .whitespacesAndNewlines)) { return text }
        // Not shown: a key pasted without its PEM header would otherwise be printed as the "file name".
        guard let data = FileManager.default.contents(atPath: text) else {
            throw PushConfigurationError(key: path, "is neither the key's text nor the path of a readable file")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
