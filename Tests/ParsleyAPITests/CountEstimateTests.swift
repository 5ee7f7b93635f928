import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyStorage
import Testing

/// Counting a big class: a master-key count of the whole class answers the database's estimate once it reaches
/// `estimatedCountThreshold` (so it does not read every row); anything narrower is counted exactly.
@Suite("Count estimates")
struct CountEstimateTests {
    @Test(
        "whole-class master counts: the estimate from the threshold on (rowid span / planner statistics); where, users and small classes counted exactly",
        arguments: Backend.all)
    func estimates(_ backend: Backend) async throws {
        try await TestServer.withAPI(backend: backend, TestServer.options { $0.estimatedCountThreshold = 20 }) { api, db, p in
            var ids: [String] = []
            for i in 0..<30 { ids.append(try await p.createId("Big", ["n": .int(Int64(i)), "ACL": ["*": ["read": true]]])) }
            for id in ids[10..<15] { #expect(try await p.request(.delete, "/classes/Big/\(id)").status == 200) }
            let exact = 25
            let whole = try await p.request(.get, "/classes/Big?count=1&limit=0")
            let filtered = try await p.request(.get, "/classes/Big?count=1&limit=0&where=%7B%22n%22%3A%7B%22%24gte%22%3A0%7D%7D")
            #expect(filtered["count"]?.integerValue == exact, "a where is counted exactly")
            let asClient = try await p.request(.get, "/classes/Big?count=1&limit=0", master: false)
            #expect(asClient["count"]?.integerValue == exact, "read permissions to check: counted exactly")
            if backend == .sqlite {
                // The rowid span: 30 rows were written, 5 deleted from the middle.
                #expect(whole["count"]?.integerValue == 30, "\(whole.json)")
            } else {
                // No statistics before the first ANALYZE (reltuples -1): counted.
                #expect(whole["count"]?.integerValue == exact, "\(whole.json)")
                _ = try await api.services.store.database.read { try await $0.query(SQLFragment(unsafeSQL: #"ANALYZE "Big""#)) }
                let analyzed = try await p.request(.get, "/classes/Big?count=1&limit=0")
                #expect(analyzed["count"]?.integerValue == exact, "\(analyzed.json)")
            }
            // Below the threshold: counted. (PostgreSQL's statistics lag behind deletes until autovacuum or ANALYZE
            // runs: an estimate is only an estimate.)
            for id in ids[15..<30] { _ = try await p.request(.delete, "/classes/Big/\(id)") }
            if backend == .postgres {
                _ = try await api.services.store.database.read { try await $0.query(SQLFragment(unsafeSQL: #"ANALYZE "Big""#)) }
            }
            let small = try await p.request(.get, "/classes/Big?count=1&limit=0")
            #expect(small["count"]?.integerValue == 10, "\(small.json)")
        }
        // Threshold 0: always counted.
        try await TestServer.with(backend: backend, TestServer.options { $0.estimatedCountThreshold = 0 }) { p in
            var ids: [String] = []
            for i in 0..<5 { ids.append(try await p.createId("Big", ["n": .int(Int64(i))])) }
            _ = try await p.request(.delete, "/classes/Big/\(ids[2])")
            let whole = try await p.request(.get, "/classes/Big?count=1&limit=0")
            #expect(whole["count"]?.integerValue == 4)
        }
    }
}
