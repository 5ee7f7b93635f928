import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Social Fitness (shared/apps/social-fitness.md) on Schemas/social-fitness.json: workouts with categories and
/// likes, challenges with deadlines, friends, the profile.
@Suite("App flows: Social Fitness")
struct AppFlowsSocialFitnessTests {
    @Test("workouts by category, likes, challenges with deadlines, friends, profile posts and image", arguments: Backend.all)
    func flows(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await p.applySchema("social-fitness.json")
            // Registration and login; profiles are public so friends can see them.
            let dee = try await p.signUp("dee", extra: ["first_name": "Dee", "last_name": "Runner"])
            let eli = try await p.signUp("eli", extra: ["first_name": "Eli", "last_name": "Lifter"])
            let fay = try await p.signUp("fay")
            for u in [dee, eli, fay] { try await p.makePublic(u) }
            let (deeU, eliU) = (p.userPointer(dee.id), p.userPointer(eli.id))
            let login = try await p.request(.post, "/login", ["username": "dee", "password": "secret-pw"], master: false)
            #expect(login["first_name"] == "Dee" && login["friends"] == [])

            // Categories are reference data (master key).
            var category: [String: String] = [:]
            for name in ["endurance", "strength", "flexibility"] { category[name] = try await p.createId("Category", ["Name": .string(name)]) }
            let clientCategory = try await p.asUser(dee.token, .post, "/classes/Category", ["Name": "cardio"])
            #expect(clientCategory.code == 119)
            let strength = p.pointer("Category", category["strength"]!)

            // Create Post screen: a workout with a photo.
            let image = try await p.uploadFile(dee.token, "run.jpg", "running shoes")
            let run = try await p.asUser(
                dee.token, .post, "/classes/Post",
                [
                    "author": deeU, "type": p.pointer("Category", category["endurance"]!), "image": image, "caption": "Morning 10k",
                    "description": "Easy pace", "time": 52, "difficulty": 3,
                ])
            #expect(run.status == 201)
            #expect(run["likes"] == [])  // default value, echoed
            let runId = try #require(run["objectId"]?.stringValue)
            let squats = try await p.createAs(eli.token, "Post", ["author": eliU, "type": strength, "caption": "Squats", "difficulty": 4])
            let deadlifts = try await p.createAs(dee.token, "Post", ["author": deeU, "type": strength, "caption": "Deadlifts", "difficulty": 5])
            let noAuthor = try await p.asUser(dee.token, .post, "/classes/Post", ["caption": "?"])
            #expect(noAuthor.code == 142)

            // Search screen: workouts of a type, by pointer and by the category's name ($inQuery).
            let byPointer = try await p.idsAs(fay.token, "Post", where: ["type": strength], ["order": "-difficulty"])
            #expect(byPointer == [deadlifts, squats])
            let byName = try await p.idsAs(
                fay.token, "Post", where: ["type": ["$inQuery": ["className": "Category", "where": ["Name": "strength"]]]])
            #expect(Set(byName) == [deadlifts, squats])
            let withType = try await p.findAs(fay.token, "Post", where: ["objectId": .string(runId)], ["include": "type,author"])
            #expect(withType.results.first?["type"]?["Name"] == "endurance")
            #expect(withType.results.first?["author"]?["first_name"] == "Dee")

            // Likes: pointer arrays, AddUnique to like, Remove to unlike ("Delete existing like").
            let like = try await p.asUser(eli.token, .put, "/classes/Post/\(runId)", ["likes": ["__op": "AddUnique", "objects": [eliU]]])
            #expect(like["likes"] == [eliU])
            _ = try await p.asUser(fay.token, .put, "/classes/Post/\(runId)", ["likes": ["__op": "AddUnique", "objects": [p.userPointer(fay.id)]]])
            let likedByEli = try await p.idsAs(eli.token, "Post", where: ["likes": eliU])
            #expect(likedByEli == [runId])
            let unlike = try await p.asUser(eli.token, .put, "/classes/Post/\(runId)", ["likes": ["__op": "Remove", "objects": [eliU]]])
            #expect(unlike["likes"] == [p.userPointer(fay.id)])
            let likers = try await p.findAs(dee.token, "Post", where: ["objectId": .string(runId)], ["include": "likes"])
            #expect(likers.results.first?["likes"]?.arrayValue?.first?["username"] == "fay")
            // Only the author deletes a post.
            let notMine = try await p.asUser(eli.token, .delete, "/classes/Post/\(deadlifts)")
            #expect(notMine.status == 404)

            // Post Detail screen: challenge a friend, with a deadline.
            let challenge = try await p.createAs(
                dee.token, "Challenge",
                [
                    "owner_id": deeU, "workout_id": p.pointer("Post", runId), "recipient_id": eliU, "deadline": .date(86_400),
                ])
            let lapsed = try await p.createAs(
                dee.token, "Challenge",
                [
                    "owner_id": deeU, "workout_id": p.pointer("Post", deadlifts), "recipient_id": eliU, "deadline": .date(-3600),
                ])
            let noDeadline = try await p.asUser(
                dee.token, .post, "/classes/Challenge", ["owner_id": deeU, "workout_id": p.pointer("Post", runId), "recipient_id": eliU])
            #expect(noDeadline.json == ["code": 142, "error": "deadline is required"])
            // Home feed: my open challenges (not completed, deadline ahead), soonest first, with workout, type and owner.
            let feed = try await p.findAs(
                eli.token, "Challenge",
                where: [
                    "recipient_id": eliU, "completed": ["$exists": false], "deadline": ["$gt": .date()],
                ], ["order": "deadline", "include": "workout_id,workout_id.type,owner_id"])
            #expect(feed.results.compactMap { $0["objectId"]?.stringValue } == [challenge])
            #expect(feed.results.first?["workout_id"]?["type"]?["Name"] == "endurance")
            #expect(feed.results.first?["owner_id"]?["username"] == "dee")
            // Deadlines in a range: due within two days.
            let dueSoon = try await p.idsAs(
                eli.token, "Challenge", where: ["recipient_id": eliU, "deadline": ["$gte": .date(-7200), "$lte": .date(2 * 86_400)]])
            #expect(Set(dueSoon) == [challenge, lapsed])
            // Start, then complete (only the two users may; Fay sees none of it).
            let start = try await p.asUser(eli.token, .put, "/classes/Challenge/\(challenge)", ["started": .date()])
            #expect(start.status == 200)
            let meddle = try await p.asUser(fay.token, .put, "/classes/Challenge/\(challenge)", ["completed": .date()])
            #expect(meddle.status == 404)
            let complete = try await p.asUser(eli.token, .put, "/classes/Challenge/\(challenge)", ["completed": .date(), "time": 49])
            #expect(complete.status == 200)
            let faySees = try await p.idsAs(fay.token, "Challenge")
            #expect(faySees.isEmpty)

            // Profile screen: the logged-in user, completed challenges, friends, my posts, the profile image.
            let me = try await p.asUser(eli.token, .get, "/users/me")
            #expect(me["last_name"] == "Lifter")
            let completed = try await p.idsAs(eli.token, "Challenge", where: ["recipient_id": eliU, "completed": ["$exists": true]])
            #expect(completed == [challenge])
            _ = try await p.asUser(dee.token, .put, "/users/\(dee.id)", ["friends": ["__op": "AddUnique", "objects": [eliU]]])
            _ = try await p.asUser(eli.token, .put, "/users/\(eli.id)", ["friends": ["__op": "AddUnique", "objects": [deeU]]])
            let friendsOfEli = try await p.findAs(eli.token, "_User", where: ["friends": eliU], ["keys": "username,first_name"])
            #expect(friendsOfEli.results.compactMap { $0["username"]?.stringValue } == ["dee"])
            let withFriends = try await p.findAs(eli.token, "_User", where: ["objectId": .string(eli.id)], ["include": "friends"])
            #expect(withFriends.results.first?["friends"]?.arrayValue?.first?["first_name"] == "Dee")
            // The doc's query: Post where author = current user, newest first.
            let posts = try await p.idsAs(dee.token, "Post", where: ["author": deeU], ["order": "-createdAt"])
            #expect(posts == [deadlifts, runId])
            let avatar = try await p.uploadFile(eli.token, "eli.png", "eli face", contentType: "image/png")
            let updated = try await p.asUser(eli.token, .put, "/users/\(eli.id)", ["image": avatar])
            #expect(updated.status == 200)
            let shown = try await p.asUser(dee.token, .get, "/users/\(eli.id)")
            #expect(shown["image"]?["name"] == avatar["name"])
        }
    }
}
