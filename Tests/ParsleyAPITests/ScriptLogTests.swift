import Foundation
import HTTPTypes
import ParsleyCore
import Testing

/// `GET /scriptlog` on the `parsley` executable (whose log handler feeds the ring): Parse Server's JSON array, its
/// parameters, master key only.
@Suite("Script log")
struct ScriptLogTests {
    @Test("recent lines newest first as {level, message, timestamp}; level, n/size, order, from/until; master key only; PARSLEY_LOG_BUFFER bounds it")
    func scriptlog() async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "scriptlog-master-key"
        let server = try ProcessTests.Server(dataDir: dir, environment: ["PARSE_SERVER_MASTER_KEY": key, "PARSLEY_LOG_BUFFER": "50"])
        try await server.waitUntilHealthy()
        try await ProcessTests.client(server.port, key) { p in
            for i in 0..<6 { _ = try await p.createId("Logged", ["n": .int(Int64(i))]) }
            let lines = try await p.request(.get, "/scriptlog?n=5")
            let entries = try #require(lines.json.arrayValue, "\(lines.json)")
            #expect(entries.count == 5)
            for e in entries {
                #expect(e["level"]?.stringValue != nil && e["message"]?.stringValue != nil)
                #expect(e["timestamp"]?.stringValue.flatMap(ParseDate.init(iso:)) != nil)
            }
            let times = entries.compactMap { $0["timestamp"]?.stringValue }
            #expect(times == times.sorted(by: >), "newest first")
            let oldest = try await p.request(.get, "/scriptlog?size=1&order=asc")
            #expect(oldest.json.arrayValue?.count == 1)
            let all = try await p.request(.get, "/scriptlog?n=1000").json.arrayValue ?? []
            #expect(all.contains { $0["message"]?.stringValue?.contains("parsley serving http://") == true })
            #expect(all.count <= 50)
            // The master key never shows in a line.
            #expect(!all.contains { $0["message"]?.stringValue?.contains(key) == true })
            let errors = try await p.request(.get, "/scriptlog?level=error&n=100").json.arrayValue ?? []
            #expect(errors.allSatisfy { $0["level"] == "error" })
            let future = try await p.request(.get, "/scriptlog?from=2100-01-01T00:00:00.000Z").json.arrayValue
            #expect(future?.isEmpty == true)
            let past = try await p.request(.get, "/scriptlog?until=2000-01-01T00:00:00.000Z").json.arrayValue
            #expect(past?.isEmpty == true)
            let anonymous = try await p.request(.get, "/scriptlog", master: false)
            #expect(anonymous.status == 403)
        }
        await server.stop()
    }
}
