import Foundation
import HTTPTypes
import Logging
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPostgres
import ParsleyStorage
import Testing

/// The write pipeline's change events: exactly the committed writes, after commit, in order; none for a rolled-back
/// transactional batch; on PostgreSQL the same events, in the same order, on a second node of the database.
@Suite("Change events")
struct ChangeEventsTests {
    typealias Events = AsyncMapSequence<AsyncStream<ChangeMessage>, ChangeFeed.Item>

    static func options() -> ParseServerOptions {
        TestServer.options {
            $0.changeEvents = true
            $0.allowClientClassCreation = true
            $0.accounts.lockout = AccountLockout(duration: 5, threshold: 2)
        }
    }

    /// Events up to (not including) the first of class `Sentinel`; fails after 30 s.
    static func collect(_ events: Events) async throws -> [ChangeEvent] {
        try await withThrowingTaskGroup(of: [ChangeEvent]?.self) { group in
            group.addTask {
                var out: [ChangeEvent] = []
                for await item in events {
                    guard case .event(let e) = item else { continue }
                    if e.className == "Sentinel" { return out }
                    out.append(e)
                }
                return out
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let events = first else { throw Failure("no Sentinel event within 30 s") }
            return events
        }
    }

    /// The first event `events` delivers within `limit` (nil when none came).
    static func firstEvent(_ events: Events, within limit: Duration) async throws -> ChangeEvent? {
        try await withThrowingTaskGroup(of: ChangeEvent?.self) { group in
            group.addTask {
                for await item in events { if case .event(let e) = item { return e } }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
    }

    /// Waits until `events` delivers (the listener of a PostgreSQL node may still be connecting after the start).
    static func warmUp(_ p: ParseClient, _ events: inout Events.AsyncIterator) async throws {
        _ = try await p.createId("Warmup", ["n": 1])
        while let item = await events.next() {
            if case .event(let e) = item, e.className == "Warmup" { return }
        }
    }

    /// `(class, operation)` of each event, with the interesting values of `Thing`s.
    static func summary(_ events: [ChangeEvent]) -> [String] {
        events.map { e in
            var s = "\(e.className) \(e.operation.rawValue)"
            if e.className == "Thing" {
                s += " " + [e.original?["n"], e.object?["n"]].map { $0.map(JSONWriter.string) ?? "-" }.joined(separator: "->")
            }
            if e.className == "_User", e.operation == .update {
                s += e.original?["username"] == e.object?["username"] ? " same user" : " changed user"
            }
            return s
        }
    }

    @Test("a mixed workload: exactly its committed writes, in order, after commit", arguments: Backend.all)
    func mixedWorkload(_ backend: Backend) async throws {
        try await TestServer.withAPI(backend: backend, Self.options()) { api, _, p in
            var iterator = api.changes.subscribe().makeAsyncIterator()
            try await Self.warmUp(p, &iterator)
            let events = api.changes.subscribe()
            // Creates, an update with an operation, a delete.
            let a = try await p.createId("Thing", ["n": 1])
            var r = try await p.request(
                .put, "/classes/Thing/\(a)", ["n": ["__op": "Increment", "amount": 2]], extra: ["X-Parse-Request-Id": "req-42"])
            #expect(r.status == 200)
            _ = try await p.delete("Thing", a)
            // A transactional batch that fails half-way stores nothing and emits nothing; one that succeeds emits its
            // writes after its commit, in order.
            r = try await p.request(
                .post, "/batch",
                [
                    "transaction": true,
                    "requests": [
                        ["method": "POST", "path": "/parse/classes/Thing", "body": ["n": 10]],
                        ["method": "POST", "path": "/parse/classes/Thing", "body": ["n": "not a number"]],
                    ],
                ])
            #expect(r.status == 400)
            r = try await p.request(
                .post, "/batch",
                [
                    "transaction": true,
                    "requests": [
                        ["method": "POST", "path": "/parse/classes/Thing", "body": ["n": 20]],
                        ["method": "POST", "path": "/parse/classes/Thing", "body": ["n": 21]],
                    ],
                ])
            #expect(r.status == 200)
            // Sign-up, log-out, log-in, two failed log-ins that lock the account.
            let user = try await p.signUp("eve", "right-pw")
            r = try await p.asUser(user.token, .post, "/logout")
            #expect(r.status == 200)
            r = try await p.request(.post, "/login", ["username": "eve", "password": "right-pw"], master: false)
            #expect(r.status == 200)
            for _ in 0..<2 {
                r = try await p.request(.post, "/login", ["username": "eve", "password": "wrong"], master: false)
                #expect(r.code == 101)
            }
            _ = try await p.createId("Sentinel", [:])
            let seen = try await Self.collect(events)
            try #require(
                Self.summary(seen) == [
                    "Thing create -->1", "Thing update 1->3", "Thing delete 3->-",
                    "Thing create -->20", "Thing create -->21",
                    "_User create", "_Session create", "_Session delete", "_Session create",
                    "_User update same user", "_User update same user", "_User update same user",
                ])
            // Who wrote, and the saved object as stored (the ACL and dates included, internal fields not).
            let created = seen[0]
            #expect(created.isMaster && created.objectId == a && created.object?["objectId"] == .string(a))
            #expect(created.object?["createdAt"] != nil && created.object?["_rperm"] == nil)
            #expect(seen[1].requestId == "req-42" && seen[0].requestId == nil)
            let session = seen[6]
            #expect(session.object?["user"]?["objectId"] == .string(user.id))
            #expect(seen[5].object?["_hashed_password"] == nil && seen[5].object?["password"] == nil)
            let locked = seen[11]
            #expect(locked.object?["_failed_login_count"] == nil)
        }
    }

    @Test("PostgreSQL: a second node sees the same events in the same order")
    func secondNode() async throws {
        guard Backend.all.contains(.postgres) else { return }
        try await TestServer.withAPI(backend: .postgres, Self.options()) { api, db, p in
            let url = try #require(db.url)
            let other = try await PostgresDatabase.open(url: url, poolSize: 2, logger: TestDatabase.logger)
            try await other.serving {
                let node2 = ParseAPI(services: try await ParseServices.open(options: Self.options(), database: other, adapters: .standard))
                var it1 = api.changes.subscribe().makeAsyncIterator()
                var it2 = node2.changes.subscribe().makeAsyncIterator()
                try await Self.warmUp(p, &it1)
                while let item = await it2.next() { if case .event(let e) = item, e.className == "Warmup" { break } }
                let (events1, events2) = (api.changes.subscribe(), node2.changes.subscribe())
                // Many writes to a few objects, concurrently: each object's events keep their order on both nodes.
                let ids = try await withThrowingTaskGroup(of: String.self) { group in
                    for i in 0..<4 { group.addTask { try await p.createId("Thing", ["n": .int(Int64(i * 100))]) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for id in ids {
                        group.addTask {
                            for _ in 0..<10 { _ = try await p.update("Thing", id, ["n": ["__op": "Increment", "amount": 1]]) }
                        }
                    }
                    try await group.waitForAll()
                }
                // One event too large for a notification goes through the outbox table.
                _ = try await p.createId("Thing", ["n": -1, "big": .string(String(repeating: "x", count: 20_000))])
                _ = try await p.createId("Sentinel", [:])
                let (seen1, seen2) = (try await Self.collect(events1), try await Self.collect(events2))
                #expect(seen1.count == 4 + 40 + 1)
                #expect(seen1 == seen2)
                for id in ids {
                    let values = seen2.filter { $0.objectId == id }.compactMap { $0.object?["n"]?.integerValue }
                    let start = values.first ?? 0
                    #expect(values == Array(start...(start + 10)), "per-object order of \(id)")
                }
                #expect(seen2.last?.object?["big"]?.stringValue?.count == 20_000)
            }
        }
    }
}

extension ChangeEventsTests {
    /// Writes of objects that do not go through `ObjectService` on purpose, each with its reason.
    static let pipelineExceptions: [String: String] = [
        "Sources/ParsleyDomain/Writes/ObjectService.swift":
            "the pipeline itself, and /purge, which empties a class without events or triggers, as in Parse Server",
        "Sources/ParsleyDomain/Writes/ObjectService+Updates.swift": "the pipeline's update in a transaction",
        "Sources/ParsleyDomain/Transfer/TransferImporter.swift": "the importer: an explicit trigger-free path, as a restore must be",
    ]

    @Test("every object write in Sources goes through the write pipeline (the storage's write operations have no other caller)")
    func writePathsGoThroughThePipeline() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let writes = [
            "writer.insert(", "writer.update(", "writer.delete(", ".deleteAll(", ".insertExported(", ".insertRelationPair(", "store.purge(",
            "writeStatement(", "INSERT INTO", "UPDATE \\(", "\"UPDATE ", "DELETE FROM",
        ]
        var offenders: [String] = []
        let sources = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
        #expect(files.count > 50)
        for file in files where file.pathExtension == "swift" {
            await Task.yield()  // a file at a time: the other tests' tasks get the threads between
            let relative = String(file.path.dropFirst(root.path.count + 1))
            // The storage layer and the backends implement the operations.
            if ["Sources/ParsleyStorage/", "Sources/ParsleySQLite/", "Sources/ParsleyPostgres/", "Sources/ParsleyBenchmarks/"].contains(
                where: relative.hasPrefix)
            {
                continue
            }
            if Self.pipelineExceptions[relative] != nil { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for w in writes where text.contains(w) { offenders.append("\(relative): \(w)") }
        }
        #expect(offenders == [], "object writes outside the pipeline")
    }

    @Test("no unstructured task in Sources: long-lived work runs as a service of the ServiceGroup or as a child task")
    func noUnstructuredTasks() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let pattern = try Regex(#"\bTask(\.detached)?\s*(\([^)]*\))?\s*\{"#)
        var offenders: [String] = []
        let files = FileManager.default.enumerator(at: root.appendingPathComponent("Sources"), includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 50)
        for file in files {
            await Task.yield()  // a file at a time: the other tests' tasks get the threads between
            let text = try String(contentsOf: file, encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                if code.contains(pattern) { offenders.append("\(file.lastPathComponent):\(n + 1): \(line)") }
            }
        }
        #expect(offenders == [], "unstructured tasks")
    }
}

extension ChangeEventsTests {
    @Test("PostgreSQL: a node whose listening connection is lost tells its subscribers (gap), reconnects, and hears events again")
    func gapAfterLostConnection() async throws {
        guard Backend.all.contains(.postgres) else { return }
        try await TestServer.withAPI(backend: .postgres, Self.options()) { api, db, p in
            var warm = api.changes.subscribe().makeAsyncIterator()
            try await Self.warmUp(p, &warm)
            var events = api.changes.subscribe().makeAsyncIterator()
            let url = try #require(db.url)
            try await PostgresCluster.execute(
                url,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query "
                    + "LIKE 'LISTEN%'"
            )
            #expect(await events.next() == .gap)
            // Back: a write made now is heard (retrying while the listener reconnects).
            var heard = false
            for _ in 0..<50 where !heard {
                let fresh = api.changes.subscribe()
                let id = try await p.createId("AfterGap", [:])
                heard = try await Self.firstEvent(fresh, within: .milliseconds(500))?.objectId == id
            }
            #expect(heard)
        }
    }
}

extension ChangeEventsTests {
    @Test("a subscriber that does not keep up loses events (counted); writes and other subscribers go on", arguments: Backend.all)
    func slowSubscriber(_ backend: Backend) async throws {
        try await TestServer.withAPI(backend: backend, Self.options()) { api, _, p in
            var warm = api.changes.subscribe().makeAsyncIterator()
            try await Self.warmUp(p, &warm)
            let slow = api.changes.subscribe(limit: 2)
            let events = api.changes.subscribe()
            for i in 0..<5 { _ = try await p.createId("Thing", ["n": .int(Int64(i))]) }
            _ = try await p.createId("Sentinel", [:])
            #expect(try await Self.collect(events).count == 5)
            #expect(api.changes.dropped == 4)
            var it = slow.makeAsyncIterator()
            if case .event(let first)? = await it.next() { #expect(first.object?["n"] == 0) } else { Issue.record("no event kept") }
        }
    }
}

extension ChangeEventsTests {
    /// LiveQuery on for `Live` only: its writes publish (and pay the reads events cost), writes to other classes do not.
    @Test("events only for the classes something consumes: a live class publishes, another class does not", arguments: Backend.all)
    func onlyConsumedClasses(_ backend: Backend) async throws {
        let options = TestServer.options {
            $0.allowClientClassCreation = true
            $0.liveQuery = LiveQueryOptions(classNames: ["Live", "Room[0-9]+"])
        }
        try await TestServer.withAPI(backend: backend, options) { api, _, p in
            #expect(!api.changes.enabled)
            #expect(api.changes.publishes("Live") && api.changes.publishes("Room7"))
            #expect(!api.changes.publishes("Other") && !api.changes.publishes("Room"))
            var warm = api.changes.subscribe().makeAsyncIterator()
            _ = try await p.createId("Live", ["n": 0])
            while let item = await warm.next() { if case .event(let e) = item, e.className == "Live" { break } }
            let events = api.changes.subscribe()
            let other = try await p.createId("Other", ["n": 1])
            _ = try await p.request(.put, "/classes/Other/\(other)", ["n": 2])
            _ = try await p.delete("Other", other)
            let live = try await p.createId("Room7", ["n": 3])
            let first = try await Self.firstEvent(events, within: .seconds(10))
            #expect(first?.className == "Room7" && first?.objectId == live && first?.object?["n"] == 3)
        }
    }
}
