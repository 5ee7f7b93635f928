import Foundation
import ParsleyCore
import Testing

@testable import ParsleyAdapters
@testable import ParsleyDomain
@testable import ParsleyServer

/// Parse Server's `auth` option: read from the environment, a flag, the config file or a JSON file; providers that
/// would accept any app's tokens stop the start; unknown providers are reported.
@Suite("The auth option")
struct AuthOptionTests {
    static let sample: JSONValue = [
        "apple": ["clientId": ["com.example.ios", "com.example.web"]], "google": ["clientId": "g.apps.googleusercontent.com"],
        "anonymous": ["enabled": false],
        "entra": ["oidc": true, "issuer": "https://login.example/v2.0", "clientId": "c", "jwksURL": "https://login.example/keys"],
    ]

    @Test("PARSE_SERVER_AUTH_PROVIDERS, --auth, the config file's auth and a JSON file all reach AccountOptions.auth")
    func everyWay() throws {
        let text = JSONWriter.string(Self.sample)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("auth-\(UUID().uuidString).json").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for values in [
            OptionValues(environment: ["PARSE_SERVER_AUTH_PROVIDERS": text]),
            OptionValues(flags: ["auth": text], environment: [:]),
            OptionValues(environment: [:], file: ["auth": Self.sample]),
            OptionValues(environment: ["PARSE_SERVER_AUTH_PROVIDERS": path]),
        ] {
            let auth = try ServerSettings.authProviders(values, logger: ParseServerOptionsTests.quietLogger)
            #expect(JSONValue.object(auth) == Self.sample)
        }
        let setup = try ParseServerOptionsTests.setup(["PARSE_SERVER_AUTH_PROVIDERS": text])
        #expect(setup.options.accounts.auth["apple"]?["clientId"] == ["com.example.ios", "com.example.web"])
        let names = AuthOption(setup.options.accounts.auth).providers.map(\.name).sorted()
        #expect(names == ["apple", "entra", "github", "google"])
    }

    @Test("a provider without clientId, an OpenID Connect provider without issuer or keys, a non-object: the start stops naming it")
    func refused() throws {
        let bad: [(String, String)] = [
            (#"{"apple":{}}"#, "auth.apple: `clientId`"),
            (#"{"apple":{"clientId":""}}"#, "auth.apple: `clientId`"),
            (#"{"google":{"clientId":[]}}"#, "auth.google: `clientId`"),
            (#"{"facebook":{"clientId":[1]}}"#, "auth.facebook: `clientId`"),
            (#"{"corp":{"oidc":true,"clientId":"c","jwksURL":"https://x/keys"}}"#, "auth.corp: `issuer`"),
            (#"{"corp":{"oidc":true,"issuer":"https://x","clientId":"c"}}"#, "auth.corp: `jwksURL`"),
            (#"{"apple":{"clientId":"a","jwksURL":"file:///etc/keys"}}"#, "auth.apple: `jwksURL`"),
            (#"{"line-jp":{"oidc":true,"issuer":"https://x","clientId":"c","jwksURL":"https://x/keys"}}"#, "auth.line-jp: a provider's name"),
            (#"{"apple":true}"#, "auth.apple must be a JSON object"),
            (#"["apple"]"#, "must be a JSON object"),
            ("{not json", "must be JSON or the path of a readable JSON file"),
        ]
        for (value, reason) in bad {
            let message = try ParseServerOptionsTests.refusal(["PARSE_SERVER_AUTH_PROVIDERS": value])
            #expect(message.contains("PARSE_SERVER_AUTH_PROVIDERS") && message.contains(reason), "\(value): \(message)")
        }
        // A disabled provider needs no settings; an unknown one is a warning, not a refusal: its log-ins answer 252.
        let disabled = try ParseServerOptionsTests.setup([
            "PARSE_SERVER_AUTH_PROVIDERS": #"{"apple":{"enabled":false},"twitter":{"consumer_key":"k"},"facebook":{"appIds":["1"]}}"#
        ])
        let option = AuthOption(disabled.options.accounts.auth)
        #expect(option.providers.map(\.name) == ["github", "facebook"])
        #expect(option.warnings.count == 1 && option.warnings.contains { $0.contains("auth.twitter") })
        #expect(option.problems.isEmpty)
    }

    @Test("Facebook without appIds or clientId, an oauth2 provider without its endpoint or with half an app check: the start stops")
    func facebookAndOAuth2() throws {
        let endpoint = #""tokenIntrospectionEndpointUrl":"https://idp.example/introspect""#
        let bad: [(String, String)] = [
            (#"{"facebook":{}}"#, "auth.facebook: `appIds` (the app ids, for access_token log-ins through the Graph API) or `clientId`"),
            (#"{"facebook":{"appSecret":"s"}}"#, "auth.facebook: `appIds`"),
            (#"{"facebook":{"appIds":[]}}"#, "auth.facebook: `appIds` must be"),
            (#"{"facebook":{"appIds":[555]}}"#, "auth.facebook: `appIds` must be"),
            (#"{"facebook":{"appIds":"1","appSecret":7}}"#, "auth.facebook: `appSecret` must be"),
            (#"{"facebook":{"clientId":"1","appSecret":"s"}}"#, "auth.facebook: `appSecret` is for Graph API log-ins"),
            (#"{"facebook":{"appIds":"1","graphURL":"graph.facebook.com"}}"#, "auth.facebook: `graphURL` must be an http(s) URL"),
            (#"{"corp":{"oauth2":true}}"#, "auth.corp: `tokenIntrospectionEndpointUrl` (the token introspection endpoint's URL) is required"),
            (#"{"corp":{"oauth2":true,"tokenIntrospectionEndpointUrl":"ldap://x"}}"#, "auth.corp: `tokenIntrospectionEndpointUrl` must be"),
            (#"{"corp":{"oauth2":true,\#(endpoint),"appidField":"aud"}}"#, "auth.corp: `appidField` needs `appIds`"),
            (#"{"corp":{"oauth2":true,\#(endpoint),"appidField":"aud","appIds":[]}}"#, "auth.corp: `appIds` must be"),
            (#"{"corp":{"oauth2":true,\#(endpoint),"appIds":["a"]}}"#, "auth.corp: `appIds` needs `appidField`"),
            (#"{"corp":{"oauth2":true,\#(endpoint),"useridField":""}}"#, "auth.corp: `useridField` must be a non-empty string"),
            (#"{"corp":{"oauth2":true,\#(endpoint),"authorizationHeader":5}}"#, "auth.corp: `authorizationHeader` must be"),
            (#"{"corp":{"oauth2":true,"oidc":true,\#(endpoint)}}"#, "auth.corp: `oidc` and `oauth2` cannot both be true"),
            (#"{"my-idp":{"oauth2":true,\#(endpoint)}}"#, "auth.my-idp: a provider's name"),
        ]
        for (value, reason) in bad {
            let message = try ParseServerOptionsTests.refusal(["PARSE_SERVER_AUTH_PROVIDERS": value])
            #expect(message.contains("PARSE_SERVER_AUTH_PROVIDERS") && message.contains(reason), "\(value): \(message)")
        }
        let option = AuthOption([
            "facebook": ["appIds": "555", "appSecret": "s"],
            "corp": [
                "oauth2": true, "tokenIntrospectionEndpointUrl": "https://idp.example/introspect", "appidField": "aud", "appIds": ["ios"],
                "authorizationHeader": "Basic eDp5",
            ],
            "plain": ["oauth2": true, "tokenIntrospectionEndpointUrl": "https://idp.example/introspect"],
        ])
        #expect(option.problems.isEmpty && option.warnings.isEmpty, "\(option.problems) \(option.warnings)")
        #expect(option.providers.map(\.name) == ["github", "corp", "facebook", "plain"])
        // appIds may be one id; the Graph API is Parse Server's, unversioned; no clientId, no Limited Login.
        let facebook = try #require(option.providers.compactMap { $0 as? FacebookAuthProvider }.first)
        #expect(facebook.graph?.appIds == ["555"] && facebook.graph?.url == "https://graph.facebook.com" && facebook.graph?.appSecret == "s")
        #expect(facebook.limitedLogin == nil)
        let oauth2 = option.providers.compactMap { $0 as? OAuth2AuthProvider }
        #expect(oauth2.map(\.useridField) == ["sub", "sub"])
        #expect(oauth2.first?.appidField == "aud" && oauth2.first?.appIds == ["ios"] && oauth2.first?.authorizationHeader == "Basic eDp5")
        #expect(oauth2.last?.appidField == nil && oauth2.last?.authorizationHeader == nil)
        // appsecret_proof is HMAC-SHA256(key: the app secret, the token) in hex; tokens are escaped in queries and forms.
        #expect(FacebookAuthProvider.Graph.proof("token", secret: "secret") == "e941110e3d2bfe82621f0e3e1434730d7305d106c5f68c87165d0b27a4611a4a")
        #expect(ProviderCall.formEncoded("a b+c/=&\u{e9}~-._") == "a%20b%2Bc%2F%3D%26%C3%A9~-._")
    }

    /// An app's own provider, as a Swift app adds it beside the standard ones.
    struct CorporateDirectory: AuthProvider {
        let name = "corp"
        func validate(_ data: JSONValue) async throws -> String {
            guard data["secret"] == "open sesame", case .string(let id)? = data["id"] else { throw ParseError(.objectNotFound, "no") }
            return id
        }
    }

    @Test("an app's own AuthProvider works beside the auth option, and the option's enabled: false turns it off too")
    func appProvider() async throws {
        let providers = AuthProviders(AuthOption([:]).providers + [CorporateDirectory()])
        let data: JSONValue = ["id": "e-1", "secret": "open sesame"]
        #expect(try await providers.validate("corp", data, options: TestServer.options()) == "e-1")
        let off = TestServer.options { $0.accounts.auth = ["corp": ["enabled": false]] }
        let error = await #expect(throws: ParseError.self) { try await providers.validate("corp", data, options: off) }
        #expect(error?.code.rawValue == 252)
        let anonymousOff = TestServer.options { $0.accounts.enableAnonymousUsers = false }
        let anonymous = await #expect(throws: ParseError.self) { try await providers.validate("anonymous", ["id": "d"], options: anonymousOff) }
        #expect(anonymous?.code.rawValue == 252)
    }

    @Test("the JWKS Cache-Control reading")
    func cacheControl() {
        #expect(JWKSCache.maxAge(["public, max-age=21600, must-revalidate, no-transform"]) == 21600)
        #expect(JWKSCache.maxAge(["no-cache"]) == 0)
        #expect(JWKSCache.maxAge([]) == 3600)
        #expect(JWKSCache.maxAge(["max-age=999999999"]) == 86400)
    }
}
