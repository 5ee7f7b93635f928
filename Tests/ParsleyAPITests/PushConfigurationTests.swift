import Foundation
import ParsleyCore
import ParsleyDomain
import ParsleyPushFakes
import ParsleyPush
import Testing

/// Parse Server's `push` option: the shapes Parsley takes, the ones it refuses (naming the key), and the providers
/// it makes, sending through the fakes.
@Suite struct PushConfigurationTests {
    let key = PushTestKeys.apnsKey()

    func ios(_ extra: [String: JSONValue] = [:], key keyText: String? = nil) -> JSONValue {
        var ios: [String: JSONValue] = [
            "token": ["key": .string(keyText ?? key.pem), "keyId": .string(key.keyId), "teamId": .string(key.teamId)],
            "topic": "com.example.app",
        ]
        for (name, value) in extra { ios[name] = value }
        return .object(ios)
    }

    func error(_ option: JSONValue) -> PushConfigurationError? {
        do {
            _ = try PushConfiguration(option: option)
            return nil
        } catch {
            return error
        }
    }

    @Test func iosShapes() throws {
        let file = try PushTestKeys.temporaryFile(key.pem, suffix: ".p8")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let single = try PushConfiguration(option: ["ios": ios(["production": true], key: file)])
        let apns = try #require(single.apns["ios"]?.first)
        #expect(apns == APNsConfiguration(privateKeyPEM: key.pem, keyId: key.keyId, teamId: key.teamId, topic: "com.example.app", production: true))
        #expect(apns.baseURL == "https://api.push.apple.com")
        #expect(single.fcm == nil)

        let several = try PushConfiguration(option: ["ios": [ios(), ios(["topic": "com.example.watch", "host": "https://127.0.0.1:9/"])]])
        #expect(several.apns["ios"]?.map(\.topic) == ["com.example.app", "com.example.watch"])
        #expect(several.apns["ios"]?.map(\.baseURL) == ["https://api.sandbox.push.apple.com", "https://127.0.0.1:9"])
    }

    @Test func androidShapes() throws {
        let account = PushTestKeys.serviceAccount
        let path = try account.writeKeyFile(tokenURI: "https://oauth2.googleapis.com/token")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try #require(try PushConfiguration(option: ["android": ["firebaseServiceAccount": .string(path)]]).fcm)
        #expect(fromFile.serviceAccount.projectId == account.projectId)
        #expect(fromFile.serviceAccount.clientEmail == account.clientEmail)
        #expect(fromFile.sendURL == "https://fcm.googleapis.com/v1/projects/parsley-test/messages:send")
        #expect(fromFile.effectiveTokenURI == "https://oauth2.googleapis.com/token")

        let json = account.json(tokenURI: "https://oauth2.googleapis.com/token")
        let inline = try PushConfiguration(option: [
            "android": ["firebaseServiceAccount": json, "endpoint": "http://127.0.0.1:8/", "tokenURI": "http://127.0.0.1:8/token"]
        ])
        #expect(inline.fcm?.sendURL == "http://127.0.0.1:8/v1/projects/parsley-test/messages:send")
        #expect(inline.fcm?.effectiveTokenURI == "http://127.0.0.1:8/token")
        let text = try PushConfiguration(option: [
            "android": ["firebaseServiceAccount": .string(JSONWriter.string(json))], "queueOptions": ["batchSize": 100],
        ])
        #expect(text.fcm == fromFile)
    }

    @Test func refusedShapesNameTheirKey() throws {
        #expect(error(["ios": ios(["pfx": "/certs/push.p12"])])?.key == "push.ios.pfx")
        #expect(error(["ios": ["cert": "cert.pem", "key": "key.pem"]])?.key == "push.ios.cert")
        #expect(error(["ios": ["key": "key.pem", "topic": "com.example.app"]])?.key == "push.ios.token")
        #expect(error(["ios": [ios(), ["token": ["key": .string(key.pem), "teamId": "T"]]]])?.key == "push.ios[1].token.keyId")
        #expect(error(["ios": ios(key: "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----")])?.key == "push.ios.token.key")
        #expect(error(["ios": ios(key: "/nonexistent/AuthKey.p8")])?.key == "push.ios.token.key")
        #expect(error(["ios": ios(["production": "yes"])])?.key == "push.ios.production")
        #expect(error(["ios": ios(["caFile": "/nonexistent/ca.pem"])])?.key == "push.ios.caFile")
        #expect(error(["ios": []])?.key == "push.ios")
        let legacy = error(["android": ["apiKey": "AAAA-legacy-server-key"]])
        #expect(legacy?.key == "push.android.apiKey")
        #expect(legacy?.description.contains("shut down in 2024") == true)
        var account = PushTestKeys.serviceAccount.json(tokenURI: "https://oauth2.googleapis.com/token").objectValue ?? [:]
        account["project_id"] = nil
        #expect(error(["android": ["firebaseServiceAccount": .object(account)]])?.key == "push.android.firebaseServiceAccount.project_id")
        #expect(error(["android": ["firebaseServiceAccount": "/nonexistent/sa.json"]])?.key == "push.android.firebaseServiceAccount")
        #expect(error(["web": ["vapidDetails": [:]]])?.key == "push.web")
        #expect(error(["adapter": "my-adapter"])?.key == "push.adapter")
        #expect(error("not an object")?.key == "push")
    }

    @Test func providersSummariesAndDeviceTypes() async throws {
        let account = PushTestKeys.serviceAccount.json(tokenURI: "https://oauth2.googleapis.com/token")
        let option: JSONValue = [
            "ios": ios(), "osx": ios(["topic": "com.example.mac", "production": true]), "android": ["firebaseServiceAccount": account],
        ]
        let providers = try await PushConfiguration.providers(from: option)
        try #require(providers.map(\.name) == ["ios", "osx", "android"])
        #expect(providers[0].serves(deviceType: "ios") && providers[0].serves(deviceType: "watchos") && !providers[0].serves(deviceType: "osx"))
        #expect(providers[1].serves(deviceType: "osx") && !providers[1].serves(deviceType: "ios"))
        #expect(providers[2].serves(deviceType: "android") && !providers[2].serves(deviceType: "ios"))
        #expect(providers[0].summary == "APNs token auth (key \(key.keyId), team \(key.teamId)), topic com.example.app, sandbox")
        #expect(providers[1].summary.hasSuffix("topic com.example.mac, production"))
        #expect(providers[2].summary == "FCM HTTP v1, project parsley-test, as firebase-adminsdk@parsley-test.iam.gserviceaccount.com")
        for provider in providers { try await provider.shutdown() }
    }

    @Test func configuredProvidersSendThroughTheFakes() async throws {
        try await FakeAPNs.with(key: key) { apnsFake in
            try await FakeFCM.with { fcmFake in
                let keyFile = try PushTestKeys.serviceAccount.writeKeyFile(tokenURI: "https://oauth2.example.invalid/token")
                defer { try? FileManager.default.removeItem(atPath: keyFile) }
                let option: JSONValue = [
                    "ios": ios(["host": .string(apnsFake.url), "caFile": .string(apnsFake.certificateFile)]),
                    "android": ["firebaseServiceAccount": .string(keyFile), "endpoint": .string(fcmFake.url), "tokenURI": .string(fcmFake.tokenURI)],
                ]
                let providers = try await PushConfiguration.providers(from: option)
                var outcomes: [PushOutcome] = []
                for provider in providers {
                    let deviceType = provider.name == "ios" ? "ios" : "android"
                    let message = PushTest.message("abcd", ["alert": "hi"], deviceType: deviceType)
                    var outcome = await provider.send(message)
                    // Sent again after a transient failure, as the push queue does: twice in CI a loaded machine timed
                    // out the first connect to the loopback fake (10 s). Anything else still fails the test.
                    if case .failed(_, transient: true, _) = outcome { outcome = await provider.send(message) }
                    outcomes.append(outcome)
                    try await provider.shutdown()
                }
                #expect(outcomes == [.sent, .sent])
                #expect(apnsFake.requests.count == 1 && apnsFake.requests.allSatisfy { $0.jwtValid })
                #expect(fcmFake.messages.count == 1 && fcmFake.tokenExchanges == 1)
            }
        }
    }
}
