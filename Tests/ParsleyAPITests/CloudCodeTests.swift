import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Synchronization
import Testing

/// Swift cloud code through the real server: functions with Parse's answers and validators, before-triggers that
/// edit or refuse writes on every path (REST, transactional batch, cloud code's own saves), after-triggers from
/// committed writes only, and the server-side API with the caller's rights.
@Suite("Cloud code")
struct CloudCodeTests {
    struct Oops: Error, CustomStringConvertible {
        var description: String { "something broke" }
    }

    /// The app's cloud code the tests run against.
    static func cloud(afterLog: AfterLog = AfterLog()) -> CloudCode {
        var cloud = CloudCode()
        cloud.define("hello") { req in "Hello \(req.param("name", as: String.self) ?? "world")" }
        cloud.define("echo") { req in JSONValue.object(req.params) }
        cloud.define("whoami") { req in
            ["master": .bool(req.master), "user": req.user?["username"] ?? .null, "context": .object(req.context)] as JSONValue
        }
        cloud.define("parseError") { _ -> String in throw ParseError(.duplicateValue, "already taken") }
        cloud.define("otherError") { _ -> String in throw Oops() }
        cloud.define("typed") { _ in
            [
                "date": ParseDate(milliseconds: 0).cloudJSON, "list": [1, 2, 3].cloudJSON,
                "pointer": Pointer(className: "Post", objectId: "p1").cloudJSON,
            ]
                as JSONValue
        }
        cloud.define("signedIn", validator: CloudValidator(requireUser: true)) { _ in "ok" }
        cloud.define(
            "limited",
            validator: CloudValidator(rateLimit: .init(requestTimeWindow: .seconds(60), requestCount: 2, errorResponseMessage: "Slow down"))
        ) { _ in
            "ok"
        }
        cloud.define("masterOnly", validator: CloudValidator(requireMaster: true)) { _ in "ok" }
        cloud.define("admins", validator: CloudValidator(requireAnyUserRoles: ["Admin"])) { _ in "ok" }
        cloud.define(
            "fields",
            validator: CloudValidator(fields: [
                "name": .init(type: .string, required: true),
                "size": .init(options: ["S", "M", "L"]),
                "count": .init(type: .number, default: 1),
            ])
        ) { req in JSONValue.object(req.params) }
        // What the caller may read, through the same services as REST.
        cloud.define("countNotes") { req in try await req.parse.count("Note") }
        cloud.define("countNotesAsMaster") { req in try await req.parse.asMaster.count("Note") }

        cloud.job("tally") { req in
            try await req.message("counting")
            let n = try await req.parse.count("Note")
            return .string("counted \(n) for \(req.params["label"]?.stringValue ?? "-")")
        }
        cloud.job("broken") { _ in throw ParseError(.scriptFailed, "job broke") }

        cloud.beforeSave("Post") { req in
            guard let title = req.object["title", as: String.self], !title.isEmpty else {
                throw ParseError(.scriptFailed, "a post needs a title")
            }
            req.object["slug"] = .string(title.lowercased().replacingOccurrences(of: " ", with: "-"))
            if req.object["draft"] != nil { req.object.unset("draft") }
            if let previous = req.original?["title", as: String.self], previous != title { req.object["previousTitle"] = .string(previous) }
            if let tag = req.context["tag"] { req.object["tag"] = tag }
        }
        cloud.beforeDelete("Post") { req in
            if req.object["locked", as: Bool.self] == true { throw ParseError(.scriptFailed, "this post is locked") }
        }
        cloud.afterSave("Post") { req in
            afterLog.add(
                "save \(req.object["title", as: String.self] ?? "?") new=\(req.original == nil) tag=\(req.context["tag"]?.stringValue ?? "-")")
            if req.object["title", as: String.self] == "explode" { throw Oops() }
            // Keeps a counter, with the master's rights (the counter's ACL lets nobody else write).
            let counters = try await req.parse.asMaster.find("Counter", ["where": ["name": "posts"]])
            if let id = counters.first?["objectId"]?.stringValue {
                _ = try await req.parse.asMaster.update("Counter", id, ["n": ["__op": "Increment", "amount": 1]])
            }
        }
        cloud.afterDelete("Post") { req in afterLog.add("delete \(req.object["title", as: String.self] ?? "?")") }
        return cloud
    }

    /// What after-triggers did, in order.
    final class AfterLog: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }

        /// Waits (up to 10 s) until `count` lines are in.
        func wait(for count: Int) async throws -> [String] {
            for _ in 0..<200 {
                if all.count >= count { return all }
                try await Task.sleep(for: .milliseconds(50))
            }
            return all
        }
    }

    @Test("functions: result, params from body and query, Parse errors kept, others 141, unknown 141", arguments: Backend.all)
    func functions(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            let hello = try await p.request(.post, "/functions/hello", ["name": "Ann"], master: false)
            #expect(hello.status == 200)
            #expect(hello.json == ["result": "Hello Ann"])
            #expect(try await p.request(.post, "/functions/hello", [:], master: false).json == ["result": "Hello world"])
            let echoed = try await p.request(.post, "/functions/echo?b=query", ["a": 1, "b": "body"], master: false)
            #expect(echoed.json == ["result": ["a": 1, "b": "query"]])
            let viaGet = try await p.request(.get, "/functions/hello?name=Bo", master: false)
            #expect(viaGet.json == ["result": "Hello Bo"])
            let typed = try await p.request(.post, "/functions/typed", [:], master: false)
            #expect(typed["result"]?["date"] == ["__type": "Date", "iso": "1970-01-01T00:00:00.000Z"])
            #expect(typed["result"]?["list"] == [1, 2, 3])
            #expect(typed["result"]?["pointer"] == ["__type": "Pointer", "className": "Post", "objectId": "p1"])

            let parseError = try await p.request(.post, "/functions/parseError", [:], master: false)
            #expect(parseError.status == 400)
            #expect(parseError.json == ["code": 137, "error": "already taken"])
            let other = try await p.request(.post, "/functions/otherError", [:], master: false)
            #expect(other.status == 400)
            #expect(other.json == ["code": 141, "error": "something broke"])
            let unknown = try await p.request(.post, "/functions/nope", [:], master: false)
            #expect(unknown.status == 400)
            #expect(unknown.json == ["code": 141, "error": "Invalid function: \"nope\""])
        }
    }

    @Test("function requests carry the user, the master flag and the cloud context (header or _context)", arguments: Backend.all)
    func callerAndContext(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            let ann = try await p.signUp("ann")
            let asAnn = try await p.request(
                .post, "/functions/whoami", [:], master: false, extra: ["X-Parse-Session-Token": ann.token, "X-Parse-Cloud-Context": #"{"a":1}"#])
            #expect(asAnn.json == ["result": ["master": false, "user": "ann", "context": ["a": 1]]])
            let asMaster = try await p.request(.post, "/functions/whoami", ["_context": ["b": true]])
            #expect(asMaster.json == ["result": ["master": true, "user": nil, "context": ["b": true]]])
        }
    }

    @Test(
        "validators: requireUser, requireMaster, roles and field rules answer 142 with Parse Server's messages; the master key skips them",
        arguments: Backend.all)
    func validators(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            let anonymous = try await p.request(.post, "/functions/signedIn", [:], master: false)
            #expect(anonymous.status == 400)
            #expect(anonymous.json == ["code": 142, "error": "Validation failed. Please login to continue."])
            let ann = try await p.signUp("ann")
            #expect(try await p.asUser(ann.token, .post, "/functions/signedIn", [:]).json == ["result": "ok"])
            let notMaster = try await p.asUser(ann.token, .post, "/functions/masterOnly", [:])
            #expect(notMaster.json == ["code": 142, "error": "Validation failed. Master key is required to complete this request."])
            #expect(try await p.request(.post, "/functions/masterOnly", [:]).json == ["result": "ok"])

            let noRole = try await p.asUser(ann.token, .post, "/functions/admins", [:])
            #expect(noRole.json == ["code": 142, "error": "Validation failed. User does not match the required roles."])
            let role = try await p.request(
                .post, "/roles",
                [
                    "name": "Admin", "ACL": ["*": ["read": true]],
                    "users": ["__op": "AddRelation", "objects": [["__type": "Pointer", "className": "_User", "objectId": .string(ann.id)]]],
                ])
            #expect(role.status == 201, "\(role.json)")
            #expect(try await p.asUser(ann.token, .post, "/functions/admins", [:]).json == ["result": "ok"])

            let missing = try await p.request(.post, "/functions/fields", ["size": "M"], master: false)
            #expect(missing.json == ["code": 142, "error": "Validation failed. Please specify data for name."])
            let wrongType = try await p.request(.post, "/functions/fields", ["name": 5], master: false)
            #expect(wrongType.json == ["code": 142, "error": "Validation failed. Invalid type for name. Expected: string"])
            let badOption = try await p.request(.post, "/functions/fields", ["name": "x", "size": "XL"], master: false)
            #expect(badOption.json == ["code": 142, "error": "Validation failed. Invalid option for size. Expected: S, M, L"])
            let filled = try await p.request(.post, "/functions/fields", ["name": "x"], master: false)
            #expect(filled.json == ["result": ["name": "x", "count": 1]])
            // The master key skips validators (Parse Server's default).
            #expect(try await p.request(.post, "/functions/fields", [:]).json == ["result": [:]])
        }
    }

    @Test(
        "a function's validator rateLimit: past requestCount calls in the window 429 with its message; the master key is exempt",
        arguments: Backend.all)
    func functionRateLimit(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            for _ in 0..<2 { #expect(try await p.request(.post, "/functions/limited", [:], master: false).json == ["result": "ok"]) }
            let third = try await p.request(.post, "/functions/limited", [:], master: false)
            #expect(third.status == 429)
            #expect(third.json == ["code": 100, "error": "Slow down"])
            #expect(try await p.request(.post, "/functions/limited", [:]).status == 200)
            #expect(try await p.request(.post, "/functions/hello", [:], master: false).status == 200, "other functions are not limited")
        }
    }

    @Test("beforeSave edits what is stored and echoes it; a refusal stores nothing; updates see the original", arguments: Backend.all)
    func beforeSave(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            // The first write creates the class (the master key may; clients may not by default).
            let created = try await p.request(.post, "/classes/Post", ["title": "Hello World", "draft": true])
            #expect(created.status == 201, "\(created.json)")
            #expect(created["slug"] == "hello-world", "fields a beforeSave changed are echoed: \(created.json)")
            let id = try #require(created["objectId"]?.stringValue)
            let stored = try await p.get("Post", id)
            #expect(stored["slug"] == "hello-world")
            #expect(stored["draft"] == nil, "the trigger removed draft")

            let refused = try await p.request(.post, "/classes/Post", ["title": ""], master: false)
            #expect(refused.status == 400)
            #expect(refused.json == ["code": 141, "error": "a post needs a title"])
            #expect(try await p.find("Post").results.count == 1)

            let updated = try await p.update("Post", id, ["title": "Second Take"], master: false)
            #expect(updated.status == 200, "\(updated.json)")
            #expect(updated["slug"] == "second-take")
            #expect(updated["previousTitle"] == "Hello World")
            let refusedUpdate = try await p.update("Post", id, ["title": ""], master: false)
            #expect(refusedUpdate.json == ["code": 141, "error": "a post needs a title"])
            #expect(try await p.get("Post", id)["title"] == "Second Take")
            // The context travels from the request to the trigger.
            let tagged = try await p.request(
                .post, "/classes/Post", ["title": "Tagged"], master: false, extra: ["X-Parse-Cloud-Context": #"{"tag":"t1"}"#])
            #expect(tagged["tag"] == "t1")
        }
    }

    @Test(
        "a beforeSave refusal inside a transactional batch rolls the whole batch back; a plain batch answers per request",
        arguments: Backend.all)
    func beforeSaveInBatch(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            let failing = try await p.request(
                .post, "/batch",
                [
                    "transaction": true,
                    "requests": [
                        ["method": "POST", "path": "/parse/classes/Post", "body": ["title": "One"]],
                        ["method": "POST", "path": "/parse/classes/Post", "body": ["title": ""]],
                    ],
                ])
            #expect(failing.status == 400)
            #expect(failing.code == 141)
            #expect(try await p.find("Post").results.isEmpty, "nothing of the failed transaction is stored")
            let plain = try await p.request(
                .post, "/batch",
                [
                    "requests": [
                        ["method": "POST", "path": "/parse/classes/Post", "body": ["title": "One"]],
                        ["method": "POST", "path": "/parse/classes/Post", "body": ["title": ""]],
                    ]
                ])
            let answers = plain.json.arrayValue ?? []
            #expect(answers.count == 2)
            #expect(answers.first?["success"]?["slug"] == "one")
            #expect(answers.last?["error"] == ["code": 141, "error": "a post needs a title"])
            #expect(try await p.find("Post").results.count == 1)
        }
    }

    @Test(
        "the request's cloud context reaches before- and after-triggers of batch sub-requests, transactional or not, as of a direct request",
        arguments: Backend.all)
    func contextInBatch(_ backend: Backend) async throws {
        let afterLog = AfterLog()
        try await TestServer.with(backend: backend, cloud: Self.cloud(afterLog: afterLog)) { p in
            for (n, transaction) in [false, true].enumerated() {
                let tag = "batch-\(transaction)"
                let batch = try await p.request(
                    .post, "/batch",
                    [
                        "transaction": .bool(transaction),
                        "requests": [["method": "POST", "path": "/parse/classes/Post", "body": ["title": .string("In \(tag)")]]],
                    ],
                    extra: ["X-Parse-Cloud-Context": #"{"tag":"\#(tag)"}"#])
                #expect(batch.status == 200, "\(batch.json)")
                #expect(batch.json.arrayValue?.first?["success"]?["tag"] == .string(tag), "\(batch.json)")
                let lines = try await afterLog.wait(for: n + 1)
                #expect(lines.contains("save In \(tag) new=true tag=\(tag)"), "\(lines)")
            }
        }
    }

    @Test(
        "beforeDelete may refuse; after-triggers run once per committed write with the saved object, their failures never reach the client",
        arguments: Backend.all)
    func deletesAndAfterTriggers(_ backend: Backend) async throws {
        let log = AfterLog()
        try await TestServer.withAPI(backend: backend, cloud: Self.cloud(afterLog: log)) { api, _, p in
            let counter = try await p.createId("Counter", ["name": "posts", "n": 0, "ACL": [:]])
            let locked = try await p.createId("Post", ["title": "Locked", "locked": true])
            let refused = try await p.delete("Post", locked)
            #expect(refused.json == ["code": 141, "error": "this post is locked"])
            #expect(try await p.get("Post", locked).status == 200)
            let open = try await p.createId("Post", ["title": "Open"])
            #expect(try await p.delete("Post", open).status == 200)
            // A refused write fires nothing.
            _ = try await p.request(.post, "/classes/Post", ["title": ""])
            let exploded = try await p.request(.post, "/classes/Post", ["title": "explode"], extra: ["X-Parse-Cloud-Context": #"{"tag":"x"}"#])
            #expect(exploded.status == 201, "an afterSave failure does not change the answer")
            let lines = try await log.wait(for: 4)
            // After-triggers of different objects run side by side; one object's run in commit order.
            #expect(lines.sorted() == ["delete Open", "save Locked new=true tag=-", "save Open new=true tag=-", "save explode new=true tag=x"])
            #expect((lines.firstIndex(of: "save Open new=true tag=-") ?? 9) < (lines.firstIndex(of: "delete Open") ?? -1))
            // The afterSave counted the three saves whose trigger got that far (the exploding one threw first).
            for _ in 0..<100 where try await p.get("Counter", counter)["n"] != 2 { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await p.get("Counter", counter)["n"] == 2)
            #expect(api.services.cloud.afterTriggerFailures == 1)
        }
    }

    @Test("cloud code's queries run with the caller's rights (ACLs apply), or the master's on request", arguments: Backend.all)
    func serverSideAPI(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            let ann = try await p.signUp("ann")
            let bob = try await p.signUp("bob")
            _ = try await p.createId("Note", ["text": "ann's", "ACL": .object([ann.id: ["read": true, "write": true]])])
            _ = try await p.createId("Note", ["text": "public", "ACL": ["*": ["read": true]]])
            #expect(try await p.asUser(ann.token, .post, "/functions/countNotes", [:]).json == ["result": 2])
            #expect(try await p.asUser(bob.token, .post, "/functions/countNotes", [:]).json == ["result": 1])
            #expect(try await p.request(.post, "/functions/countNotes", [:], master: false).json == ["result": 1])
            #expect(try await p.asUser(bob.token, .post, "/functions/countNotesAsMaster", [:]).json == ["result": 2])
        }
    }

    /// The run's `_JobStatus` once it has finished (waits up to 10 s).
    static func finishedStatus(_ p: ParseClient, _ id: String) async throws -> Reply {
        var status = try await p.get("_JobStatus", id)
        for _ in 0..<200 where status["status"] == "running" {
            try await Task.sleep(for: .milliseconds(50))
            status = try await p.get("_JobStatus", id)
        }
        return status
    }

    @Test(
        "jobs: POST /jobs/:name answers {} with X-Parse-Job-Status-Id and runs in the background; _JobStatus records the run",
        arguments: Backend.all)
    func jobs(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.cloud()) { p in
            _ = try await p.createId("Note", ["text": "one"])
            let started = try await p.request(.post, "/jobs/tally", ["label": "today"])
            #expect(started.status == 200)
            #expect(started.json == [:])
            let id = try #require(started.headers[HTTPField.Name("X-Parse-Job-Status-Id")!])
            let status = try await Self.finishedStatus(p, id)
            #expect(status["status"] == "succeeded", "\(status.json)")
            #expect(status["jobName"] == "tally")
            #expect(status["source"] == "api")
            #expect(status["params"] == ["label": "today"])
            #expect(status["message"] == "counted 1 for today")
            #expect(status["finishedAt"]?["__type"] == "Date")
            #expect(status["startedAt"]?["__type"] == "Date")

            // Parse Dashboard's form: POST /jobs with jobName and input.
            let viaDashboard = try await p.request(.post, "/jobs", ["jobName": "broken", "input": [:]])
            let failedId = try #require(viaDashboard.headers[HTTPField.Name("X-Parse-Job-Status-Id")!])
            let failed = try await Self.finishedStatus(p, failedId)
            #expect(failed["status"] == "failed")
            #expect(failed["message"] == "job broke")

            let unknown = try await p.request(.post, "/jobs/nope", [:])
            #expect(unknown.json == ["code": 141, "error": "Invalid job."])
            #expect(try await p.request(.post, "/jobs/tally", [:], master: false).status == 403)
            #expect(try await p.get("_JobStatus", id, master: false).code == 119, "_JobStatus is the master's")
            let data = try await p.request(.get, "/cloud_code/jobs/data")
            #expect(data.json == ["jobs": ["broken", "tally"], "in_use": []])
        }
    }

    /// Find and log-in triggers.
    static func findAndLoginCloud(log: AfterLog) -> CloudCode {
        var cloud = CloudCode()
        cloud.beforeFind("Secret") { req in
            // Clients never see hidden objects; everyone gets at most two.
            if !req.master { req.query.whereKey("hidden", ["$ne": true]) }
            if (req.query.limit ?? 100) > 2 { req.query.limit = 2 }
        }
        cloud.beforeFind("Forbidden") { _ in throw ParseError(.operationForbidden, "no finding") }
        cloud.afterFind("Secret") { req in
            req.objects.map { o in
                var o = o; o["seen"] = true; return o
            }
        }
        cloud.beforeLogin { req in
            if req.object["username", as: String.self] == "banned" { throw ParseError(.scriptFailed, "banned") }
        }
        cloud.beforePasswordResetRequest { req in
            if req.object["username", as: String.self] == "banned" { throw ParseError(.scriptFailed, "no reset for you") }
        }
        cloud.afterLogin { req in log.add("login \(req.object["username", as: String.self] ?? "?")") }
        cloud.afterLogout { req in log.add("logout \(req.user?["username"]?.stringValue ?? "?") \(req.object["sessionToken"] != nil)") }
        return cloud
    }

    @Test("beforeFind changes or refuses finds, gets and counts of clients; afterFind changes the results", arguments: Backend.all)
    func findTriggers(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, cloud: Self.findAndLoginCloud(log: AfterLog())) { p in
            var hiddenId = ""
            for i in 0..<5 {
                let id = try await p.createId("Secret", ["n": .int(Int64(i)), "hidden": .bool(i == 0), "ACL": ["*": ["read": true]]])
                if i == 0 { hiddenId = id }
            }
            let found = try await p.find("Secret", ["order": "n"], master: false)
            #expect(found.results.compactMap { $0["n"]?.integerValue } == [1, 2], "hidden excluded, at most two")
            #expect(found.results.allSatisfy { $0["seen"] == true }, "afterFind's change is answered")
            let asMaster = try await p.find("Secret", ["order": "n"])
            #expect(asMaster.results.compactMap { $0["n"]?.integerValue } == [0, 1])
            #expect(try await p.get("Secret", hiddenId, master: false).status == 404)
            #expect(try await p.get("Secret", hiddenId)["seen"] == true)
            let counted = try await p.find("Secret", ["count": "1", "limit": "0"], master: false)
            #expect(counted["count"] == 4)
            _ = try await p.createId("Forbidden", ["a": 1])
            let refused = try await p.find("Forbidden", master: false)
            #expect(refused.json == ["code": 119, "error": "no finding"])
        }
    }

    @Test(
        "beforeLogin may refuse a log-in (no session is made); afterLogin and afterLogout observe; beforePasswordResetRequest may refuse",
        arguments: Backend.all)
    func loginTriggers(_ backend: Backend) async throws {
        let log = AfterLog()
        try await TestServer.with(backend: backend, cloud: Self.findAndLoginCloud(log: log)) { p in
            _ = try await p.signUp("banned", extra: ["email": "banned@example.com"])
            _ = try await p.signUp("ann", extra: ["email": "ann@example.com"])
            let noReset = try await p.request(.post, "/requestPasswordReset", ["email": "banned@example.com"], master: false)
            #expect(noReset.json == ["code": 141, "error": "no reset for you"])
            #expect(try await p.request(.post, "/requestPasswordReset", ["email": "ann@example.com"], master: false).json == [:])
            let refused = try await p.request(.post, "/login", ["username": "banned", "password": "secret-pw"], master: false)
            #expect(refused.json == ["code": 141, "error": "banned"])
            let sessions = try await p.find(
                "_Session",
                where: [
                    "user": p.userPointer(
                        try #require(try await p.find("_User", where: ["username": "banned"]).results.first?["objectId"]?.stringValue))
                ])
            #expect(sessions.results.count == 1, "only the sign-up's session")
            let ann = try await p.request(.post, "/login", ["username": "ann", "password": "secret-pw"], master: false)
            let token = try #require(ann["sessionToken"]?.stringValue)
            #expect(try await p.asUser(token, .post, "/logout", [:]).status == 200)
            #expect(log.all == ["login ann", "logout ann true"])
        }
    }

    @Test(
        "file triggers: beforeSave may refuse an upload or set its metadata, afterSave sees the stored file, delete triggers run around DELETE",
        arguments: Backend.all)
    func fileTriggers(_ backend: Backend) async throws {
        let log = AfterLog()
        var cloud = CloudCode()
        cloud.beforeSaveFile { req in
            if req.file.name.hasSuffix("secret.txt") { throw ParseError(.scriptFailed, "no secrets") }
            req.file.metadata = ["checkedBy": .string(req.user?["username"]?.stringValue ?? "?")]
        }
        cloud.afterSaveFile { req in log.add("saved \(req.file.size ?? -1) \(req.file.metadata?["checkedBy"]?.stringValue ?? "-")") }
        cloud.beforeDeleteFile { req in
            if req.file.metadata?["checkedBy"] == "keep" { throw ParseError(.scriptFailed, "kept") }
        }
        cloud.afterDeleteFile { req in log.add("deleted \(req.file.contentType ?? "?")") }
        try await TestServer.with(backend: backend, cloud: cloud) { p in
            let ann = try await p.signUp("ann")
            let refused = try await p.asUserUpload(ann.token, "secret.txt", "psst")
            #expect(refused.json == ["code": 141, "error": "no secrets"])
            let file = try await p.uploadFile(ann.token, "notes.txt", "hello", contentType: "text/plain")
            let name = try #require(file["name"]?.stringValue)
            let metadata = try await p.request(.get, "/files/\(TestServer.appId)/metadata/\(name)", master: false)
            #expect(metadata["metadata"] == ["checkedBy": "ann"], "\(metadata.json)")
            #expect(try await p.request(.delete, "/files/\(name)").status == 200)
            #expect(log.all == ["saved 5 ann", "deleted text/plain"])
        }
    }
}

extension ParseClient {
    /// `POST /files/:name` as the user; the answer as it is.
    func asUserUpload(_ token: String, _ name: String, _ text: String) async throws -> Reply {
        var h = headers(master: false, extra: ["X-Parse-Session-Token": token])
        h[.contentType] = "text/plain"
        return try await raw(.post, mount + "/files/\(name)", body: text, headers: h)
    }
}
