import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// "How are you?" (shared/apps/journal-how-are-you.md): its networking section, request by request, against
/// Schemas/journal.json, as signed-up users.
@Suite("App flows: journal")
struct AppFlowsJournalTests {
    @Test("schema loads once; a second apply changes nothing", arguments: Backend.all)
    func schema(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let first = try await p.applySchema("journal.json")
            #expect(first.steps.map(\.change.className) == ["Question", "Entry"])
            let second = try await p.applySchema("journal.json")
            #expect(second.steps.isEmpty)
            #expect(second.unchanged == ["Question", "Entry"])
            let entry = try await p.request(.get, "/schemas/Entry")
            #expect(entry["fields"]?["user"] == ["type": "Pointer", "targetClass": "_User", "required": true])
            #expect(entry["indexes"]?["user_created_at"] == ["user": 1, "created_at": -1])
        }
    }

    @Test("sign up, log in, create entries with a picture, the screens' queries, the Question lookup, privacy", arguments: Backend.all)
    func flows(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await p.applySchema("journal.json")
            // Questions are reference data, written with the master key.
            let q1 = try await p.createId("Question", ["question": "How did you sleep?", "answer1": "Well", "answer2": "So-so", "answer3": "Badly"])
            let q2 = try await p.createId("Question", ["question": "Did you go outside?", "answer1": "Yes", "answer2": "A bit", "answer3": "No"])

            // Home screen: sign up (PFUser.signUpInBackground), then log in (PFUser.logInWithUsername).
            let signUp = try await p.request(.post, "/users", ["username": "meng", "password": "calm-pw"], master: false)
            #expect(signUp.status == 201)
            let userId = try #require(signUp["objectId"]?.stringValue)
            let login = try await p.request(.post, "/login", ["username": "meng", "password": "calm-pw"], master: false)
            #expect(login.status == 200)
            let token = try #require(login["sessionToken"]?.stringValue)
            let me = try await p.asUser(token, .get, "/users/me")
            #expect(me["objectId"]?.stringValue == userId)
            let other = try await p.signUp("ruifan")

            // Day Entry screen: create entries (the picture is uploaded first, then referenced).
            let picture = try await p.uploadFile(token, "today.jpg", "jpeg bytes")
            let user = p.userPointer(userId)
            let days: [(String, Int, String?)] = [
                ("2024-03-01T09:00:00.000Z", 6, q1), ("2024-03-02T21:30:00.000Z", 8, q2), ("2024-03-03T08:15:00.000Z", 3, nil),
            ]
            var ids: [String] = []
            for (iso, mood, question) in days {
                var body: [String: JSONValue] = [
                    "user": user, "created_at": .date(iso: iso), "mood": .int(Int64(mood)),
                    "thought_today": .string("thought \(mood)"), "gratitude_today": .string("grateful \(mood)"), "ACL": .only(userId),
                ]
                if let question {
                    body["question_id"] = p.pointer("Question", question)
                    body["answer_index"] = 1
                }
                if mood == 8 { body["picture_today"] = picture }
                ids.append(try await p.createAs(token, "Entry", .object(body)))
            }
            // Required fields (user, created_at, mood) are enforced.
            let noMood = try await p.asUser(token, .post, "/classes/Entry", ["user": user, "created_at": .date()])
            #expect(noMood.json == ["code": 142, "error": "mood is required"])
            // Clients cannot add fields the schema does not have.
            let extra = try await p.asUser(token, .post, "/classes/Entry", ["user": user, "created_at": .date(), "mood": 5, "weather": "sun"])
            #expect(extra.code == 119)

            let mine: JSONValue = ["user": user]
            // Entry/Home screen: entries of one day (the doc's `date` key is not a field: a created_at range).
            let day = try await p.idsAs(
                token, "Entry",
                where: [
                    "user": user, "created_at": ["$gte": .date(iso: "2024-03-02T00:00:00.000Z"), "$lt": .date(iso: "2024-03-03T00:00:00.000Z")],
                ], ["order": "-created_at"])
            #expect(day == [ids[1]])
            // As written (whereKey("date", equalTo: Date())): answers, with nothing.
            let asWritten = try await p.findAs(token, "Entry", where: ["user": user, "date": .date()], ["order": "-created_at"])
            #expect(asWritten.status == 200 && asWritten.results.isEmpty)
            // Trends screen: moods, newest first (selectKeys("mood")).
            let moods = try await p.findAs(token, "Entry", where: mine, ["keys": "mood", "order": "-created_at"])
            #expect(moods.results.compactMap { $0["mood"]?.integerValue } == [3, 8, 6])
            #expect(moods.results.allSatisfy { $0["thought_today"] == nil && $0["created_at"] == nil })
            // Calendar screen: moods and dates.
            let calendar = try await p.findAs(token, "Entry", where: mine, ["keys": "mood,created_at", "order": "-created_at"])
            #expect(calendar.results.first?["created_at"] == .date(iso: "2024-03-03T08:15:00.000Z"))
            // Thought and gratitude diaries: as written (`diary`, `gratitude` are not fields) and with the real names.
            let diaryAsWritten = try await p.findAs(token, "Entry", where: mine, ["keys": "diary,created_at", "order": "-created_at"])
            #expect(diaryAsWritten.status == 200 && diaryAsWritten.results.count == 3)
            let thoughts = try await p.findAs(token, "Entry", where: mine, ["keys": "thought_today,created_at", "order": "-created_at"])
            #expect(thoughts.results.compactMap { $0["thought_today"]?.stringValue } == ["thought 3", "thought 8", "thought 6"])
            let gratitude = try await p.findAs(token, "Entry", where: mine, ["keys": "gratitude_today,created_at", "order": "-created_at"])
            #expect(gratitude.results.first?["gratitude_today"] == "grateful 3")
            // Photo diary: entries with a picture; the File comes back with its URL.
            let photos = try await p.findAs(token, "Entry", where: ["user": user, "picture_today": ["$exists": true]], ["keys": "picture_today"])
            #expect(photos.results.count == 1)
            #expect(photos.results.first?["picture_today"]?["url"]?.stringValue?.contains("/files/") == true)

            // Question diary: question_id + answer_index, then the Question lookup.
            let checkins = try await p.findAs(
                token, "Entry", where: ["user": user, "question_id": ["$exists": true]],
                ["keys": "question_id,answer_index,created_at", "order": "-created_at"])
            #expect(checkins.results.count == 2)
            let firstQuestion = try #require(checkins.results.first?["question_id"]?["objectId"]?.stringValue)
            #expect(firstQuestion == q2)
            let lookup = try await p.findAs(token, "Question", where: ["objectId": .string(firstQuestion)])
            #expect(lookup.results.first?["answer2"] == "A bit")
            // The same in one request: include the pointer.
            let included = try await p.findAs(
                token, "Entry", where: ["user": user, "question_id": ["$exists": true]],
                ["keys": "question_id,answer_index,created_at", "include": "question_id", "order": "-created_at"])
            #expect(included.results.first?["question_id"]?["question"] == "Did you go outside?")
            #expect(included.results.first?["answer_index"] == 1)
            // $inQuery: entries answering a question about sleep.
            let sleep = try await p.idsAs(
                token, "Entry", where: ["question_id": ["$inQuery": ["className": "Question", "where": ["question": ["$regex": "sleep"]]]]])
            #expect(sleep == [ids[0]])

            // Privacy: another user sees none of these entries, even with a where on them or by id.
            let theirs = try await p.idsAs(other.token, "Entry", where: mine)
            #expect(theirs.isEmpty)
            let byId = try await p.asUser(other.token, .get, "/classes/Entry/\(ids[0])")
            #expect(byId.status == 404)
            let edit = try await p.asUser(other.token, .put, "/classes/Entry/\(ids[0])", ["mood": 1])
            #expect(edit.status == 404)
            let anonymous = try await p.findAs(nil, "Entry")
            #expect(anonymous.results.isEmpty)
            // Questions are read-only for clients.
            let writeQuestion = try await p.asUser(
                token, .post, "/classes/Question", ["question": "x", "answer1": "a", "answer2": "b", "answer3": "c"])
            #expect(writeQuestion.code == 119)
            // The author edits and deletes their own entry; log out ends the session.
            let own = try await p.asUser(token, .put, "/classes/Entry/\(ids[2])", ["mood": 4])
            #expect(own.status == 200)
            let gone = try await p.asUser(token, .delete, "/classes/Entry/\(ids[2])")
            #expect(gone.status == 200)
            let logout = try await p.asUser(token, .post, "/logout")
            #expect(logout.status == 200)
            let after = try await p.asUser(token, .get, "/users/me")
            #expect(after.code == 209)
        }
    }
}
