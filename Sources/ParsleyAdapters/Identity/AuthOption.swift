public import ParsleyCore
public import ParsleyDomain

/// Parse Server's `auth` option (`AccountOptions.auth`): one object per provider, `enabled: false` turning one off.
///
/// - `apple`: `clientId` (a string or a list; required), `jwksURL`.
/// - `google`: `clientId` (required), `jwksURL`.
/// - `facebook`: Limited Login tokens, `clientId` (the app id), `jwksURL`; without `clientId` (Graph API `appIds`
///   only) it is left out with a warning.
/// - `github`: on unless disabled; `apiURL` (default `accounts.githubAPIURL`).
/// - `anonymous`: on unless disabled (here or by `enableAnonymousUsers`); checked by the domain itself.
/// - `mfa`: the second factor (`MFASettings`), checked by the domain's user flows; its mistakes stop the start.
/// - any name with `"oidc": true`: `issuer` (a string or a list), `clientId`, `jwksURL` (all required).
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
            // Graph API log-ins (`appIds`, `access_token`) are not implemented: without a Limited Login client id the
            // provider is left out (its log-ins answer 252), which refuses rather than lifts anything.
            guard entry["clientId"] != nil else {
                warnings.append(
                    "auth.facebook: without `clientId` (the app id, for Limited Login tokens) there is nothing Parsley can check: "
                        + "access_token log-ins through the Graph API are not supported yet; Facebook log-ins answer 252"
                )
                return nil
            }
            let ids = try Self.clientIds(entry)
            return jwksURL.map { IdentityTokenAuthProvider.facebookLimitedLogin(clientIds: ids, jwksURL: $0) }
                ?? IdentityTokenAuthProvider.facebookLimitedLogin(clientIds: ids)
        default:
            warnings.append(
                "auth.\(name): Parsley has no provider of this name (built in: \(Self.builtIn.joined(separator: ", ")), "
                    + "or any OpenID Connect provider with \"oidc\": true); its log-ins answer 252"
            )
            return nil
        }
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
