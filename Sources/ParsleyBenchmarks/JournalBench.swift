import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ParsleyCore
import ParsleyPostgres

/// `--journal`: the journal app's traffic ("How are you?", Schemas/journal.json) on the `parsley` executable started
/// as the README starts it (default settings, access log on, into a file), on SQLite and, with `--database-uri`, on
/// PostgreSQL. 1,000 users sign up (bcrypt, sessions), each owns 20 entries with the ACL and pointer the app sets;
/// then wrk plays signed-in users, each request with a random user's session token:
/// 60% "my entries, newest first, with selectKeys" (find on user + order -created_at + keys + limit 20),
/// 20% get one of my entries, 10% create an entry with a picture (a File uploaded before), 10% update my entry.
/// Reports req/s, p50/p99 and the server's peak resident memory; baseline in the same run: the bare Hummingbird +
/// sqlite-nio server's get by id (`BareServer`), the ceiling of any one request on this machine.
enum JournalBench {
    static let users = 1_000
    static let entriesPerUser = 20

    struct User { let id: String; let token: String; var entries: [String] }

    static func run(work: URL, wrk: Wrk, arguments: BenchArguments, logger: Logger) async throws {
        let seconds = max(arguments.seconds, 10)
        print(
            "Parsley journal workload: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(users) users, wrk -t2 -c64 -d\(seconds)s, the "
                + "parsley executable with default settings (access log on)"
        )
        let baseline = try await bareBaseline(work: work, wrk: wrk, seconds: seconds, port: arguments.port + 5, logger: logger)
        var rows: [(String, Measure, Int, String)] = []
        // `--hold` holds the PostgreSQL server when a database URI is given, else the SQLite one.
        let holdPostgres = arguments.hold && arguments.databaseURI != nil
        if !holdPostgres {
            rows.append(
                try await measure(
                    backend: "SQLite", databaseURI: nil, work: work, wrk: wrk, seconds: seconds, port: arguments.port, hold: arguments.hold)
            )
        }
        if let uri = arguments.databaseURI {
            rows.append(
                try await PostgresBench.withFreshDatabase(uri: uri, prefix: "parsley_journal", logger: logger) { _, url in
                    try await measure(
                        backend: "PostgreSQL", databaseURI: url, work: work, wrk: wrk, seconds: seconds, port: arguments.port + 1,
                        hold: holdPostgres)
                })
        }
        print("")
        print("| backend | req/s | p50 ms | p99 ms | server peak RSS | errors | baseline: bare get by id req/s | ratio |")
        print("|---|---:|---:|---:|---:|---|---:|---:|")
        for (name, m, peak, errors) in rows {
            print(
                "| \(name) | \(fmt(m.requestsPerSecond)) | \(ms(m.p50)) | \(ms(m.p99)) | \(peak / 1024) MiB | \(errors.isEmpty ? "none" : errors) "
                    + "| \(fmt(baseline.requestsPerSecond)) | \(String(format: "%.2f", m.requestsPerSecond / baseline.requestsPerSecond)) |"
            )
        }
    }

    static func bareBaseline(work: URL, wrk: Wrk, seconds: Int, port: Int, logger: Logger) async throws -> Measure {
        let ids = (0..<20_000).map { "bare\($0)" }
        return try await withBackground({ try await BareServer.run(directory: work, port: port, ids: ids, logger: logger) }) {
            try await BareServer.waitUntilListening(port: port)
            return try wrk.run(
                name: "baseline: bare get by id", url: "http://127.0.0.1:\(port)", seconds: seconds,
                script: WrkScript.randomId(method: "GET", prefix: "/parse/classes/Item/", ids: Array(ids.prefix(2_000)), headers: [:], body: nil),
                directory: work)
        }
    }

    static func measure(backend: String, databaseURI: String?, work: URL, wrk: Wrk, seconds: Int, port: Int, hold: Bool = false) async throws -> (
        String, Measure, Int, String
    ) {
        let data = work.appendingPathComponent("journal-\(port)")
        var environment: [String: String] = [:]
        if let databaseURI { environment["PARSE_SERVER_DATABASE_URI"] = databaseURI }
        let server = try ServerProcess(
            work: data, port: port, environment: environment, standardOutput: work.appendingPathComponent("journal-\(port).log"))
        defer { server.stop() }
        try await server.waitUntilHealthy()
        let started = ContinuousClock.now
        try await applySchema(server)
        let questions = try await (0..<20).asyncMap { i in
            try await server.call(
                "POST", "/classes/Question", ["question": .string("Question \(i)?"), "answer1": "yes", "answer2": "no", "answer3": "maybe"]
            ).0["objectId"]?.stringValue ?? ""
        }
        let pictures = try await (0..<20).asyncMap { i in
            try await upload(server, name: "picture\(i).jpg", bytes: 20_000)
        }
        var people = try await signUp(server)
        try await addEntries(server, &people, questions: questions, pictures: pictures)
        print(
            "  \(backend): \(users) users signed up, \(users * entriesPerUser) entries in "
                + "\(String(format: "%.1f", (ContinuousClock.now - started) / .seconds(1))) s"
        )
        if hold {
            // `--hold`: keep serving the populated server for a profiler or a hand-run wrk.
            let file = work.deletingLastPathComponent().appendingPathComponent("journal-\(port).lua")
            try script(people, pictures: pictures).write(to: file, atomically: true, encoding: .utf8)
            print("  serving http://127.0.0.1:\(port) (pid \(server.process.processIdentifier)); wrk script \(file.path)")
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
        _ = server.peakKilobytes(reset: true)
        let measure = try wrk.run(
            name: "journal, \(backend)", url: "http://127.0.0.1:\(port)", seconds: seconds, script: script(people, pictures: pictures),
            directory: work)
        return (backend, measure, server.peakKilobytes(reset: false), measure.errors)
    }

    /// Schemas/journal.json's classes, through `/schemas` (fields, indexes, class-level permissions).
    static func applySchema(_ server: ServerProcess) async throws {
        let file = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Schemas/journal.json")
        guard let text = try? String(contentsOf: file, encoding: .utf8), let (schema, orders) = try? JSONParser.parseKeepingKeyOrder(Array(text.utf8))
        else {
            throw BenchFailure("run from the repository (Schemas/journal.json is read)")
        }
        for cls in schema["classes"]?.arrayValue ?? [] {
            guard let name = cls["className"]?.stringValue else { continue }
            // Sent with its keys in the file's order: the index is (user, created_at DESC).
            _ = try await server.call("POST", "/schemas/\(name)", cls, keyOrders: orders)
        }
    }

    static func upload(_ server: ServerProcess, name: String, bytes: Int) async throws -> String {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/parse/files/\(name)")
        request.method = .POST
        request.headers.add(name: "X-Parse-Application-Id", value: "bench-app")
        request.headers.add(name: "X-Parse-Master-Key", value: ServerProcess.masterKey)
        request.headers.add(name: "Content-Type", value: "image/jpeg")
        request.body = .bytes(ByteBuffer(bytes: (0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        let json = try body.withUnsafeReadableBytes { try JSONParser.parse($0) }
        guard let stored = json["name"]?.stringValue else { throw BenchFailure("upload: \(JSONWriter.string(json))") }
        return stored
    }

    /// Sign-up of every user (16 at a time): their ids and session tokens.
    static func signUp(_ server: ServerProcess) async throws -> [User] {
        try await withThrowingTaskGroup(of: User.self) { group in
            var people: [User] = []
            for i in 0..<users {
                if i >= 16, let done = try await group.next() { people.append(done) }
                group.addTask {
                    let (json, _) = try await server.call(
                        "POST", "/users", ["username": .string("writer\(i)"), "password": "journal-password-1"], master: false)
                    guard let id = json["objectId"]?.stringValue, let token = json["sessionToken"]?.stringValue else {
                        throw BenchFailure("sign-up: \(JSONWriter.string(json))")
                    }
                    return User(id: id, token: token, entries: [])
                }
            }
            for try await done in group { people.append(done) }
            return people
        }
    }

    /// An entry as the app saves it: the user's pointer, the ACL {user: read+write}, a mood, the day's question and
    /// answer, thoughts, gratitude and sometimes a picture.
    static func entry(user: String, day: Int, questions: [String], pictures: [String], picture: Bool) -> JSONValue {
        var body: [String: JSONValue] = [
            "user": ["__type": "Pointer", "className": "_User", "objectId": .string(user)],
            "created_at": ["__type": "Date", "iso": .string(ParseDate(milliseconds: (1_767_225_600 + Int64(day) * 86_400) * 1000).iso)],
            "mood": .int(Int64(1 + day % 10)),
            "question_id": ["__type": "Pointer", "className": "Question", "objectId": .string(questions[day % questions.count])],
            "answer_index": .int(Int64(day % 3)),
            "thought_today": .string("Day \(day): a walk, some reading, an early night. " + String(repeating: "Calm. ", count: 10)),
            "gratitude_today": "friends, sunshine",
            "ACL": .object([user: ["read": true, "write": true]]),
        ]
        if picture { body["picture_today"] = ["__type": "File", "name": .string(pictures[day % pictures.count])] }
        return .object(body)
    }

    /// `entriesPerUser` entries for each user, created by the user (batches of 20 with their session token).
    static func addEntries(_ server: ServerProcess, _ people: inout [User], questions: [String], pictures: [String]) async throws {
        let made = try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            var made: [Int: [String]] = [:]
            for (n, person) in people.enumerated() {
                if n >= 8, let (i, ids) = try await group.next() { made[i] = ids }
                group.addTask {
                    let requests: [JSONValue] = (0..<entriesPerUser).map { day in
                        [
                            "method": "POST", "path": "/parse/classes/Entry",
                            "body": entry(user: person.id, day: day, questions: questions, pictures: pictures, picture: day % 4 == 0),
                        ]
                    }
                    let (json, _) = try await server.call("POST", "/batch", ["requests": .array(requests)], token: person.token)
                    let ids = (json.arrayValue ?? []).compactMap { $0["success"]?["objectId"]?.stringValue }
                    guard ids.count == entriesPerUser else { throw BenchFailure("entries: \(JSONWriter.string(json).prefix(300))") }
                    return (n, ids)
                }
            }
            for try await (i, ids) in group { made[i] = ids }
            return made
        }
        for i in people.indices { people[i].entries = made[i] ?? [] }
    }

    /// The wrk script: each request as a random user, in the mix above.
    static func script(_ people: [User], pictures: [String]) -> String {
        let table = people.map { p in
            "{id=\"\(p.id)\",token=\"\(p.token)\",entries={\(p.entries.map { "\"\($0)\"" }.joined(separator: ","))}}"
        }.joined(separator: ",\n")
        let keys = "mood,created_at,thought_today,picture_today"
        return """
            local users = {\(table)}
            local pictures = {\(pictures.map { "\"\($0)\"" }.joined(separator: ","))}
            local counter = 0
            local function escape(s)
              return (s:gsub("[^%w]", function(c) return string.format("%%%02X", string.byte(c)) end))
            end
            -- Each user's headers, find and gets are the same in every request: formed once per thread, not per request
            -- (wrk shares the cores with the server; the requests sent are the same bytes). In `init`, which wrk calls
            -- once it knows the Host header.
            init = function(args)
              for _, u in ipairs(users) do
                u.headers = {["X-Parse-Application-Id"] = "bench-app", ["X-Parse-Session-Token"] = u.token, ["Content-Type"] = "application/json"}
                u.pointer = '{"__type":"Pointer","className":"_User","objectId":"' .. u.id .. '"}'
                local where = escape('{"user":' .. u.pointer .. '}')
                u.find = wrk.format("GET", "/parse/classes/Entry?where=" .. where .. "&order=-created_at&keys=\(keys)&limit=20", u.headers, nil)
                u.gets = {}
                for i, entry in ipairs(u.entries) do u.gets[i] = wrk.format("GET", "/parse/classes/Entry/" .. entry, u.headers, nil) end
              end
            end
            request = function()
              local u = users[math.random(#users)]
              local r = math.random(100)
              counter = counter + 1
              if r <= 60 then
                return u.find
              elseif r <= 80 then
                return u.gets[math.random(#u.gets)]
              elseif r <= 90 then
                local body = '{"user":' .. u.pointer .. ',"created_at":{"__type":"Date","iso":"2026-03-01T08:00:00.000Z"},"mood":' .. math.random(10) ..
                  ',"thought_today":"Wrote this from the benchmark, entry ' .. counter .. '","gratitude_today":"coffee",' ..
                  '"picture_today":{"__type":"File","name":"' .. pictures[math.random(#pictures)] .. '"},' ..
                  '"ACL":{"' .. u.id .. '":{"read":true,"write":true}}}'
                return wrk.format("POST", "/parse/classes/Entry", u.headers, body)
              else
                local body = '{"mood":' .. math.random(10) .. ',"thought_today":"Changed my mind, ' .. counter .. '"}'
                return wrk.format("PUT", "/parse/classes/Entry/" .. u.entries[math.random(#u.entries)], u.headers, body)
              end
            end
            """
    }
}
