public import ParsleyCore

/// Third-party log-in providers for `authData`. `anonymous` is built in; others validate their data (and
/// may call out to the provider) and return the user's id at that provider.
public protocol AuthProvider: Sendable {
    var name: String { get }
    func validate(_ data: JSONValue) async throws -> String
    /// `POST /challenge`: the answer to `challengeData.<name>` (a nonce to sign, a code sent ...) for `user` (when the
    /// request identified one, as its owner sees it) and the provider's `authData` in the request; nil when the
    /// provider has no challenge (it is then left out of the answer).
    func challenge(_ data: JSONValue, authData: JSONValue?, user: [String: JSONValue]?) async throws -> JSONValue?
}

extension AuthProvider {
    public func challenge(_ data: JSONValue, authData: JSONValue?, user: [String: JSONValue]?) async throws -> JSONValue? { nil }
}

public struct AuthProviders: Sendable {
    public var providers: [String: any AuthProvider] = [:]
    public init(_ list: [any AuthProvider] = []) {
        for p in list { providers[p.name] = p }
    }

    func validate(_ provider: String, _ data: JSONValue, options: ParseServerOptions) async throws -> String {
        // The `auth` option's `enabled: false` turns off any provider, an app's own too; anonymous also goes off with
        // `enableAnonymousUsers: false`.
        let disabled = options.accounts.auth[provider]?["enabled"] == .bool(false) || options.accounts.auth[provider]?["enabled"] == .string("false")
        if disabled || (provider == "anonymous" && !options.accounts.enableAnonymousUsers) {
            throw ParseError(.init(rawValue: 252), "This authentication method is unsupported.")
        }
        if provider == "anonymous" {
            guard case .string(let id)? = data["id"], !id.isEmpty else { throw ParseError(.init(rawValue: 251), "Invalid anonymous authData") }
            return id
        }
        guard let p = providers[provider] else { throw ParseError(.init(rawValue: 252), "This authentication method is unsupported.") }
        return try await p.validate(data)
    }
}
