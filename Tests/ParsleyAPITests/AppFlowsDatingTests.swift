import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// The dating app's models (shared/apps/dating-app-models.md) on Schemas/dating.json: profiles and prospects
/// nearby, prompts, photos, swipes that become a match, friendships, wings, messages and blocks.
@Suite("App flows: dating")
struct AppFlowsDatingTests {
    static func geo(_ lat: Double, _ lng: Double) -> JSONValue { ["__type": "GeoPoint", "latitude": .double(lat), "longitude": .double(lng)] }

    @Test("profiles, prompts, photos, nearby prospects, swipes to a match, friendships, wings, messages, blocks", arguments: Backend.all)
    func flows(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let plan = try await p.applySchema("dating.json")
            #expect(plan.steps.count == 12)
            let ann = try await p.signUp("ann", extra: ["phone": "+1 555 0100", "email": "ann@example.com"])
            let bob = try await p.signUp("bob", extra: ["phone": "+1 555 0101"])
            let cy = try await p.signUp("cy")
            let (annU, bobU, cyU) = (p.userPointer(ann.id), p.userPointer(bob.id), p.userPointer(cy.id))
            // Users are private by default; a dating profile's user must be readable by others.
            for u in [ann, bob, cy] { try await p.makePublic(u) }

            // Profiles: defaults fill min_age/max_age/max_distance; required fields are enforced.
            func profile(_ u: (id: String, token: String), _ name: String, _ born: String, gender: Int, preference: Int, _ lat: Double, _ lng: Double)
                async throws -> Reply
            {
                try await p.asUser(
                    u.token, .post, "/classes/Profile",
                    [
                        "user_id": p.userPointer(u.id), "name": .string(name), "birthdate": .date(iso: born), "bio": "hi",
                        "gender": .int(Int64(gender)), "preference": .int(Int64(preference)),
                        "curr_latitude": .double(lat), "curr_longitude": .double(lng), "location": Self.geo(lat, lng),
                    ])
            }
            let annProfile = try await profile(ann, "Ann", "1995-05-01T00:00:00.000Z", gender: 2, preference: 1, 40.7128, -74.0060)
            #expect(annProfile.status == 201)
            #expect(annProfile["min_age"] == 18 && annProfile["max_age"] == 99 && annProfile["max_distance"] == 50)
            let bobProfile = try await profile(bob, "Bob", "1993-01-10T00:00:00.000Z", gender: 1, preference: 2, 40.7306, -73.9352)
            #expect(bobProfile.status == 201)
            let cyProfile = try await profile(cy, "Cy", "1990-07-20T00:00:00.000Z", gender: 1, preference: 2, 34.0522, -118.2437)
            #expect(cyProfile.status == 201)
            let incomplete = try await p.asUser(ann.token, .post, "/classes/Profile", ["user_id": annU, "name": "Ann"])
            #expect(incomplete.code == 142)

            // Prospects for Ann: men who like women, within her max_distance (50 km), nearest first, born in her
            // age range; the exact coordinates of others stay hidden, her own are visible to her.
            let prospects = try await p.findAs(
                ann.token, "Profile",
                where: [
                    "gender": 1, "preference": 2, "user_id": ["$ne": annU],
                    "location": ["$nearSphere": Self.geo(40.7128, -74.0060), "$maxDistanceInKilometers": 50],
                    "birthdate": ["$gte": .date(iso: "1926-01-01T00:00:00.000Z"), "$lte": .date(iso: "2006-01-01T00:00:00.000Z")],
                ], ["include": "user_id"])
            #expect(prospects.results.compactMap { $0["name"]?.stringValue } == ["Bob"])
            #expect(prospects.results.first?["curr_latitude"] == nil)
            #expect(prospects.results.first?["user_id"]?["username"] == "bob")
            let own = try await p.findAs(ann.token, "Profile", where: ["user_id": annU])
            #expect(own.results.first?["curr_latitude"] == .double(40.7128))
            let spy = try await p.findAs(bob.token, "Profile", where: ["curr_latitude": ["$gt": 0]])
            #expect(spy.code == 119)
            // Only the owner changes a profile.
            let annProfileId = try #require(annProfile["objectId"]?.stringValue)
            let hijack = try await p.asUser(bob.token, .put, "/classes/Profile/\(annProfileId)", ["bio": "hacked"])
            #expect(hijack.status == 404)
            let moved = try await p.asUser(
                ann.token, .put, "/classes/Profile/\(annProfileId)", ["max_distance": 25, "location": Self.geo(40.72, -74.0)])
            #expect(moved.status == 200)

            // Preview with a primary photo; prompts (master) and answers; photos in order.
            let photo = try await p.uploadFile(ann.token, "ann.jpg", "ann face")
            _ = try await p.createAs(ann.token, "ProfilePreview", ["user_id": annU, "username": "ann", "name": "Ann", "primary_photo": photo])
            let prompt = try await p.createId("Prompt", ["prompt_text": "My ideal Sunday"])
            let clientPrompt = try await p.asUser(ann.token, .post, "/classes/Prompt", ["prompt_text": "x"])
            #expect(clientPrompt.code == 119)
            _ = try await p.createAs(
                ann.token, "PromptResponse", ["user_id": annU, "prompt_id": p.pointer("Prompt", prompt), "response_text": "Bagels"])
            let second = try await p.uploadFile(ann.token, "ann2.jpg", "ann hiking")
            _ = try await p.createAs(ann.token, "Photo", ["user_id": annU, "photo": second, "index": 1])
            let first = try await p.createAs(ann.token, "Photo", ["user_id": annU, "photo": photo])
            let photos = try await p.idsAs(bob.token, "Photo", where: ["user_id": annU], ["order": "index"])
            #expect(photos.first == first && photos.count == 2)
            let answers = try await p.findAs(bob.token, "PromptResponse", where: ["user_id": annU], ["include": "prompt_id"])
            #expect(answers.results.first?["prompt_id"]?["prompt_text"] == "My ideal Sunday")

            // Swipes: Ann likes Bob; Bob likes Ann back, finds her like, and the match is made.
            _ = try await p.createAs(ann.token, "Swipe", ["swiper_id": annU, "prospect_id": bobU, "type": 1, "ACL": ["*": ["read": true]]])
            _ = try await p.createAs(cy.token, "Swipe", ["swiper_id": cyU, "prospect_id": annU, "type": 2])
            _ = try await p.createAs(bob.token, "Swipe", ["swiper_id": bobU, "prospect_id": annU, "type": 1])
            let likedBack = try await p.idsAs(bob.token, "Swipe", where: ["swiper_id": annU, "prospect_id": bobU, "type": ["$in": [1, 3]]])
            #expect(likedBack.count == 1)
            // Cy's swipe is not Bob's business.
            let cySwipes = try await p.idsAs(bob.token, "Swipe", where: ["swiper_id": cyU])
            #expect(cySwipes.isEmpty)
            let match = try await p.createAs(bob.token, "Match", ["first_user_id": annU, "second_user_id": bobU, "type": 1])
            let annMatches = try await p.findAs(
                ann.token, "Match", where: ["$or": [["first_user_id": annU], ["second_user_id": annU]]], ["include": "first_user_id,second_user_id"])
            #expect(annMatches.results.count == 1)
            #expect(annMatches.results.first?["second_user_id"]?["username"] == "bob")
            #expect(annMatches.results.first?["first_user_id"]?["email"] == "ann@example.com")  // her own email
            let bobView = try await p.findAs(bob.token, "Match", where: ["second_user_id": bobU], ["include": "first_user_id"])
            #expect(bobView.results.first?["first_user_id"]?["username"] == "ann")
            #expect(bobView.results.first?["first_user_id"]?["email"] == nil)  // protected: only Ann sees it
            #expect(bobView.results.first?["first_user_id"]?["phone"] == nil)  // protected too
            let ownPhone = try await p.asUser(ann.token, .get, "/users/me")
            #expect(ownPhone["phone"] == "+1 555 0100")
            let cyMatches = try await p.idsAs(cy.token, "Match")
            #expect(cyMatches.isEmpty)
            // Recent swipes (for expiry): by createdAt.
            let recent = try await p.idsAs(ann.token, "Swipe", where: ["createdAt": ["$gte": .date(-3600)]])
            #expect(recent.count == 3)  // her own like and the two on her

            // Friendship: Ann asks Cy; Cy accepts (only the respondent may); a stranger sees nothing.
            let friendship = try await p.createAs(ann.token, "Friendship", ["requester_id": annU, "respondent_id": cyU])
            let pending = try await p.findAs(cy.token, "Friendship", where: ["respondent_id": cyU, "status": 1], ["include": "requester_id"])
            #expect(pending.results.count == 1)
            let selfAccept = try await p.asUser(ann.token, .put, "/classes/Friendship/\(friendship)", ["status": 2])
            #expect(selfAccept.status == 404)
            let accept = try await p.asUser(cy.token, .put, "/classes/Friendship/\(friendship)", ["status": 2])
            #expect(accept.status == 200)
            let strangers = try await p.idsAs(bob.token, "Friendship")
            #expect(strangers.isEmpty)

            // Wing: Cy sends Bob's profile to Ann; Bob (the prospect) never sees it; Ann likes it.
            let wing = try await p.createAs(cy.token, "Wing", ["sender_id": cyU, "recipient_id": annU, "prospect_id": bobU])
            let inbox = try await p.findAs(ann.token, "Wing", where: ["recipient_id": annU, "status": 1], ["include": "prospect_id"])
            #expect(inbox.results.map { $0["objectId"] } == [.string(wing)])
            let prospectView = try await p.idsAs(bob.token, "Wing")
            #expect(prospectView.isEmpty)
            let liked = try await p.asUser(ann.token, .put, "/classes/Wing/\(wing)", ["status": 2])
            #expect(liked.status == 200)

            // Messages between the match: only the two users read them; the recipient marks them read.
            _ = try await p.createAs(ann.token, "Message", ["sender_id": annU, "recipient_id": bobU, "content": "Hi Bob", "sent_at": .date(-60)])
            let reply = try await p.createAs(
                bob.token, "Message", ["sender_id": bobU, "recipient_id": annU, "content": "Hi Ann!", "sent_at": .date()])
            let conversation = try await p.findAs(
                ann.token, "Message",
                where: [
                    "$or": [
                        ["sender_id": annU, "recipient_id": bobU], ["sender_id": bobU, "recipient_id": annU],
                    ]
                ], ["order": "sent_at"])
            #expect(conversation.results.compactMap { $0["content"]?.stringValue } == ["Hi Bob", "Hi Ann!"])
            #expect(conversation.results.allSatisfy { $0["status"] == 1 })
            let unread = try await p.findAs(ann.token, "Message", where: ["recipient_id": annU, "status": 1], ["count": "1", "limit": "0"])
            #expect(unread["count"] == 1)
            let read = try await p.asUser(ann.token, .put, "/classes/Message/\(reply)", ["status": 2])
            #expect(read.status == 200)
            let eavesdrop = try await p.idsAs(cy.token, "Message")
            #expect(eavesdrop.isEmpty)

            // Block: Ann blocks and reports Cy; Cy cannot see it exists; Ann unmatches Bob later.
            let block = try await p.createAs(ann.token, "Block", ["blocked_user_id": cyU, "blocked_by_id": annU, "reported": true, "issue": 2])
            let blocks = try await p.findAs(ann.token, "Block", where: ["blocked_by_id": annU])
            #expect(blocks.results.first?["reported"] == true)
            let blockedView = try await p.findAs(cy.token, "Block", where: ["blocked_user_id": cyU])
            #expect(blockedView.status == 200 && blockedView.results.isEmpty)
            let blockedGet = try await p.asUser(cy.token, .get, "/classes/Block/\(block)")
            #expect(blockedGet.status == 404)
            // Prospect lists leave out the users I blocked ($nin with the ids from my blocks).
            let visible = try await p.findAs(
                ann.token, "Profile",
                where: [
                    "user_id": ["$nin": [annU, cyU]], "gender": 1,
                ])
            #expect(visible.results.compactMap { $0["name"]?.stringValue } == ["Bob"])
            let unmatch = try await p.asUser(ann.token, .delete, "/classes/Match/\(match)")
            #expect(unmatch.status == 200)
        }
    }
}
