import Foundation
import ParsleyCore
import ParsleyDomain
import Testing

@testable import ParsleyAdapters
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
            (#"{"facebook":{"appIds":["1"]}}"#, "auth.facebook: `clientId`"),
            (#"{"corp":{"oidc":true,"clientId":"c","jwksURL":"https://x/keys"}}"#, "auth.corp: `issuer`"),
            (#"{"corp":{"oidc":true,"issuer":"https://x","clientId":"c"}}"#, "auth.corp: `jwksURL`"),
            (#"{"apple":{"clientId":"a","jwksURL":"file:///etc/keys"}}"#, "auth.apple: `jwksURL`"),
            (#"{"apple":true}"#, "auth.apple must be a JSON object"),
            (#"["apple"]"#, "must be a JSON object"),
            ("{not json", "must be JSON or the path of a readable JSON file"),
        ]
        for (value, reason) in bad {
            let message = try ParseServerOptionsTests.refusal(["PARSE_SERVER_AUTH_PROVIDERS": value])
            #expect(message.contains("PARSE_SERVER_AUTH_PROVIDERS") && message.contains(reason), "\(value): \(message)")
        }
        // A disabled provider needs no settings; an unknown one is a warning, not a refusal.
        let disabled = try ParseServerOptionsTests.setup([
            "PARSE_SERVER_AUTH_PROVIDERS": #"{"apple":{"enabled":false},"twitter":{"consumer_key":"k"}}"#
        ])
        let option = AuthOption(disabled.options.accounts.auth)
        #expect(option.providers.map(\.name) == ["github"])
        #expect(option.warnings.count == 1 && option.warnings[0].contains("auth.twitter"))
        #expect(option.problems.isEmpty)
    }

    @Test("the JWKS Cache-Control reading")
    func cacheControl() {
        #expect(JWKSCache.maxAge(["public, max-age=21600, must-revalidate, no-transform"]) == 21600)
        #expect(JWKSCache.maxAge(["no-cache"]) == 0)
        #expect(JWKSCache.maxAge([]) == 3600)
        #expect(JWKSCache.maxAge(["max-age=999999999"]) == 86400)
    }
}
