import Foundation
import HTTPTypes
import ParsleyCore
import Testing

@testable import ParsleyServer

/// The `parsley` executable started with a config.json as a real Parse Server app has it (about 40 common options):
/// it starts, the options take effect, and the only warning is about what cannot run in Parsley (the JavaScript
/// Cloud Code file).
@Suite("Process: a realistic Parse Server config.json", .serialized)
struct RealConfigProcessTests {
    typealias C = ParseServerConfigProcessTests

    static func config(databaseURI: String) -> JSONValue {
        [
            "appId": .string(C.appId), "masterKey": .string(C.masterKey), "databaseURI": .string(databaseURI), "port": 0,
            "host": "127.0.0.1", "mountPath": .string(C.mount), "serverURL": "http://localhost:1337/api",
            "publicServerURL": "https://example.com/api", "appName": "Real App", "cloud": "./cloud/main.js",
            "allowClientClassCreation": true, "enforcePrivateUsers": true, "enableAnonymousUsers": true, "defaultLimit": 100,
            "maxLimit": 500, "maxUploadSize": "20mb", "sessionLength": 31_536_000, "expireInactiveSessions": true,
            "extendSessionOnUse": true, "revokeSessionOnPasswordReset": true, "verifyUserEmails": false,
            "preventLoginWithUnverifiedEmail": false, "emailVerifyTokenValidityDuration": 7200,
            "passwordPolicy": ["validatorPattern": "^.{8,}$", "doNotAllowUsername": true, "maxPasswordHistory": 2],
            "accountLockout": ["duration": 5, "threshold": 5, "unlockOnPasswordReset": true], "trustProxy": true,
            "allowOrigin": ["https://app.example.com", "https://admin.example.com"], "allowHeaders": ["X-Request-Source"],
            "protectedFields": ["_User": ["*": ["email", "phone"]]], "allowCustomObjectId": true, "objectIdSize": 10,
            "masterKeyIps": ["127.0.0.1", "::1"], "liveQuery": ["classNames": ["Chat"]], "logLevel": "info",
            "idempotencyOptions": ["paths": ["classes/.*", "functions/.*"], "ttl": 300],
            "rateLimit": [["requestPath": "/requestPasswordReset", "requestTimeWindow": 60000, "requestCount": 5]],
            "requestKeywordDenylist": [["key": "_bsontype", "value": "Code"], ["key": "constructor"], ["key": "__proto__"]],
            "fileUpload": ["enableForPublic": false, "enableForAnonymousUser": false, "enableForAuthenticatedUser": true],
            "directAccess": true, "security": ["enableCheck": true, "enableCheckLog": false], "auth": ["anonymous": ["enabled": true]],
            "preserveFileName": false, "scheduledPush": true, "mountGraphQL": false, "mountPlayground": false,
            "databaseOptions": [:], "convertEmailToLowercase": false, "startLiveQueryServer": true,
            "emailVerifySuccessOnInvalidEmail": true, "webhookKey": "hook-key-1",
        ]
    }

    /// Lines the server logged at warning level or above.
    static func warnings(_ output: String) -> [String] {
        output.split(separator: "\n").map(String.init).filter { $0.contains(" warning ") || $0.contains(" error ") || $0.contains(" critical ") }
    }

    @Test("a realistic config.json starts; its options take effect; the only warning is the JavaScript cloud file", arguments: Backend.all)
    func realisticConfig(_ backend: Backend) async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await C.withDatabase(backend, dir) { uri in
            guard case .object(let config) = Self.config(databaseURI: uri) else { return }
            #expect(config.count >= 40)
            let file = dir.appendingPathComponent("config.json")
            try Data(JSONWriter.string(.object(config)).utf8).write(to: file)
            let server = try C.Child(["--config", file.path], environment: [:], dataDir: dir)
            defer { server.process.killNow() }
            try await server.waitUntilHealthy(mount: C.mount)
            try await server.client { p in
                // allowCustomObjectId, allowOrigin, protectedFields.
                let created = try await p.request(
                    .post, "/classes/Post", ["objectId": "post-1", "title": "t"], master: false, extra: ["Origin": "https://admin.example.com"])
                #expect(created["objectId"] == "post-1", "\(created.json)")
                #expect(created.headers[.accessControlAllowOrigin] == "https://admin.example.com")
                #expect(created.headers[.accessControlAllowHeaders]?.hasSuffix(", X-Request-Source") == true)
                let ann = try await p.request(
                    .post, "/users", ["username": "ann", "password": "secret-pass-9", "phone": "555", "ACL": ["*": ["read": true]]], master: false)
                let id = try #require(ann["objectId"]?.stringValue)
                let seen = try await p.request(.get, "/users/\(id)", master: false)
                #expect(seen["username"] == "ann" && seen["phone"] == nil, "\(seen.json)")
                // trustProxy true with masterKeyIps 127.0.0.1: a client forwarded from elsewhere has no master key.
                #expect(try await p.request(.get, "/schemas").status == 200)
                #expect(try await p.request(.get, "/schemas", extra: ["X-Forwarded-For": "203.0.113.9"]).status == 403)
            }
            let warnings = Self.warnings(server.output)
            #expect(warnings.count == 1, "\(warnings)")
            #expect(warnings.first?.contains("Parse Server option cloud (config file key cloud) is not supported") == true, "\(warnings)")
        }
    }
}
