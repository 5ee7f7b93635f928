import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Glimp (shared/apps/glimp.md) on Schemas/glimp.json: friends by mutual ids, friend requests, Glimp requests
/// that expire, photo answers, the profile picture.
@Suite("App flows: Glimp")
struct AppFlowsGlimpTests {
    @Test("friend requests, friends lists, Glimp requests with expiresAt, photo answers, profile picture", arguments: Backend.all)
    func flows(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await p.applySchema("glimp.json")
            let ann = try await p.signUp("ann", extra: ["email": "ann@example.com"])
            let bob = try await p.signUp("bob", extra: ["email": "bob@example.com"])
            let cy = try await p.signUp("cy")
            for u in [ann, bob, cy] { try await p.makePublic(u) }
            let (annU, bobU, cyU) = (p.userPointer(ann.id), p.userPointer(bob.id), p.userPointer(cy.id))
            // friendIds (the doc's Friends) defaults to [] on sign-up.
            let fresh = try await p.asUser(ann.token, .get, "/users/me")
            #expect(fresh["friendIds"] == [])

            // createRequest(toUser:): find the user by name, create a FriendRequest, add their id to my Friends.
            let found = try await p.findAs(ann.token, "_User", where: ["username": "bob"])
            #expect(found.results.first?["objectId"]?.stringValue == bob.id)
            #expect(found.results.first?["email"] == nil)
            let request = try await p.createAs(ann.token, "FriendRequest", ["fromUser": annU, "toUser": bobU])
            let added = try await p.asUser(ann.token, .put, "/users/\(ann.id)", ["friendIds": ["__op": "AddUnique", "objects": [.string(bob.id)]]])
            #expect(added["friendIds"] == [.string(bob.id)])
            let fromCy = try await p.createAs(cy.token, "FriendRequest", ["fromUser": cyU, "toUser": bobU])

            // Bob loads his requests (with the sender's name); Cy's own request is not Ann's business.
            let requests = try await p.findAs(bob.token, "FriendRequest", where: ["toUser": bobU], ["include": "fromUser", "order": "createdAt"])
            #expect(requests.results.compactMap { $0["fromUser"]?["username"]?.stringValue } == ["ann", "cy"])
            let annSees = try await p.idsAs(ann.token, "FriendRequest")
            #expect(annSees == [request])
            // acceptRequest: add Ann to Bob's Friends and delete the request; deleteRequest: delete Cy's.
            let accept = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["friendIds": ["__op": "AddUnique", "objects": [.string(ann.id)]]])
            #expect(accept.status == 200)
            let done = try await p.asUser(bob.token, .delete, "/classes/FriendRequest/\(request)")
            #expect(done.status == 200)
            let ignored = try await p.asUser(bob.token, .delete, "/classes/FriendRequest/\(fromCy)")
            #expect(ignored.status == 200)
            let left = try await p.idsAs(bob.token, "FriendRequest")
            #expect(left.isEmpty)

            // FriendsCollection.load: users in my Friends who have my id in theirs.
            let me = try await p.asUser(ann.token, .get, "/users/me")
            let myFriends = me["friendIds"] ?? []
            let friends = try await p.findAs(
                ann.token, "_User", where: ["objectId": ["$in": myFriends], "friendIds": .string(ann.id)], ["keys": "username,profilePicture"])
            #expect(friends.results.compactMap { $0["username"]?.stringValue } == ["bob"])
            // Cy added Ann on his side only: not a friend.
            _ = try await p.asUser(cy.token, .put, "/users/\(cy.id)", ["friendIds": ["__op": "AddUnique", "objects": [.string(ann.id)]]])
            let stillOne = try await p.findAs(ann.token, "_User", where: ["friendIds": .string(ann.id), "objectId": ["$in": myFriends]])
            #expect(stillOne.results.count == 1)

            // sendGlimpRequest: one Glimp per selected friend, answerable for 10 minutes (a batch, as the SDK's saveAll).
            let batch = try await p.asUser(
                ann.token, .post, "/batch",
                [
                    "requests": [
                        ["method": "POST", "path": "/parse/classes/Glimp", "body": ["fromUser": annU, "toUser": bobU, "expiresAt": .date(600)]],
                        ["method": "POST", "path": "/parse/classes/Glimp", "body": ["fromUser": annU, "toUser": bobU, "expiresAt": .date(-60)]],
                    ]
                ])
            let glimpId = try #require(batch.json.arrayValue?.first?["success"]?["objectId"]?.stringValue)
            #expect(batch.json.arrayValue?.count == 2)
            let noExpiry = try await p.asUser(ann.token, .post, "/classes/Glimp", ["fromUser": annU, "toUser": bobU])
            #expect(noExpiry.json == ["code": 142, "error": "expiresAt is required"])

            // Bob's incoming requests: active (not expired) and unanswered, with who asked.
            let pending = try await p.findAs(
                bob.token, "Glimp",
                where: [
                    "toUser": bobU, "photo": ["$exists": false], "expiresAt": ["$gt": .date()],
                ], ["include": "fromUser", "order": "expiresAt"])
            #expect(pending.results.compactMap { $0["objectId"]?.stringValue } == [glimpId])
            #expect(pending.results.first?["fromUser"]?["username"] == "ann")
            // Only the asked friend answers; Cy sees nothing.
            let selfAnswer = try await p.asUser(ann.token, .put, "/classes/Glimp/\(glimpId)", ["photo": ["__type": "File", "name": "x.jpg"]])
            #expect(selfAnswer.status == 404)
            let cySees = try await p.idsAs(cy.token, "Glimp")
            #expect(cySees.isEmpty)
            // answerRequest: upload the square image and set it on the request.
            let photo = try await p.uploadFile(bob.token, "glimp.jpg", "square jpeg")
            let answered = try await p.asUser(bob.token, .put, "/classes/Glimp/\(glimpId)", ["photo": photo])
            #expect(answered.status == 200)
            let nowPending = try await p.idsAs(
                bob.token, "Glimp", where: ["toUser": bobU, "photo": ["$exists": false], "expiresAt": ["$gt": .date()]])
            #expect(nowPending.isEmpty)

            // GlimpsCollection.load: the answered Glimps I asked for, newest first, with the photo's URL.
            let received = try await p.findAs(
                ann.token, "Glimp", where: ["fromUser": annU, "photo": ["$exists": true]], ["order": "-updatedAt", "include": "toUser"])
            #expect(received.results.count == 1)
            #expect(received.results.first?["photo"]?["url"]?.stringValue?.contains("/files/") == true)
            #expect(received.results.first?["toUser"]?["username"] == "bob")
            // Expired, unanswered requests can be cleaned up by the sender.
            let expired = try await p.idsAs(
                ann.token, "Glimp", where: ["fromUser": annU, "expiresAt": ["$lt": .date()], "photo": ["$exists": false]])
            try #require(expired.count == 1)
            let cleaned = try await p.asUser(ann.token, .delete, "/classes/Glimp/\(expired[0])")
            #expect(cleaned.status == 200)

            // changeProfilePicture: upload and set it on the user; friends see it.
            let picture = try await p.uploadFile(ann.token, "me.jpg", "new face")
            let changed = try await p.asUser(ann.token, .put, "/users/\(ann.id)", ["profilePicture": picture])
            #expect(changed.status == 200)
            let seen = try await p.asUser(bob.token, .get, "/users/\(ann.id)")
            #expect(seen["profilePicture"]?["name"] == picture["name"])
            // Deleting a friendship: remove the id on my side.
            let unfriend = try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["friendIds": ["__op": "Remove", "objects": [.string(ann.id)]]])
            #expect(unfriend["friendIds"] == [])
            let noFriends = try await p.findAs(ann.token, "_User", where: ["objectId": ["$in": myFriends], "friendIds": .string(ann.id)])
            #expect(noFriends.results.isEmpty)
        }
    }
}
