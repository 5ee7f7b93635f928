import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ParsleyCore
import Testing

/// On the `parsley` executable (whose log handler feeds the ring): the dashboard's log table endpoint with its
/// column filters, slowest-first order, a request's lines by its id and the live tail; and `parsley export --class` /
/// `parsley import --class` on the same data folder.
@Suite("Dashboard logs and class transfer (process)", .serialized)
struct DashboardLogsProcessTests {
    static let key = "logs-table-master-key"

    static func get(_ p: ParseClient, _ path: String, cookie: String?, csrf: String?) async throws -> JSONValue {
        var h = HTTPFields()
        h[.cookie] = cookie
        h[DashboardTests.header("X-Parsley-Dashboard-CSRF")] = csrf
        let (status, _, body) = try await p.send("/dashboard/api" + path, .get, h, nil)
        guard status == 200 else { throw Failure("GET \(path): \(status) \(String(buffer: body))") }
        return try JSONParser.parse(String(buffer: body))
    }

    @Test("log table: filters by status, method, path, user and request id; slowest first; live tail after a sequence")
    func logTable() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ProcessTests.Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": Self.key])
        try await server.waitUntilHealthy()
        try await ProcessTests.client(server.port, Self.key) { p in
            let (reply, cookie, csrf) = try await DashboardTests.signIn(p, ["masterKey": .string(Self.key)])
            #expect(reply.status == 200)
            for i in 0..<3 { _ = try await p.createId("Logged", ["n": .int(Int64(i))]) }
            let traced = try await p.request(.get, "/classes/Logged", extra: ["X-Request-Id": "trace-me-123"])
            #expect(traced.status == 200)
            #expect(try await p.request(.get, "/classes/Logged/nope").status == 404)
            let (userId, token) = try await p.newUser("logger")
            #expect(try await p.request(.get, "/users/me", master: false, extra: ["X-Parse-Session-Token": token]).status == 200)

            let q = { (query: String) in try await Self.get(p, "/logs?" + query, cookie: cookie, csrf: csrf) }
            let mine = try await q("requestId=trace-me-123")
            let rows = mine["results"]?.arrayValue ?? []
            #expect(!rows.isEmpty && rows.allSatisfy { $0["requestId"] == "trace-me-123" })
            let access = try #require(rows.first { $0["method"] != nil })
            #expect(access["method"] == "GET" && access["path"] == "/parse/classes/Logged" && access["status"] == 200)
            #expect(access["durationMs"]?.numberValue != nil && access["time"]?.integerValue != nil)

            let refused = try await q("status=4xx")["results"]?.arrayValue ?? []
            #expect(refused.contains { $0["path"] == "/parse/classes/Logged/nope" })
            #expect(refused.allSatisfy { ($0["status"]?.integerValue ?? 0) / 100 == 4 })
            let posts = try await q("method=POST&path=Logged")["results"]?.arrayValue ?? []
            #expect(posts.count == 3 && posts.allSatisfy { $0["method"] == "POST" })
            let byUser = try await q("user=\(userId)")["results"]?.arrayValue ?? []
            #expect(byUser.count == 1 && byUser.first?["path"] == "/parse/users/me")

            let slow = try await q("sort=slow")["results"]?.arrayValue ?? []
            let durations = slow.compactMap { $0["durationMs"]?.numberValue }
            #expect(durations.count == slow.count && durations.count >= 6)
            #expect(durations == durations.sorted(by: >))
            let newestFirst = try await q("")["results"]?.arrayValue ?? []
            let sequences = newestFirst.compactMap { $0["sequence"]?.integerValue }
            #expect(sequences == sequences.sorted(by: >))

            let latest = try #require(try await q("")["latest"]?.integerValue)
            _ = try await p.request(.get, "/classes/Logged", extra: ["X-Request-Id": "after-the-mark"])
            let tail = try await q("after=\(latest)")["results"]?.arrayValue ?? []
            #expect(tail.contains { $0["requestId"] == "after-the-mark" })
            #expect(tail.allSatisfy { ($0["sequence"]?.integerValue ?? 0) > latest })
        }
        await server.stop()
    }

    @Test("parsley export --class (JSON lines, CSV, --where) and parsley import --class (refused rows listed, exit status 3)")
    func commandLine() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ProcessTests.Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": Self.key])
        try await server.waitUntilHealthy()
        try await ProcessTests.client(server.port, Self.key) { p in
            for i in 0..<4 { _ = try await p.createId("Song", ["title": .string("song \(i)"), "plays": .int(Int64(i * 10))]) }
        }
        await server.stop()
        let binary = ProcessTests.binary.path
        let env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        let lines = dir.appendingPathComponent("songs.jsonl").path
        let exported = try await ChildProcess.run(binary, ["export", "--class", "Song", "-o", lines, "--data-dir", dir.path], environment: env)
        #expect(exported.status == 0, "\(exported.output)")
        let text = try String(contentsOfFile: lines, encoding: .utf8)
        #expect(text.split(separator: "\n").count == 4)
        let csvFile = dir.appendingPathComponent("some.csv").path
        let csv = try await ChildProcess.run(
            binary, ["export", "--class", "Song", "--format", "csv", "--where", #"{"plays":{"$gte":20}}"#, "-o", csvFile, "--data-dir", dir.path],
            environment: env)
        #expect(csv.status == 0, "\(csv.output)")
        let csvText = try String(contentsOfFile: csvFile, encoding: .utf8)
        #expect(csvText.hasPrefix("objectId,createdAt,updatedAt,ACL,plays,title\n"))
        #expect(csvText.split(separator: "\n").count == 3)

        let input = dir.appendingPathComponent("more.jsonl").path
        let rows = [#"{"title":"new one","plays":5}"#, #"{"title":"bad","plays":"many"}"#]
        try (rows.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let imported = try await ChildProcess.run(binary, ["import", "--class", "Song", input, "--data-dir", dir.path], environment: env)
        #expect(imported.status == 3, "\(imported.output)")
        #expect(imported.output.contains("line 2: 111"))
        #expect(imported.output.contains("imported 1 objects into Song"))
        let csvImport = try await ChildProcess.run(binary, ["import", "--class", "Song", csvFile, "--data-dir", dir.path], environment: env)
        #expect(csvImport.status == 3, "the same objectIds are there already: \(csvImport.output)")
        #expect(csvImport.output.contains("137"))
        let all = try await ChildProcess.run(binary, ["export", "--class", "Song", "--data-dir", dir.path], environment: env)
        #expect(all.output.split(separator: "\n").filter { $0.hasPrefix("{") }.count == 5)
    }
}
