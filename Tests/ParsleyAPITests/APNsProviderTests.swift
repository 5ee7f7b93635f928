import AsyncHTTPClient
import NIOCore
import ParsleyCore
import ParsleyDomain
import ParsleyPushFakes
import ParsleyPush
import Testing

/// The APNs provider against a real HTTP/2 + TLS server: what it sends, how it signs, what it makes of the answers.
@Suite struct APNsProviderTests {
    let key = PushTestKeys.apnsKey()

    @Test func alertWithTitleAndBadge() async throws {
        try await FakeAPNs.with(key: key) { fake in
            try await PushTest.using(try PushTest.apns(fake, key: key)) { apns in
                let data: [String: JSONValue] = [
                    "alert": "Hello there", "title": "Greeting", "badge": 3, "sound": "default", "category": "MESSAGE", "threadId": "chat-7",
                ]
                #expect(await apns.send(PushTest.message("aa01", data)) == .sent)
                let request = try #require(fake.requests.first)
                #expect(request.deviceToken == "aa01")
                #expect(request.jwtValid)
                #expect(request.headers["apns-topic"] == "com.example.app")
                #expect(request.headers["apns-push-type"] == "alert")
                #expect(request.headers["apns-priority"] == "10")
                #expect(request.headers["apns-expiration"] == "0")
                #expect(request.headers["apns-collapse-id"] == nil)
                #expect(
                    request.body == [
                        "aps": [
                            "alert": ["title": "Greeting", "body": "Hello there"], "badge": 3, "sound": "default", "category": "MESSAGE",
                            "thread-id": "chat-7",
                        ]
                    ])
            }
        }
    }

    @Test func backgroundPush() async throws {
        try await FakeAPNs.with(key: key) { fake in
            try await PushTest.using(try PushTest.apns(fake, key: key)) { apns in
                #expect(await apns.send(PushTest.message("aa02", ["content-available": 1, "refresh": "inbox"])) == .sent)
                let request = try #require(fake.requests.first)
                #expect(request.headers["apns-push-type"] == "background")
                #expect(request.headers["apns-priority"] == "5")
                #expect(request.body == ["aps": ["content-available": 1], "refresh": "inbox"])
            }
        }
    }

    @Test func customKeysExpirationAndCollapseId() async throws {
        try await FakeAPNs.with(key: key) { fake in
            try await PushTest.using(try PushTest.apns(fake, key: key)) { apns in
                let data: [String: JSONValue] = [
                    "alert": ["body": "Your order shipped", "loc-key": "SHIPPED"], "mutable-content": 1, "collapseId": "order-42",
                    "uri": "shop://orders/42", "order": ["id": 42, "items": ["a", "b"]], "priority": 5,
                ]
                let expiration = ParseDate(milliseconds: 1_900_000_000_000)
                #expect(await apns.send(PushTest.message("aa03", data, expiration: expiration)) == .sent)
                let request = try #require(fake.requests.first)
                #expect(request.headers["apns-expiration"] == "1900000000")
                #expect(request.headers["apns-collapse-id"] == "order-42")
                #expect(request.headers["apns-priority"] == "5")
                #expect(request.headers["apns-push-type"] == "alert")
                #expect(
                    request.body == [
                        "aps": ["alert": ["body": "Your order shipped", "loc-key": "SHIPPED"], "mutable-content": 1],
                        "uri": "shop://orders/42", "order": ["id": 42, "items": ["a", "b"]],
                    ])
            }
        }
    }

    @Test func providerTokenIsSignedReusedAndRenewed() async throws {
        let clock = PushTestClock()
        try await FakeAPNs.with(key: key) { fake in
            try await PushTest.using(try PushTest.apns(fake, key: key, clock: clock)) { apns in
                for token in ["bb01", "bb02", "bb03"] { #expect(await apns.send(PushTest.message(token, ["alert": "hi"])) == .sent) }
                clock.advance(seconds: 49 * 60)
                #expect(await apns.send(PushTest.message("bb04", ["alert": "hi"])) == .sent)
                clock.advance(seconds: 2 * 60)
                #expect(await apns.send(PushTest.message("bb05", ["alert": "hi"])) == .sent)
                let requests = fake.requests
                // Required, not expected: the lines below index the fifth request.
                try #require(requests.count == 5)
                #expect(requests.allSatisfy { $0.jwtValid })
                #expect(Set(requests.prefix(4).map(\.jwt)).count == 1)
                #expect(requests[4].jwt != requests[0].jwt)
                let claims = try #require(PushTestKeys.decodeJWT(requests[4].jwt)?.claims)
                #expect(claims == ["iss": .string(key.teamId), "iat": .int(clock.date.milliseconds / 1000)])
            }
        }
    }

    @Test func answersBecomeOutcomes() async throws {
        try await FakeAPNs.with(key: key) { fake in
            fake.answer("cc01", with: .badDeviceToken)
            fake.answer("cc02", with: .unregistered)
            fake.answer("cc03", with: .tooManyRequests(retryAfter: 7))
            fake.answer("cc04", with: .status(400, reason: "PayloadEmpty"))
            fake.answer("cc05", with: .status(503, reason: "ServiceUnavailable"))
            fake.answer("cc06", with: .status(400, reason: "DeviceTokenNotForTopic"))
            try await PushTest.using(try PushTest.apns(fake, key: key)) { apns in
                func send(_ token: String) async -> PushOutcome { await apns.send(PushTest.message(token, ["alert": "hi"])) }
                #expect(await send("cc01") == .invalidToken(reason: "BadDeviceToken"))
                #expect(await send("cc02") == .invalidToken(reason: "Unregistered"))
                #expect(await send("cc03") == .failed(reason: "TooManyRequests", transient: true, retryAfter: .seconds(7)))
                #expect(await send("cc04") == .failed(reason: "PayloadEmpty", transient: false))
                #expect(await send("cc05") == .failed(reason: "ServiceUnavailable", transient: true))
                #expect(await send("cc06") == .invalidToken(reason: "DeviceTokenNotForTopic"))
                // Not hexadecimal: refused without a request.
                #expect(await send("not/a-token") == .invalidToken(reason: "BadDeviceToken"))
                #expect(fake.requests.count == 6)
            }
        }
    }

    @Test func expiredProviderTokenIsRenewedOnce() async throws {
        let clock = PushTestClock()
        try await FakeAPNs.with(key: key) { fake in
            fake.answer("dd01", with: .expiredProviderToken, .ok)
            try await PushTest.using(try PushTest.apns(fake, key: key, clock: clock)) { apns in
                #expect(await apns.send(PushTest.message("dd01", ["alert": "hi"])) == .sent)
                let requests = fake.requests
                try #require(requests.count == 2)
                // Signed anew (ECDSA signatures differ each time), and the new one is kept.
                #expect(requests[0].jwt != requests[1].jwt)
                #expect(await apns.send(PushTest.message("dd02", ["alert": "hi"])) == .sent)
                #expect(fake.requests.last?.jwt == requests[1].jwt)
            }
        }
    }

    @Test func aForeignKeyIsRefused() async throws {
        try await FakeAPNs.with(key: key) { fake in
            let stranger = PushTestKeys.apnsKey(keyId: key.keyId, teamId: key.teamId)
            try await PushTest.using(try PushTest.apns(fake, key: stranger)) { apns in
                #expect(await apns.send(PushTest.message("ee01", ["alert": "hi"])) == .failed(reason: "InvalidProviderToken", transient: false))
                #expect(fake.requests.first?.jwtValid == false)
            }
        }
    }

    @Test func topicsFollowAppIdentifiers() async throws {
        try await FakeAPNs.with(key: key) { fake in
            func configuration(_ topic: String?) -> APNsConfiguration {
                APNsConfiguration(
                    privateKeyPEM: key.pem, keyId: key.keyId, teamId: key.teamId, topic: topic, host: fake.url, caFile: fake.certificateFile)
            }
            let two = try APNsProvider(
                configurations: [configuration("com.example.app"), configuration("com.example.watch")], connectTimeout: PushTest.connectTimeout)
            try await PushTest.using(two) { apns in
                #expect(await apns.send(PushTest.message("ff01", ["alert": "a"], appIdentifier: "com.example.watch")) == .sent)
                #expect(await apns.send(PushTest.message("ff02", ["alert": "a"], appIdentifier: nil)) == .sent)
                let unknown = await apns.send(PushTest.message("ff03", ["alert": "a"], appIdentifier: "com.other.app"))
                #expect(unknown == .failed(reason: "no APNs configuration for appIdentifier com.other.app", transient: false))
                #expect(await apns.send(PushTest.message("ff04", ["pushType": "voip", "call": "1"], appIdentifier: "com.example.app")) == .sent)
            }
            try await PushTest.using(try PushTest.apns(fake, key: key, topic: nil)) { apns in
                #expect(await apns.send(PushTest.message("ff05", ["alert": "a"], appIdentifier: "com.other.app")) == .sent)
            }
            let topics = fake.requests.map { $0.headers["apns-topic"] }
            #expect(topics == ["com.example.watch", "com.example.app", "com.example.app.voip", "com.other.app"])
        }
    }

    @Test func manyConcurrentSendsShareTheConnection() async throws {
        try await FakeAPNs.with(key: key) { fake in
            try await PushTest.using(try PushTest.apns(fake, key: key)) { apns in
                let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
                    for i in 0..<200 {
                        group.addTask { await apns.send(PushTest.message("c0de" + String(i, radix: 16), ["alert": "hi", "badge": .int(Int64(i))])) }
                    }
                    return await group.reduce(into: [PushOutcome]()) { $0.append($1) }
                }
                #expect(outcomes.count == 200)
                #expect(outcomes.allSatisfy { $0 == .sent })
                let requests = fake.requests
                #expect(requests.count == 200)
                #expect(Set(requests.map(\.deviceToken)).count == 200)
                #expect(Set(requests.map(\.jwt)).count == 1)
                #expect(requests.allSatisfy { $0.httpVersion == 2 })
            }
        }
    }

    @Test func anUnreachableServerIsATransientFailure() async throws {
        let port = try await FakeAPNs.closedPort()
        let configuration = APNsConfiguration(
            privateKeyPEM: key.pem, keyId: key.keyId, teamId: key.teamId, topic: "com.example.app", host: "https://127.0.0.1:\(port)")
        // An injected client (with a short connect timeout: the client retries a refused connection until then) stays open.
        var settings = HTTPClient.Configuration()
        settings.timeout = .init(connect: .milliseconds(500), read: .seconds(5))
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
        try await PushTest.using(try APNsProvider(configurations: [configuration], httpClient: client)) { apns in
            let outcome = await apns.send(PushTest.message("ab01", ["alert": "hi"]))
            guard case .failed(_, true, nil) = outcome else {
                Issue.record("expected a transient failure, got \(outcome)")
                return
            }
        }
        try await client.shutdown()
    }
}
