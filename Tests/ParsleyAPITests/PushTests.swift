import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyPushFakes
import ParsleyDomain
import ParsleyPush
import Testing

/// Push through the real server to a fake APNs (HTTP/2 over TLS, checking the JWT) and a fake FCM: `POST /push`,
/// `_PushStatus`, targeting, badges, localisation, dead tokens, retries, schedules and expiry.
@Suite("Push")
struct PushTests {
    /// A server with both providers pointed at fakes; the queue looks every 100 ms.
    static func withPush(
        _ backend: Backend, cloud: CloudCode = CloudCode(), _ body: @escaping @Sendable (ParseClient, FakeAPNs, FakeFCM) async throws -> Void
    ) async throws {
        let key = PushTestKeys.apnsKey()
        try await FakeAPNs.with(key: key) { apns in
            try await FakeFCM.with { fcm in
                try await PushTest.using(try PushTest.apns(apns, key: key)) { ios in
                    try await PushTest.using(try PushTest.fcm(fcm)) { android in
                        let options = TestServer.options {
                            $0.push.providers = [ios, android]
                            $0.push.interval = .milliseconds(100)
                        }
                        try await TestServer.with(backend: backend, options, cloud: cloud) { p in try await body(p, apns, fcm) }
                    }
                }
            }
        }
    }

    /// A 64-hex-digit APNs token (FCM tokens are any text).
    static func token(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    /// Waits until the push's status is one of `statuses` (`seconds` at most) and returns the row.
    static func status(
        _ p: ParseClient, _ id: String, until statuses: Set<String> = ["succeeded", "failed"], within seconds: Int = 20
    ) async throws -> Reply {
        var last = try await p.get("_PushStatus", id)
        for _ in 0..<(seconds * 20) {
            if let s = last["status"]?.stringValue, statuses.contains(s) { return last }
            try await Task.sleep(for: .milliseconds(50))
            last = try await p.get("_PushStatus", id)
        }
        return last
    }

    static func install(
        _ p: ParseClient, _ id: String, type: String = "ios", token: String?, channels: [String] = [], user: String? = nil,
        extra: [String: JSONValue] = [:]
    ) async throws -> String {
        var body: [String: JSONValue] = [
            "installationId": .string(id), "deviceType": .string(type), "channels": .array(channels.map(JSONValue.string)),
        ]
        if let token { body["deviceToken"] = .string(token) }
        if let user { body["user"] = ["__type": "Pointer", "className": "_User", "objectId": .string(user)] }
        for (k, v) in extra { body[k] = v }
        let made = try await p.request(.post, "/installations", .object(body))
        return try #require(made["objectId"]?.stringValue, "\(made.json)")
    }

    static func push(_ p: ParseClient, _ body: JSONValue) async throws -> String {
        let answer = try await p.request(.post, "/push", body)
        #expect(answer.json == ["result": true], "\(answer.json)")
        return try #require(answer.headers[HTTPField.Name("X-Parse-Push-Status-Id")!])
    }

    @Test(
        "channels and where ($inQuery on users): the right devices get Parse's payload per provider; badges increment; alerts localised; _PushStatus counts",
        arguments: Backend.all)
    func targeting(_ backend: Backend) async throws {
        try await Self.withPush(backend) { p, apns, fcm in
            let ann = try await p.signUp("ann")
            let bob = try await p.signUp("bob")
            let a = try await Self.install(p, "inst-a", token: Self.token(1), channels: ["news"], user: ann.id, extra: ["badge": 2])
            _ = try await Self.install(p, "inst-b", type: "android", token: "fcm-token-b", channels: ["news"], user: bob.id)
            _ = try await Self.install(p, "inst-c", token: Self.token(3), channels: ["sports"], user: bob.id)
            _ = try await Self.install(p, "inst-d", token: nil, channels: ["news"])
            _ = try await Self.install(p, "inst-e", token: Self.token(5), channels: ["news"], extra: ["localeIdentifier": "fr-FR"])

            let id = try await Self.push(
                p, ["channels": ["news"], "data": ["alert": "Hello", "alert-fr": "Bonjour", "badge": "Increment", "team": "blue"]])
            let status = try await Self.status(p, id)
            #expect(status["status"] == "succeeded")
            #expect(status["numSent"] == 3)
            #expect(status["numFailed"] == 0)
            #expect(status["sentPerType"] == ["ios": 2, "android": 1])
            #expect(status["source"] == "rest")
            #expect(status["query"]?.stringValue.flatMap { try? JSONParser.parse($0) } == ["channels": ["$in": ["news"]]])
            #expect(status["payload"]?.stringValue.flatMap { try? JSONParser.parse($0) }?["alert"] == "Hello")
            #expect(status["pushHash"]?.stringValue?.count == 32)

            let byToken = Dictionary(apns.requests.map { ($0.deviceToken, $0) }, uniquingKeysWith: { a, _ in a })
            #expect(Set(byToken.keys) == [Self.token(1), Self.token(5)])
            #expect(byToken[Self.token(1)]?.body["aps"]?["alert"] == "Hello")
            #expect(byToken[Self.token(1)]?.body["aps"]?["badge"] == 3)
            #expect(byToken[Self.token(1)]?.body["team"] == "blue")
            #expect(byToken[Self.token(5)]?.body["aps"]?["alert"] == "Bonjour")
            #expect(byToken[Self.token(5)]?.body["aps"]?["badge"] == 1)
            #expect(
                byToken.values.allSatisfy { $0.jwtValid && $0.headers["apns-topic"] == "com.example.app" && $0.headers["apns-push-type"] == "alert" })
            let android = try #require(fcm.messages.first)
            #expect(fcm.messages.count == 1)
            #expect(android["token"] == "fcm-token-b")
            let data = try #require(android["android"]?["data"]?["data"]?.stringValue.flatMap { try? JSONParser.parse($0) })
            #expect(data["alert"] == "Hello")
            #expect(android["android"]?["data"]?["push_id"] == .string(id))
            #expect(try await p.get("_Installation", a)["badge"] == 3)

            // Users by a sub-query: bob's two devices.
            let second = try await Self.push(
                p,
                [
                    "where": ["user": ["$inQuery": ["className": "_User", "where": ["username": "bob"]]]], "data": ["alert": "Hi Bob"],
                ])
            #expect(try await Self.status(p, second)["numSent"] == 2)
            #expect(apns.requests.filter { $0.body["aps"]?["alert"] == "Hi Bob" }.map(\.deviceToken) == [Self.token(3)])
            #expect(fcm.messages.count == 2)
        }
    }

    @Test(
        "dead tokens (APNs 410/400, FCM UNREGISTERED) are counted failed and removed from their installation; a 429 is retried",
        arguments: Backend.all)
    func deadTokensAndRetries(_ backend: Backend) async throws {
        try await Self.withPush(backend) { p, apns, fcm in
            apns.answer(Self.token(1), with: .unregistered)
            apns.answer(Self.token(2), with: .badDeviceToken)
            apns.answer(Self.token(3), with: .tooManyRequests(retryAfter: nil), .ok)
            fcm.answer("gone", with: .unregistered)
            let i1 = try await Self.install(p, "i1", token: Self.token(1), channels: ["all"])
            let i2 = try await Self.install(p, "i2", token: Self.token(2), channels: ["all"])
            let i3 = try await Self.install(p, "i3", token: Self.token(3), channels: ["all"])
            let i4 = try await Self.install(p, "i4", type: "android", token: "gone", channels: ["all"])
            let id = try await Self.push(p, ["channels": ["all"], "data": ["alert": "x"]])
            let status = try await Self.status(p, id)
            #expect(status["numSent"] == 1)
            #expect(status["numFailed"] == 3)
            #expect(status["failedPerType"] == ["ios": 2, "android": 1])
            #expect(apns.requests.filter { $0.deviceToken == Self.token(3) }.count == 2, "retried once")
            for dead in [i1, i2, i4] { #expect(try await p.get("_Installation", dead)["deviceToken"] == nil) }
            #expect(try await p.get("_Installation", i3)["deviceToken"] == .string(Self.token(3)))
        }
    }

    @Test(
        "push_time schedules (UTC, and local time per installation time zone); expiration sets apns-expiration; an expired push is not sent",
        arguments: Backend.all)
    func scheduleAndExpiry(_ backend: Backend) async throws {
        try await Self.withPush(backend) { p, apns, _ in
            _ = try await Self.install(p, "utc", token: Self.token(1), channels: ["t"], extra: ["timeZone": "UTC"])
            _ = try await Self.install(p, "tokyo", token: Self.token(2), channels: ["t"], extra: ["timeZone": "Asia/Tokyo"])
            _ = try await Self.install(p, "honolulu", token: Self.token(3), channels: ["t"], extra: ["timeZone": "Pacific/Honolulu"])
            // In 5 s, UTC (room for a loaded machine before the check below).
            let inTwo = ParseDate(milliseconds: ParseDate.now.milliseconds + 5000)
            let scheduled = try await Self.push(
                p, ["channels": ["t"], "push_time": .string(inTwo.iso), "data": ["alert": "later"], "expiration_interval": 3600])
            #expect(try await p.get("_PushStatus", scheduled)["status"] == "scheduled")
            try await Task.sleep(for: .milliseconds(500))
            #expect(apns.requests.isEmpty, "not before its time")
            let done = try await Self.status(p, scheduled)
            #expect(done["status"] == "succeeded")
            #expect(done["numSent"] == 3)
            let expiration = try #require(apns.requests.first?.headers["apns-expiration"].flatMap { Int64($0) })
            // An hour after the push went out: at its push_time, or later when a loaded machine's scheduler was late.
            let late = expiration - (inTwo.milliseconds / 1000 + 3600)
            #expect(late >= -2 && late <= 30, "apns-expiration \(late) s after push_time + 1 h")

            // The same wall-clock time in each zone: Tokyo (UTC+9) is past it already, UTC in 2 s, Honolulu (UTC-10) in 10 h.
            let local = String(inTwo.iso.dropLast())  // no `Z`: a local time
            let perZone = try await Self.push(p, ["channels": ["t"], "push_time": .string(local), "data": ["alert": "local"]])
            let running = try await Self.status(p, perZone, until: ["running"])
            #expect(running["status"] == "running")
            for _ in 0..<100 where apns.requests.filter({ $0.body["aps"]?["alert"] == "local" }).count < 2 {
                try await Task.sleep(for: .milliseconds(50))
            }
            let local1 = apns.requests.filter { $0.body["aps"]?["alert"] == "local" }.map(\.deviceToken)
            #expect(Set(local1) == [Self.token(1), Self.token(2)], "Tokyo at once, UTC in 2 s, not Honolulu")
            // The counts are written once the page's answers are in.
            var row = try await p.get("_PushStatus", perZone)
            for _ in 0..<100 where row["sentPerUTCOffset"] != ["9": 1, "0": 1] {
                try await Task.sleep(for: .milliseconds(50))
                row = try await p.get("_PushStatus", perZone)
            }
            #expect(row["sentPerUTCOffset"] == ["9": 1, "0": 1])
            #expect(row["status"] == "running", "Honolulu is still to come")

            // Expired before its time came: nothing is sent.
            let past = ParseDate(milliseconds: ParseDate.now.milliseconds - 60_000)
            let expired = try await Self.push(p, ["channels": ["t"], "data": ["alert": "stale"], "expiration_time": .string(past.iso)])
            let failed = try await Self.status(p, expired)
            #expect(failed["status"] == "failed")
            #expect(apns.requests.allSatisfy { $0.body["aps"]?["alert"] != "stale" })
        }
    }

    @Test("POST /push refusals: master key only, where or channels (not both), valid times; without a provider 115", arguments: Backend.all)
    func refusals(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let unconfigured = try await p.request(.post, "/push", ["channels": ["a"], "data": ["alert": "x"]])
            #expect(unconfigured.json == ["code": 115, "error": "Missing push configuration"])
            #expect(try await p.request(.get, "/serverInfo")["features"]?["push"]?["immediatePush"] == false)
        }
        try await Self.withPush(backend) { p, _, _ in
            #expect(try await p.request(.post, "/push", ["channels": ["a"], "data": ["alert": "x"]], master: false).status == 403)
            let neither = try await p.request(.post, "/push", ["data": ["alert": "x"]])
            #expect(neither.json == ["code": 115, "error": "Sending a push requires either \"channels\" or a \"where\" query."])
            let both = try await p.request(.post, "/push", ["channels": ["a"], "where": [:], "data": ["alert": "x"]])
            #expect(both.json == ["code": 115, "error": "Channels and query can not be set at the same time."])
            let badTime = try await p.request(.post, "/push", ["channels": ["a"], "push_time": "soon", "data": ["alert": "x"]])
            #expect(badTime["code"] == 115)
            let twoExpiries = try await p.request(.post, "/push", ["channels": ["a"], "expiration_time": 1, "expiration_interval": 5, "data": [:]])
            #expect(twoExpiries["code"] == 115)
            // A query that cannot run is refused at once, as a find with it would be; nothing is queued.
            let badQuery = try await p.request(.post, "/push", ["where": ["deviceType": ["$bogus": 1]], "data": ["alert": "x"]])
            let asFind = try await p.find("_Installation", where: ["deviceType": ["$bogus": 1]])
            #expect(badQuery.status == 400)
            #expect(badQuery.json == asFind.json, "\(badQuery.json)")
            #expect(badQuery["code"] == 107)
            #expect(try await p.find("_PushStatus").results.isEmpty)
            #expect(try await p.request(.get, "/serverInfo")["features"]?["push"]?["immediatePush"] == true)
            #expect(try await p.find("_PushStatus", master: false).status == 400, "push statuses are master-only")
        }
    }

    @Test("cloud code pushes with parse.push: a trigger notifies a user's devices", arguments: Backend.all)
    func fromCloudCode(_ backend: Backend) async throws {
        var cloud = CloudCode()
        cloud.afterSave("Message") { req in
            guard let to = req.object["to", as: Pointer.self] else { return }
            try await req.parse.push(
                where: ["user": .object(["__type": "Pointer", "className": "_User", "objectId": .string(to.objectId)])],
                data: ["alert": "New message"])
        }
        try await Self.withPush(backend, cloud: cloud) { p, apns, _ in
            let ann = try await p.signUp("ann")
            _ = try await Self.install(p, "ann-phone", token: Self.token(7), user: ann.id)
            _ = try await p.createId("Message", ["to": ["__type": "Pointer", "className": "_User", "objectId": .string(ann.id)]])
            for _ in 0..<100 where apns.requests.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            #expect(apns.requests.map(\.deviceToken) == [Self.token(7)])
            let statuses = try await p.find("_PushStatus")
            #expect(statuses.results.first?["source"] == "cloud")
        }
    }
}
