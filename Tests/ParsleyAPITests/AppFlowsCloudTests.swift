import ExampleAppCloud
import Foundation
import ParsleyPushFakes
import ParsleyCore
import HTTPTypes
import Testing

/// The apps' notifications produced by cloud code (examples/cloud-swift): pushes to the recipient's devices (the fake
/// APNs and FCM receive them) and rows in `Notification` (the in-app list): Glimp's four and Social Fitness's
/// deadline alert, each for its recipient only.
@Suite("App flows: notifications from cloud code")
struct AppFlowsCloudTests {
    static var cloud: CloudCode {
        var cloud = CloudCode()
        AppCloud.register(in: &cloud)
        return cloud
    }

    /// The recipient's notifications (kind: message), oldest first, waiting up to 10 s for `count` of them.
    static func notifications(_ p: ParseClient, _ token: String, count: Int) async throws -> [String] {
        var lines: [String] = []
        for _ in 0..<200 {
            let r = try await p.findAs(token, "Notification", ["order": "createdAt"])
            lines = r.results.map { "\($0["kind"]?.stringValue ?? "?"): \($0["message"]?.stringValue ?? "?")" }
            if lines.count >= count { return lines }
            try await Task.sleep(for: .milliseconds(50))
        }
        return lines
    }

    @Test("Glimp: friend request, accepted request, Glimp request and answer notify the right user", arguments: Backend.all)
    func glimp(_ backend: Backend) async throws {
        try await PushTests.withPush(backend, cloud: Self.cloud) { p, apns, fcm in
            try await p.applySchema("glimp.json")
            let ann = try await p.signUp("ann")
            let bob = try await p.signUp("bob")
            // Ann has an iPhone, Bob an Android phone.
            _ = try await PushTests.install(p, "ann-iphone", token: PushTests.token(0xA), user: ann.id)
            _ = try await PushTests.install(p, "bob-android", type: "android", token: "bob-fcm-token", user: bob.id)
            for u in [ann, bob] { try await p.makePublic(u) }
            let (annU, bobU) = (p.userPointer(ann.id), p.userPointer(bob.id))
            // Ann asks Bob to be friends; Bob accepts.
            let request = try await p.createAs(ann.token, "FriendRequest", ["fromUser": annU, "toUser": bobU])
            _ = try await p.asUser(ann.token, .put, "/users/\(ann.id)", ["friendIds": ["__op": "AddUnique", "objects": [.string(bob.id)]]])
            #expect(try await Self.notifications(p, bob.token, count: 1) == ["friendRequest: ann wants to be your friend"])
            _ = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["friendIds": ["__op": "AddUnique", "objects": [.string(ann.id)]]])
            _ = try await p.asUser(bob.token, .delete, "/classes/FriendRequest/\(request)")
            #expect(try await Self.notifications(p, ann.token, count: 1) == ["friendAccepted: bob accepted your friend request"])
            // Ann asks Bob for a Glimp; Bob answers with a photo.
            let glimp = try await p.createAs(ann.token, "Glimp", ["fromUser": annU, "toUser": bobU, "expiresAt": JSONValue.date(600)])
            let bobs = try await Self.notifications(p, bob.token, count: 2)
            #expect(bobs == ["friendRequest: ann wants to be your friend", "glimpRequest: ann asks you for a Glimp"])
            let photo = try await p.uploadFile(bob.token, "glimp.jpg", "square jpeg")
            #expect(try await p.asUser(bob.token, .put, "/classes/Glimp/\(glimp)", ["photo": photo]).status == 200)
            let anns = try await Self.notifications(p, ann.token, count: 2)
            #expect(anns == ["friendAccepted: bob accepted your friend request", "glimpAnswered: bob answered your Glimp"])
            // Each sees only their own; nobody else reads them.
            #expect(try await Self.notifications(p, bob.token, count: 2).count == 2)
            #expect(try await p.request(.get, "/classes/Notification", master: false).results.isEmpty)
            // The pushes: each to the recipient's device only, with the app's badge counting up.
            for _ in 0..<200 where apns.requests.count < 2 || fcm.messages.count < 2 { try await Task.sleep(for: .milliseconds(50)) }
            #expect(apns.requests.map(\.deviceToken) == [PushTests.token(0xA), PushTests.token(0xA)])
            #expect(apns.requests.map { $0.body["aps"]?["alert"] } == ["bob accepted your friend request", "bob answered your Glimp"])
            #expect(apns.requests.map { $0.body["aps"]?["badge"] } == [1, 2])
            #expect(apns.requests.map { $0.body["kind"] } == ["friendAccepted", "glimpAnswered"])
            #expect(fcm.messages.map { $0["token"] } == ["bob-fcm-token", "bob-fcm-token"])
            let androidData = fcm.messages.compactMap { $0["android"]?["data"]?["data"]?.stringValue.flatMap { try? JSONParser.parse($0) } }
            #expect(androidData.map { $0["alert"] } == ["ann wants to be your friend", "ann asks you for a Glimp"])
            #expect(androidData.map { $0["badge"] } == [1, 2])
        }
    }

    @Test("Social Fitness: challengeDeadlines alerts the challenged user once for a challenge ending within a day", arguments: Backend.all)
    func socialFitness(_ backend: Backend) async throws {
        try await PushTests.withPush(backend, cloud: Self.cloud) { p, apns, _ in
            try await p.applySchema("social-fitness.json")
            let ann = try await p.signUp("ann")
            let bob = try await p.signUp("bob")
            _ = try await PushTests.install(p, "bob-iphone", token: PushTests.token(0xB), user: bob.id)
            let workout = try await p.createId("Post", ["author": p.userPointer(ann.id), "caption": "100 push-ups"])
            let post: JSONValue = ["__type": "Pointer", "className": "Post", "objectId": .string(workout)]
            for (hours, done) in [(2.0, false), (72.0, false), (3.0, true), (-1.0, false)] {
                var body: [String: JSONValue] = [
                    "owner_id": p.userPointer(ann.id), "recipient_id": p.userPointer(bob.id), "workout_id": post,
                    "deadline": JSONValue.date(hours * 3600),
                ]
                if done { body["completed"] = JSONValue.date() }
                _ = try await p.createId("Challenge", .object(body))
            }
            let notMaster = try await p.asUser(bob.token, .post, "/functions/challengeDeadlines", [:])
            #expect(notMaster.code == 142)
            #expect(try await p.request(.post, "/functions/challengeDeadlines", [:]).json == ["result": 1])
            #expect(try await p.request(.post, "/functions/challengeDeadlines", [:]).json == ["result": 0], "each alert is sent once")
            #expect(try await Self.notifications(p, bob.token, count: 1) == ["challengeDeadline: Your challenge from ann ends within a day"])
            #expect(try await Self.notifications(p, ann.token, count: 0).isEmpty)
            for _ in 0..<200 where apns.requests.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            #expect(apns.requests.map { $0.body["aps"]?["alert"] } == ["Your challenge from ann ends within a day"])
            #expect(apns.requests.map(\.deviceToken) == [PushTests.token(0xB)])
        }
    }
}
