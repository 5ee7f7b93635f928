import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyIdentityFakes
import Testing

@testable import ParsleyServer

/// The `parsley` executable started from a Parse Server config.json with an `auth` section, signing users in with a
/// local identity provider; a provider that would take any app's tokens stops the start.
@Suite("Process: the auth option in config.json", .serialized)
struct AuthOptionProcessTests {
    typealias Config = ParseServerConfigProcessTests

    @Test("config.json's auth: Apple signs in, disabled anonymous is 252, an unknown provider is a warning")
    func configFile() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await FakeIdentityProvider.with { fake in
            guard case .object(var config) = Config.parseServerConfig(databaseURI: "sqlite:\(dir.path)/app.sqlite") else { return }
            config["auth"] = [
                "apple": ["clientId": "com.example.cfg", "jwksURL": .string(fake.jwksURL)], "anonymous": ["enabled": false],
                "twitter": ["consumer_key": "k"],
            ]
            let file = dir.appendingPathComponent("config.json")
            try Data(JSONWriter.string(.object(config)).utf8).write(to: file)
            let server = try Config.Child(["--config", file.path], environment: [:], dataDir: dir)
            defer { server.process.killNow() }
            try await server.waitUntilHealthy(mount: Config.mount)
            try await server.client { p in
                let token = fake.mint(sub: "cfg-1", aud: "com.example.cfg", iss: "https://appleid.apple.com")
                let signUp = try await p.request(.post, "/users", ["authData": ["apple": ["id": "cfg-1", "token": .string(token)]]], master: false)
                #expect(signUp.status == 201, "\(signUp.json)")
                let again = try await p.request(.post, "/users", ["authData": ["apple": ["id": "cfg-1", "token": .string(token)]]], master: false)
                #expect(again.status == 200 && again["objectId"] == signUp["objectId"])
                let anonymous = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "d"]]], master: false)
                #expect(anonymous.code == 252)
            }
            #expect(server.output.contains("auth.twitter"), "\(server.output)")
        }
    }

    @Test("an apple provider without clientId stops the start with exit status 2 naming the option")
    func refused() async throws {
        let (status, output) = try await Config.refusedStart([], ["PARSE_SERVER_AUTH_PROVIDERS": #"{"apple":{"jwksURL":"https://x/keys"}}"#])
        #expect(status == 2 && output.contains("PARSE_SERVER_AUTH_PROVIDERS") && output.contains("clientId"), "\(output)")
    }
}
