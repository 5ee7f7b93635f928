import ParsleyCore
import ParsleyDomain
import ParsleyPushFakes
import ParsleyPush
import Testing
import _CryptoExtras

/// The FCM provider against a real HTTP server with Google's token endpoint: the OAuth2 exchange, the message the
/// Parse Android SDK reads, what it makes of the answers.
@Suite struct FCMProviderTests {
    @Test func oneTokenExchangeForManyConcurrentSends() async throws {
        try await FakeFCM.with { fake in
            try await PushTest.using(try PushTest.fcm(fake)) { fcm in
                let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
                    for i in 0..<50 {
                        group.addTask { await fcm.send(PushTest.message("fcm-token-\(i)", ["alert": "hi"], deviceType: "android")) }
                    }
                    return await group.reduce(into: [PushOutcome]()) { $0.append($1) }
                }
                #expect(outcomes.count == 50)
                #expect(outcomes.allSatisfy { $0 == .sent })
                #expect(fake.messages.count == 50)
                #expect(fake.tokenExchanges == 1)
                #expect(await fcm.send(PushTest.message("fcm-token-later", ["alert": "hi"], deviceType: "android")) == .sent)
                #expect(fake.tokenExchanges == 1)
            }
        }
    }

    @Test func messageShapeForTheParseAndroidSDK() async throws {
        try await FakeFCM.with { fake in
            try await PushTest.using(try PushTest.fcm(fake)) { fcm in
                let data: [String: JSONValue] = ["alert": "Hello", "title": "Greeting", "badge": 2, "uri": "app://inbox", "extra": ["n": 1]]
                let expiration = ParseDate(milliseconds: PushTest.pushTime.milliseconds + 3_600_000)
                #expect(await fcm.send(PushTest.message("fcm-a", data, deviceType: "android", expiration: expiration)) == .sent)
                #expect(await fcm.send(PushTest.message("fcm-b", ["content-available": 1], deviceType: "android")) == .sent)
                let messages = fake.messages
                let first = try #require(messages.first)
                #expect(first["token"] == "fcm-a")
                #expect(first["android"]?["priority"] == "high")
                #expect(first["android"]?["ttl"] == "3600s")
                #expect(first["android"]?["data"]?["push_id"] == "pushStatus1")
                #expect(first["android"]?["data"]?["time"] == .string(PushTest.pushTime.iso))
                let text = try #require(first["android"]?["data"]?["data"]?.stringValue)
                #expect(try JSONParser.parse(text) == .object(data))
                #expect(first["notification"] == nil)
                let background = try #require(messages.last)
                #expect(background["android"]?["priority"] == "normal")
                #expect(background["android"]?["ttl"] == nil)
            }
        }
    }

    @Test func answersBecomeOutcomes() async throws {
        try await FakeFCM.with { fake in
            fake.answer("gone", with: .unregistered)
            fake.answer("busy", with: .quotaExceeded(retryAfter: 30))
            fake.answer("junk", with: .invalidRegistration)
            fake.answer("down", with: .unavailable)
            try await PushTest.using(try PushTest.fcm(fake)) { fcm in
                func send(_ token: String) async -> PushOutcome { await fcm.send(PushTest.message(token, ["alert": "hi"], deviceType: "android")) }
                #expect(await send("gone") == .invalidToken(reason: "UNREGISTERED"))
                let quota = PushOutcome.failed(
                    reason: "QUOTA_EXCEEDED: Quota exceeded for sending messages.", transient: true, retryAfter: .seconds(30))
                #expect(await send("busy") == quota)
                guard case .invalidToken = await send("junk") else {
                    Issue.record("an INVALID_ARGUMENT about the token is an invalid token")
                    return
                }
                guard case .failed(_, true, nil) = await send("down") else {
                    Issue.record("503 is transient")
                    return
                }
            }
        }
    }

    @Test func anAccessTokenIsRenewedAMinuteBeforeItExpires() async throws {
        let clock = PushTestClock()
        try await FakeFCM.with(tokenDelay: .zero) { fake in
            try await PushTest.using(try PushTest.fcm(fake, clock: clock)) { fcm in
                #expect(await fcm.send(PushTest.message("t1", ["alert": "hi"], deviceType: "android")) == .sent)
                // The fake's tokens live 3599 s: kept until 3539 s.
                clock.advance(seconds: 3538)
                #expect(await fcm.send(PushTest.message("t2", ["alert": "hi"], deviceType: "android")) == .sent)
                #expect(fake.tokenExchanges == 1)
                clock.advance(seconds: 2)
                #expect(await fcm.send(PushTest.message("t3", ["alert": "hi"], deviceType: "android")) == .sent)
                #expect(fake.tokenExchanges == 2)
            }
        }
    }

    @Test func aRefusedAccessTokenIsReplacedOnce() async throws {
        try await FakeFCM.with { fake in
            try await PushTest.using(try PushTest.fcm(fake)) { fcm in
                #expect(await fcm.send(PushTest.message("t1", ["alert": "hi"], deviceType: "android")) == .sent)
                fake.revokeAccessTokens()
                #expect(await fcm.send(PushTest.message("t2", ["alert": "hi"], deviceType: "android")) == .sent)
                #expect(fake.tokenExchanges == 2)
                #expect(fake.messages.count == 2)
            }
        }
    }

    @Test func aForeignKeyGetsNoAccessToken() async throws {
        try await FakeFCM.with(tokenDelay: .zero) { fake in
            let impostor = PushTestKeys.ServiceAccount(
                privateKey: try .init(keySize: .bits2048), projectId: fake.account.projectId, clientEmail: fake.account.clientEmail,
                privateKeyId: "feedface")
            try await PushTest.using(try PushTest.fcm(fake, account: impostor)) { fcm in
                let outcome = await fcm.send(PushTest.message("t1", ["alert": "hi"], deviceType: "android"))
                guard case .failed(let reason, false, _) = outcome else {
                    Issue.record("expected a permanent failure, got \(outcome)")
                    return
                }
                #expect(reason.contains("invalid_grant"))
                #expect(fake.messages.isEmpty)
            }
        }
    }

    @Test func appleDevicesOnFirebaseGetAnAPNsPayload() async throws {
        try await FakeFCM.with { fake in
            try await PushTest.using(try PushTest.fcm(fake)) { fcm in
                let message = PushTest.message("ios-fcm", ["alert": "Hi", "badge": 1, "collapseId": "c"], deviceType: "ios", pushType: "fcm")
                #expect(fcm.serves(message))
                #expect(!fcm.serves(PushTest.message("x", [:], deviceType: "ios")))
                #expect(fcm.serves(deviceType: "android"))
                #expect(await fcm.send(message) == .sent)
                let sent = try #require(fake.messages.first)
                #expect(sent["android"] == nil)
                #expect(sent["apns"]?["payload"] == ["aps": ["alert": "Hi", "badge": 1]])
                #expect(sent["apns"]?["headers"]?["apns-collapse-id"] == "c")
                #expect(sent["apns"]?["headers"]?["apns-push-type"] == "alert")
            }
        }
    }
}
