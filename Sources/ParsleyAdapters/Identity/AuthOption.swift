public import ParsleyCore
public import ParsleyDomain

/// Parse Server's `auth` option (`AccountOptions.auth`): one object per provider, `enabled: false` turning one off.
///
/// - `apple`: `clientId` (a string or a list; required), `jwksURL`.
/// - `google`: `clientId` (required), `jwksURL`.
/// - `facebook`: Limited Login tokens with `clientId` (the app id) and `jwksURL`; Graph API access tokens with `appIds`
///   (a string or a list), `appSecret`, `graphURL`. One of `clientId` and `appIds` is required.
/// - `github`: on unless disabled; `apiURL` (default `accounts.githubAPIURL`).
/// - `anonymous`: on unless disabled (here or by `enableAnonymousUsers`); checked by the domain itself.
/// - `mfa`: the second factor (`MFASettings`), checked by the domain's user flows; its mistakes stop the start.
/// - any name with `"oidc": true`: `issuer` (a string or a list), `clientId`, `jwksURL` (all required).
/// - any name with `"oauth2": true`: `tokenIntrospectionEndpointUrl` (required), `useridField` (default `sub`),
///   `appidField` and `appIds` (each requires the other), `authorizationHeader`.
///
/// `jwksURL` (Parsley's, for proxies, private clouds and tests) replaces the provider's published key set.
public struct AuthOption: Sendable {
    /// The providers to build, the built-in `anonymous` aside.
    public var providers: [any AuthProvider] = []
    /// Mistakes that must stop a start (a provider that would accept tokens of any app, a missing issuer).
    public var problems: [String] = []
    /// Entries Parsley cannot honour, whose log-ins answer 252 (unknown providers, adapter modules).
    public var warnings: [String] = []

    public static let builtIn = ["anonymous", "apple", "facebook", "github", "google", "mfa"]

    /// Reads `auth`; an entry with a problem is left out (its log-ins answer 252).
    public init(_ auth: [String: JSONValue], githubAPIURL: String = "https://api.github.com") {
        for name in ["anonymous", "github"] where auth[name].map({ $0.objectValue == nil }) ?? false {
            problems.append("auth.\(name) must be a JSON object")
        }
        if auth["github"].map(Self.isEnabled) ?? true {
            providers.append(GitHubAuthProvider(apiURL: auth["github"]?["apiURL"]?.stringValue ?? githubAPIURL))
        }
        do { _ = try MFASettings(auth) } catch { problems.append("auth.\(error.reason)") }
        for (name, entry) in auth.sorted(by: { $0.key < $1.key }) where !["github", "anonymous", "mfa"].contains(name) {
            guard case .object = entry else {
                problems.append("auth.\(name) must be a JSON object")
                continue
            }
            guard Self.isEnabled(entry) else { continue }
            do {
                if let provider = try provider(name, entry) { providers.append(provider) }
            } catch {
                problems.append("auth.\(name): \(error.reason)")
            }
        }
    }

    struct Problem: Error {
        let reason: String
    }

    /// `enabled` is true unless it says false.
    public static func isEnabled(_ entry: JSONValue) -> Bool {
        entry["enabled"] != .bool(false) && entry["enabled"] != .string("false")
    }

    private mutating func provider(_ name: String, _ entry: JSONValue) throws(Problem) -> (any AuthProvider)? {
        let jwksURL = try Self.url(entry, "jwksURL")
        if entry["oauth2"] == .bool(true) {
            guard entry["oidc"] != .bool(true) else { throw Problem(reason: "`oidc` and `oauth2` cannot both be true") }
            guard Naming.isIdentifier(name) else { throw Problem(reason: "a provider's name is letters, digits and _, starting with a letter") }
            return try Self.oauth2(name, entry)
        }
        if entry["oidc"] == .bool(true) {
            // The name is the authData key the user is found by (`authData.<name>.id`).
            guard Naming.isIdentifier(name) else { throw Problem(reason: "a provider's name is letters, digits and _, starting with a letter") }
            guard let issuers = Self.strings(entry["issuer"]) else { throw Problem(reason: "`issuer` (a string or a list) is required") }
            guard let jwksURL else { throw Problem(reason: "`jwksURL` is required") }
            return IdentityTokenAuthProvider.openIDConnect(name: name, issuers: issuers, clientIds: try Self.clientIds(entry), jwksURL: jwksURL)
        }
        switch name {
        case "apple":
            let ids = try Self.clientIds(entry)
            return jwksURL.map { IdentityTokenAuthProvider.apple(clientIds: ids, jwksURL: $0) } ?? IdentityTokenAuthProvider.apple(clientIds: ids)
        case "google":
            let ids = try Self.clientIds(entry)
            return jwksURL.map { IdentityTokenAuthProvider.google(clientIds: ids, jwksURL: $0) } ?? IdentityTokenAuthProvider.google(clientIds: ids)
        case "facebook":
            return try Self.facebook(entry, jwksURL: jwksURL)
        default:
            warnings.append(
                "auth.\(name): Parsley has no provider of this name (built in: \(Self.builtIn.joined(separator: ", ")), "
                    + "any OpenID Connect provider with \"oidc\": true, or any OAuth 2.0 provider with \"oauth2\": true); its log-ins answer 252"
            )
            return nil
        }
    }

    /// Facebook: Limited Login with `clientId`, Graph API access tokens with `appIds`; at least one of them (without
    /// either, no log-in could be checked: Parse Server refuses Graph API log-ins without `appIds` since 9.8.0).
    static func facebook(_ entry: JSONValue, jwksURL: String?) throws(Problem) -> FacebookAuthProvider {
        guard entry["clientId"] != nil || entry["appIds"] != nil else {
            throw Problem(
                reason: "`appIds` (the app ids, for access_token log-ins through the Graph API) or `clientId` (for Limited Login tokens) is required"
            )
        }
        var clientIds: [String]?
        if entry["clientId"] != nil { clientIds = try Self.clientIds(entry) }
        var appIds: [String]?
        if let value = entry["appIds"] {
            guard let ids = strings(value) else { throw Problem(reason: "`appIds` must be a Facebook app id or a list of them") }
            appIds = ids
        }
        let appSecret = try nonEmptyString(entry, "appSecret")
        if appSecret != nil, appIds == nil { throw Problem(reason: "`appSecret` is for Graph API log-ins, which need `appIds`") }
        let graphURL = try url(entry, "graphURL") ?? FacebookAuthProvider.defaultGraphURL
        return FacebookAuthProvider(clientIds: clientIds, jwksURL: jwksURL, appIds: appIds, appSecret: appSecret, graphURL: graphURL)
    }

    /// `"oauth2": true`: the checks Parse Server's oauth2 adapter makes at start (an endpoint; `appIds` with `appidField`),
    /// and `appIds` without `appidField`, which would check nothing.
    static func oauth2(_ name: String, _ entry: JSONValue) throws(Problem) -> OAuth2AuthProvider {
        guard let endpoint = try url(entry, "tokenIntrospectionEndpointUrl") else {
            throw Problem(reason: "`tokenIntrospectionEndpointUrl` (the token introspection endpoint's URL) is required")
        }
        let appidField = try nonEmptyString(entry, "appidField")
        var appIds: [String] = []
        if let value = entry["appIds"] {
            guard let ids = strings(value) else { throw Problem(reason: "`appIds` must be a string or a list of strings") }
            appIds = ids
        }
        if appidField != nil, appIds.isEmpty { throw Problem(reason: "`appidField` needs `appIds`, the client ids its value may be") }
        if appidField == nil, !appIds.isEmpty {
            throw Problem(reason: "`appIds` needs `appidField`, the field of the introspection answer that names the client")
        }
        return OAuth2AuthProvider(
            name: name, tokenIntrospectionEndpointUrl: endpoint, useridField: try nonEmptyString(entry, "useridField") ?? "sub",
            appidField: appidField, appIds: appIds, authorizationHeader: try nonEmptyString(entry, "authorizationHeader"))
    }

    /// An optional setting that, when present, is a non-empty string.
    static func nonEmptyString(_ entry: JSONValue, _ key: String) throws(Problem) -> String? {
        guard let value = entry[key] else { return nil }
        guard case .string(let text) = value, !text.isEmpty else { throw Problem(reason: "`\(key)` must be a non-empty string") }
        return text
    }

    /// `clientId`: the audiences a token may name (required: without it a provider would take any app's tokens).
    static func clientIds(_ entry: JSONValue) throws(Problem) -> [String] {
        guard let ids = strings(entry["clientId"]) else {
            throw Problem(reason: "`clientId` (a string or a list of the app's client ids) is required")
        }
        return ids
    }

    /// A non-empty string, or a non-empty list of non-empty strings.
    static func strings(_ value: JSONValue?) -> [String]? {
        switch value {
        case .string(let s)?: return s.isEmpty ? nil : [s]
        case .array(let list)?:
            let items = list.compactMap(\.stringValue).filter { !$0.isEmpty }
            return items.isEmpty || items.count != list.count ? nil : items
        default: return nil
        }
    }

    static func url(_ entry: JSONValue, _ key: String) throws(Problem) -> String? {
        guard let value = entry[key] else { return nil }
        guard case .string(let text) = value, text.hasPrefix("https://") || text.hasPrefix("http://") else {
            throw Problem(reason: "`\(key)` must be an http(s) URL")
        }
        return text
    }
}
