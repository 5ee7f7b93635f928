import Foundation
import HTTPTypes
import HummingbirdTesting
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPostgres
import ParsleyStorage
import Testing

/// The PostgreSQL statement connections (`PostgresConnectionPool`): never more than the pool size, statements
/// beyond it wait their turn, a connection the server ends is replaced, and idle connections close.
@Suite("PostgreSQL connection pool", .enabled(if: Backend.all.contains(.postgres), "PostgreSQL is not available"))
struct PostgresPoolTests {
    /// The pool's connections to this database (they, and only they, say `application_name = parsley`).
    static let countConnections = SQLFragment(
        unsafeSQL: "SELECT count(*)::text FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'parsley'")

    func withDatabase(
        poolSize: Int, idleTimeout: Duration = .seconds(60), leaseTimeout: Duration? = nil,
        _ body: @Sendable (PostgresDatabase, String) async throws -> Void
    ) async throws {
        try await PostgresCluster.shared.withFreshDatabase { url in
            let database = try await PostgresDatabase.open(
                url: url, poolSize: poolSize, idleTimeout: idleTimeout, leaseTimeout: leaseTimeout, logger: TestDatabase.logger)
            try await database.serving { try await body(database, url) }
        }
    }

    func connections(_ database: PostgresDatabase) async throws -> Int {
        let rows = try await database.read { try await $0.query(Self.countConnections) }
        return Int(rows.first?.first?.text ?? "") ?? -1
    }

    /// A write that holds a connection without a statement running: on a pool of one, the statements after it wait
    /// their turn. It gives the connection back when told to (`letGo`) or after `limit`; `givingBack` is set before the
    /// connection goes back, so a test can tell that something ended while the connection was still held, with no
    /// clock (on CI's two cores a task's timer can fire seconds late).
    struct Holder {
        let task: Task<Void, any Error>
        let letGo: SharedFlag
        let givingBack: SharedFlag

        func release() async throws {
            letGo.set()
            try await task.value
        }
    }

    /// Starts a `Holder` and returns once it has the connection.
    static func holdConnection(_ database: PostgresDatabase, upTo limit: Duration = .seconds(20)) async throws -> Holder {
        let (holding, letGo, givingBack) = (SharedFlag(), SharedFlag(), SharedFlag())
        let task = Task {
            try await database.write { _ in
                holding.set()
                try? await waitUntil(upTo: limit) { letGo.isSet }
                givingBack.set()
            }
        }
        try await waitUntil { holding.isSet }
        return Holder(task: task, letGo: letGo, givingBack: givingBack)
    }

    /// `count` statements of `seconds` each, all at once.
    func sleepers(_ database: PostgresDatabase, count: Int, seconds: Double) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask { _ = try await database.read { try await $0.query(SQLFragment(unsafeSQL: "SELECT pg_sleep(\(seconds))")) } }
            }
            try await group.waitForAll()
        }
    }

    @Test("ten statements at once on a pool of three: three connections, the others wait their turn")
    func boundedAndQueued() async throws {
        try await withDatabase(poolSize: 3) { database, _ in
            let started = ContinuousClock.now
            try await sleepers(database, count: 10, seconds: 0.15)
            // Four turns of three at most.
            #expect(ContinuousClock.now - started >= .milliseconds(590))
            #expect(try await connections(database) == 3)
        }
    }

    @Test("64 callers of many short statements on a pool of two: every statement runs, on two connections")
    func manyOnPoolOfTwo() async throws {
        try await withDatabase(poolSize: 2) { database, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        for _ in 0..<40 { _ = try await database.read { try await $0.query("SELECT 1") } }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await connections(database) == 2)
        }
    }

    @Test("a statement cancelled while it waits for a connection ends at once and leaves the pool as it was")
    func cancelledWaiter() async throws {
        try await withDatabase(poolSize: 1) { database, _ in
            let holder = try await Self.holdConnection(database)
            let waiter = Task { try await database.read { try await $0.query("SELECT 1::text") } }
            try await Task.sleep(for: .milliseconds(100))
            waiter.cancel()
            await #expect(throws: CancellationError.self) { _ = try await waiter.value }
            #expect(!holder.givingBack.isSet, "the waiter ended only when the connection came back")
            try await holder.release()
            let one = try await database.read { try await $0.query("SELECT 1::text") }
            #expect(one.first?.first?.text == "1")
            #expect(try await connections(database) == 1)
        }
    }

    @Test("a statement that finds no connection free within the lease timeout fails instead of waiting on; the pool serves the next")
    func leaseTimeout() async throws {
        try await withDatabase(poolSize: 1, leaseTimeout: .milliseconds(400)) { database, _ in
            let holder = try await Self.holdConnection(database)
            let started = ContinuousClock.now
            await #expect(throws: StoreError.self) { _ = try await database.read { try await $0.query("SELECT 1::text") } }
            // Failed once it had waited 400 ms (the sweep runs every 100 ms), not when the connection came back.
            let waited = ContinuousClock.now - started
            #expect(waited >= .milliseconds(400), "\(waited)")
            #expect(!holder.givingBack.isSet, "the statement failed only when the connection came back")
            try await holder.release()
            let one = try await database.read { try await $0.query("SELECT 1::text") }
            #expect(one.first?.first?.text == "1")
        }
    }

    @Test("over HTTP: a request that finds no connection free within the lease timeout answers Parse error 1 (500), the next one 200")
    func leaseTimeoutOverHTTP() async throws {
        try await PostgresCluster.shared.withFreshDatabase { url in
            let database = try await PostgresDatabase.open(
                url: url, poolSize: 1, leaseTimeout: .milliseconds(300), logger: TestDatabase.logger)
            try await database.serving {
                let options = TestServer.options()
                let api = ParseAPI(services: try await ParseServices.open(options: options, database: database, adapters: .standard))
                let app = ParsleyApplication.application(api: api, host: "127.0.0.1", port: 0, logger: TestDatabase.logger)
                try await app.test(.live) { client in
                    let p = ParseClient(client: client, options: options)
                    let id = try await p.createId("Held", ["n": 1])
                    // A write holds the only connection until the request is answered.
                    let holder = try await Self.holdConnection(database)
                    let refused = try await p.request(.get, "/classes/Held?where=%7B%22n%22%3A1%7D")
                    #expect(refused.status == 500, "\(refused.json)")
                    #expect(refused.code == 1)
                    try await holder.release()
                    #expect(try await p.get("Held", id).status == 200)
                }
            }
        }
    }

    @Test("by default a short statement timeout does not shorten the wait for a connection: a statement queued behind a longer write runs")
    func shortStatementTimeoutStillQueues() async throws {
        try await PostgresCluster.shared.withFreshDatabase { url in
            // 250 ms: a `SELECT 1` on a loaded machine (CI's tests run side by side) once took longer than 50 ms.
            let database = try await PostgresDatabase.open(url: url, poolSize: 1, statementTimeout: .milliseconds(250), logger: TestDatabase.logger)
            try await database.serving {
                // The write holds the only connection for 1 s without a statement running (no statement timeout applies).
                let holder = try await Self.holdConnection(database, upTo: .seconds(1))
                let one = try await database.read { try await $0.query("SELECT 1::text") }
                #expect(one.first?.first?.text == "1")
                #expect(holder.givingBack.isSet)
                try await holder.task.value
            }
        }
    }

    @Test("connections the server ends are replaced: the next statements succeed")
    func terminatedReplaced() async throws {
        try await withDatabase(poolSize: 3) { database, url in
            try await sleepers(database, count: 3, seconds: 0.05)
            let name = try await database.read { try await $0.query("SELECT current_database()") }.first?.first?.text ?? ""
            try await PostgresCluster.execute(
                url,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND application_name = 'parsley' AND pid <> pg_backend_pid()"
            )
            try await Task.sleep(for: .milliseconds(300))
            for _ in 0..<6 {
                let one = try await database.read { try await $0.query("SELECT 1::text") }
                #expect(one.first?.first?.text == "1")
            }
            try await sleepers(database, count: 6, seconds: 0.05)
            #expect(try await connections(database) <= 3)
        }
    }

    @Test("connections idle longer than the idle timeout are closed")
    func idleClosed() async throws {
        try await withDatabase(poolSize: 3, idleTimeout: .milliseconds(400)) { database, _ in
            try await sleepers(database, count: 3, seconds: 0.3)
            #expect(try await connections(database) == 3)
            // The statement that counts keeps one in use; the other two are closed after 400 ms idle, within a few
            // turns of the reaper. The bound is wide: on CI's two cores a test that blocks a task thread can hold
            // the reaper's timer back for seconds (a 5 s bound once ran out with all three open).
            let started = ContinuousClock.now
            var open = try await connections(database)
            while open != 1, ContinuousClock.now - started < .seconds(30) {
                try await Task.sleep(for: .milliseconds(100))
                open = try await connections(database)
            }
            #expect(open == 1)
            #expect(ContinuousClock.now - started >= .milliseconds(300), "not closed before the idle timeout")
        }
    }
}
