public import ParsleyCore
public import ParsleyDomain

/// An `authData` provider whose proof is an identity token from an OpenID Connect provider: `{"id": <sub>,
/// "<tokenField>": <JWT>}`. Sign in with Apple (`token`), Google (`id_token`), Facebook Limited Login (`token`) and any
/// OpenID Connect provider configured with `"oidc": true` (`id_token`).
///
/// Every failed check answers 101 with the same message, whatever failed, as Parse Server's adapters do (no oracle);
/// keys that cannot be fetched answer 101 too, with a message that says so. Each provider keeps its own key cache.
public struct IdentityTokenAuthProvider: AuthProvider {
    public let name: String
    /// Who the messages name: `Apple`, `Google`, or the provider's name.
    let label: String
    /// The authData field holding the token.
    let tokenField: String
    let verifier: IdentityTokenVerifier

    init(name: String, label: String, tokenField: String, verifier: IdentityTokenVerifier) {
        self.name = name
        self.label = label
        self.tokenField = tokenField
        self.verifier = verifier
    }

    public func validate(_ data: JSONValue) async throws -> String {
        guard case .string(let id)? = data["id"], !id.isEmpty, case .string(let token)? = data[tokenField], !token.isEmpty else {
            throw ParseError(.objectNotFound, "\(label) auth is invalid for this user.")
        }
        do {
            try await verifier.verify(token, id: id)
        } catch .invalid {
            throw ParseError(.objectNotFound, "\(label) auth is invalid for this user.")
        } catch .keysUnavailable {
            throw ParseError(.objectNotFound, "\(label) auth could not be verified: the provider's keys could not be fetched.")
        }
        return id
    }

    /// Sign in with Apple: `{id, token}`; `iss` `https://appleid.apple.com`, `aud` one of `clientIds` (the app's bundle
    /// id, or its Services ID on the web).
    public static func apple(clientIds: [String], jwksURL: String = "https://appleid.apple.com/auth/keys") -> IdentityTokenAuthProvider {
        IdentityTokenAuthProvider(
            name: "apple", label: "Apple", tokenField: "token",
            verifier: IdentityTokenVerifier(issuers: ["https://appleid.apple.com"], audiences: Set(clientIds), jwksURL: jwksURL))
    }

    /// Google Sign-In: `{id, id_token}`; `iss` `accounts.google.com` with or without `https://`, `aud` one of `clientIds`.
    public static func google(clientIds: [String], jwksURL: String = "https://www.googleapis.com/oauth2/v3/certs") -> IdentityTokenAuthProvider {
        IdentityTokenAuthProvider(
            name: "google", label: "Google", tokenField: "id_token",
            verifier: IdentityTokenVerifier(
                issuers: ["accounts.google.com", "https://accounts.google.com"], audiences: Set(clientIds), jwksURL: jwksURL))
    }

    /// Facebook Limited Login: `{id, token}`; `iss` `https://www.facebook.com` or `https://limited.facebook.com`, `aud`
    /// one of `clientIds` (the Facebook app id).
    public static func facebookLimitedLogin(
        clientIds: [String], jwksURL: String = "https://limited.facebook.com/.well-known/oauth/openid/jwks/"
    ) -> IdentityTokenAuthProvider {
        IdentityTokenAuthProvider(
            name: "facebook", label: "Facebook", tokenField: "token",
            verifier: IdentityTokenVerifier(
                issuers: ["https://www.facebook.com", "https://limited.facebook.com"], audiences: Set(clientIds), jwksURL: jwksURL))
    }

    /// Any OpenID Connect provider (Microsoft Entra, Keycloak, Auth0, Okta, LINE ...) under `name`: `{id, id_token}`,
    /// `iss` one of `issuers`, `aud` one of `clientIds`, RS256 or ES256 keys from `jwksURL`.
    public static func openIDConnect(name: String, issuers: [String], clientIds: [String], jwksURL: String) -> IdentityTokenAuthProvider {
        IdentityTokenAuthProvider(
            name: name, label: name, tokenField: "id_token",
            verifier: IdentityTokenVerifier(
                issuers: Set(issuers), audiences: Set(clientIds), algorithms: ["RS256", "ES256"], jwksURL: jwksURL))
    }
}
