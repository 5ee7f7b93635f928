import Foundation
import ParsleyCore
import ParsleyStorage
import Testing

/// Backend edges: the statement timeout, and ACL keys that could fool a textual permission test.
@Suite("Storage limits")
struct StorageLimitsTests {
    @Test("a statement running past the statement timeout is cancelled with a timeout error", arguments: Backend.all)
    func statementTimeout(_ backend: Backend) async throws {
        try await TestDatabase.with(backend, logger: TestDatabase.logger, statementTimeout: .milliseconds(200)) { db in
            // A statement that runs half a minute or more on either database.
            let slow: SQLFragment =
                switch backend {
                case .sqlite: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500000000) SELECT count(*) FROM c"
                case .postgres: "SELECT pg_sleep(30)"
                }
            let started = ContinuousClock.now
            await #expect(throws: StoreError.self) {
                try await db.database.read { try await $0.query(slow) }
            }
            do {
                _ = try await db.database.read { try await $0.query(slow) }
            } catch StoreError.timeout {
                // expected
            } catch {
                Issue.record("expected StoreError.timeout, got \(error)")
            }
            // Both cancelled: without the timeout the two would take a minute or more.
            #expect(ContinuousClock.now - started < .seconds(10))
            // The database still answers afterwards.
            let rows = try await db.database.read { try await $0.query("SELECT 1") }
            #expect(rows.count == 1)
        }
    }

    @Test("an ACL key that merely contains a principal grants nothing to that principal", arguments: Backend.all)
    func aclKeyLookalikes(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let alice = try await p.newUser("alice")
            _ = try await p.createRole("Admin", users: [alice.id])
            _ = try await p.createId("Doc", ["title": "quoted", "ACL": .object(["x\"role:Admin": ["read": true]])])
            _ = try await p.createId("Doc", ["title": "comma", "ACL": .object(["a\",\"role:Admin": ["read": true]])])
            _ = try await p.createId("Doc", ["title": "suffix", "ACL": .object(["role:Admin2": ["read": true]])])
            _ = try await p.createId("Doc", ["title": "prefix", "ACL": .object(["xrole:Admin": ["read": true]])])
            _ = try await p.createId("Doc", ["title": "real", "ACL": .object(["role:Admin": ["read": true], "someone": ["read": true]])])
            _ = try await p.createId("Doc", ["title": "second", "ACL": .object(["aaa": ["read": true], "role:Admin": ["read": true]])])
            let seen = try await p.findAs(alice.token, "Doc", ["order": "title"])
            #expect(seen.results.compactMap { $0["title"]?.stringValue } == ["real", "second"])
            let counted = try await p.findAs(alice.token, "Doc", ["count": "1", "limit": "0"])
            #expect(counted["count"] == 2)
        }
    }

    @Test("operators on fields of another type match nothing instead of failing", arguments: Backend.all)
    func operatorsAcrossTypes(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId(
                "Mixed",
                [
                    "name": "alpha", "score": 5, "ok": true, "obj": ["n": 1], "tags": ["x", "y"],
                    "loc": ["__type": "GeoPoint", "latitude": 1, "longitude": 2],
                ])
            let empty: [JSONValue] = [
                ["score": ["$regex": "5"]], ["ok": ["$regex": "t"]], ["obj": ["$regex": "n"]], ["loc": ["$regex": "1"]],
                ["score": ["$all": [["$regex": "5"]]]],
                ["name": ["$select": ["query": ["className": "Mixed", "where": [:]], "key": "score"]]],
                ["score": ["$select": ["query": ["className": "Mixed", "where": [:]], "key": "name"]]],
                ["tags": ["$select": ["query": ["className": "Mixed", "where": [:]], "key": "obj"]]],
                ["obj.n": ["$regex": "1"]], ["obj": ["$in": [1, 2]]], ["ok": ["$gt": "a"]], ["score": "5"],
            ]
            for w in empty {
                let r = try await p.find("Mixed", where: w)
                #expect(r.status == 200, "\(w): \(r.json)")
                #expect(r.results.isEmpty, "\(w)")
            }
            // The same operators on fields of their own type still match.
            let hits: [JSONValue] = [
                ["name": ["$regex": "^al"]], ["name": ["$select": ["query": ["className": "Mixed", "where": [:]], "key": "name"]]],
                ["score": ["$select": ["query": ["className": "Mixed", "where": [:]], "key": "score"]]],
                ["tags": "x"], ["obj.n": 1], ["score": ["$gt": 4]],
            ]
            for w in hits {
                let r = try await p.find("Mixed", where: w)
                #expect(r.results.count == 1, "\(w): \(r.json)")
            }
        }
    }
}
