import Foundation
import Logging
import NIOCore
import NIOPosix
import ParsleyCore
import ParsleyPostgres
import PostgresNIO
import SQLiteNIO

/// `--growth`: how the cost of a request grows with the size of its class. One class `Item` (category, score,
/// title, owner; indexes (category, score desc) and (owner, score desc); every object has the ACL of its owner,
/// one of 1,000 users, one of whom signs in) is filled straight through SQL to 10^4, 10^5, 10^6 and 10^7 objects
/// (`--max-objects`; PostgreSQL with `--database-uri`, up to `--pg-max-objects`, default 10^7 too), and at each size the
/// `parsley` executable, started as the README starts it, is measured with wrk: get by id, the indexed query, the
/// signed-in user's ACL'd query (and with `include`), a page by `skip`, counts and create. Baseline: the same
/// requests at the smallest size. Writes the figures as CSV and draws them (scripts/plot-growth.py, matplotlib)
/// into `--plot` (default docs/growth.png).
enum GrowthBench {
    struct Figure { let backend: String; let scenario: String; let size: Int; let measure: Measure }

    static let headers = ["X-Parse-Application-Id": "bench-app", "X-Parse-Master-Key": ServerProcess.masterKey, "Content-Type": "application/json"]

    static func run(work: URL, wrk: Wrk, arguments: BenchArguments, logger: Logger) async throws {
        let seconds = arguments.seconds
        let sizes = stride(from: 4, through: 7, by: 1).map { Int(pow(10, Double($0))) }.filter { $0 <= arguments.maxObjects }
        print(
            "Parsley growth benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores, wrk -t2 -c64 -d\(seconds)s per figure, sizes "
                + "\(sizes.map(String.init).joined(separator: ", "))"
        )
        var figures: [Figure] = []
        figures += try await sqlite(work: work, wrk: wrk, sizes: sizes, seconds: seconds, port: arguments.port, logger: logger)
        if let uri = arguments.databaseURI {
            figures += try await PostgresBench.withFreshDatabase(uri: uri, prefix: "parsley_growth", logger: logger) { settings, url in
                try await postgres(
                    settings: settings, url: url, work: work, wrk: wrk, sizes: sizes.filter { $0 <= arguments.pgMaxObjects }, seconds: seconds,
                    port: arguments.port + 1, logger: logger)
            }
        }
        report(figures)
        let csv = work.appendingPathComponent("growth.csv")
        try
            (["backend,scenario,objects,rps,p50_ms,p99_ms"]
            + figures.map {
                "\($0.backend),\"\($0.scenario)\",\($0.size),\(fmt($0.measure.requestsPerSecond)),\(ms($0.measure.p50)),\(ms($0.measure.p99))"
            }).joined(separator: "\n").write(to: csv, atomically: true, encoding: .utf8)
        let plot = Process()
        plot.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        plot.arguments = ["python3", "scripts/plot-growth.py", csv.path, arguments.plot]
        try plot.run()
        plot.waitUntilExit()
        print(
            plot.terminationStatus == 0
                ? "plot: \(arguments.plot)" : "plot: not drawn (python3 with matplotlib is needed; scripts/bench.sh installs it)")
        try? FileManager.default.copyItem(at: csv, to: URL(fileURLWithPath: arguments.plot).deletingPathExtension().appendingPathExtension("csv"))
    }

    // MARK: SQLite: the server stops while the bench adds rows to its file, then starts again on it.

    static func sqlite(work: URL, wrk: Wrk, sizes: [Int], seconds: Int, port: Int, logger: Logger) async throws -> [Figure] {
        let data = work.appendingPathComponent("growth-sqlite")
        let log = work.appendingPathComponent("growth-sqlite.log")
        var server = try ServerProcess(work: data, port: port, environment: [:], standardOutput: log)
        try await server.waitUntilHealthy()
        let (user, token) = try await prepare(server)
        server.stop()
        let file = data.appendingPathComponent("server-data-\(port)/parsley.sqlite").path
        var figures: [Figure] = []
        var filled = 0
        for size in sizes {
            let started = ContinuousClock.now
            try await fillSQLite(path: file, from: filled + 1, through: size, user: user, logger: logger)
            print("  SQLite: \(size) objects (\(String(format: "%.0f", (ContinuousClock.now - started) / .seconds(1))) s to add \(size - filled))")
            filled = size
            server = try ServerProcess(work: data, port: port, environment: [:], standardOutput: log)
            try await server.waitUntilHealthy()
            figures += try measure(backend: "SQLite", size: size, port: port, user: user, token: token, wrk: wrk, seconds: seconds, work: work)
            server.stop()
        }
        return figures
    }

    static func fillSQLite(path: String, from: Int, through: Int, user: String, logger: Logger) async throws {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let connection = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: pool, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any())
        _ = try await connection.query("PRAGMA cache_size=-1000000")
        _ = try await connection.query("PRAGMA synchronous=NORMAL")
        for start in stride(from: from, through: through, by: 1_000_000) {
            let end = min(through, start + 999_999)
            _ = try await connection.query(
                """
                WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2),
                  rows(i, owner) AS (SELECT i, CASE WHEN i % 1000 = 0 THEN ?3 ELSE 'u' || (i % 1000) END FROM seq)
                INSERT INTO "Item" ("objectId", "createdAt", "updatedAt", "_rperm", "_wperm", "category", "owner", "score", "title")
                SELECT printf('g%09d', i), '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '["' || owner || '"]', '["' || owner || '"]',
                  'c' || (i % 100), owner, (i * 7919) % 100003, 'item ' || i FROM rows
                """, [.integer(start), .integer(end), .text(user)])
        }
        _ = try await connection.query("PRAGMA wal_checkpoint(TRUNCATE)")
        try await connection.close()
        try await pool.shutdownGracefully()
    }

    // MARK: PostgreSQL: rows added while the server runs, then ANALYZE (as autovacuum would after such a load).

    static func postgres(
        settings: PostgresConnectionSettings, url: String, work: URL, wrk: Wrk, sizes: [Int], seconds: Int, port: Int, logger: Logger
    ) async throws -> [Figure] {
        let server = try ServerProcess(
            work: work.appendingPathComponent("growth-pg"), port: port, environment: ["PARSE_SERVER_DATABASE_URI": url],
            standardOutput: work.appendingPathComponent("growth-pg.log"))
        defer { server.stop() }
        try await server.waitUntilHealthy()
        let (user, token) = try await prepare(server)
        var figures: [Figure] = []
        var filled = 0
        for size in sizes {
            let started = ContinuousClock.now
            for start in stride(from: filled + 1, through: size, by: 1_000_000) {
                let end = min(size, start + 999_999)
                try await PostgresBench.adminQuery(
                    settings,
                    """
                    INSERT INTO "Item" ("objectId", "createdAt", "updatedAt", "_rperm", "_wperm", "category", "owner", "score", "title")
                    SELECT 'g' || lpad(i::text, 9, '0'), '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', jsonb_build_array(o), jsonb_build_array(o),
                      'c' || (i % 100), o, (i::bigint * 7919) % 100003, 'item ' || i
                    FROM generate_series(\(start), \(end)) AS i, LATERAL (SELECT CASE WHEN i % 1000 = 0 THEN '\(user)' ELSE 'u' || (i % 1000) END AS o) AS owner
                    """, logger: logger)
            }
            try await PostgresBench.adminQuery(settings, #"ANALYZE "Item""#, logger: logger)
            print(
                "  PostgreSQL: \(size) objects (\(String(format: "%.0f", (ContinuousClock.now - started) / .seconds(1))) s to add \(size - filled))")
            filled = size
            figures += try measure(backend: "PostgreSQL", size: size, port: port, user: user, token: token, wrk: wrk, seconds: seconds, work: work)
        }
        return figures
    }

    // MARK: Scenarios

    /// The signed-in user and the class with its indexes.
    static func prepare(_ server: ServerProcess) async throws -> (user: String, token: String) {
        let (signUp, _) = try await server.call("POST", "/users", ["username": "grower", "password": "growth-password-1"], master: false)
        guard let user = signUp["objectId"]?.stringValue, let token = signUp["sessionToken"]?.stringValue else {
            throw BenchFailure("sign-up: \(signUp)")
        }
        let body =
            #"{"fields":{"category":{"type":"String"},"score":{"type":"Number"},"title":{"type":"String"},"owner":{"type":"Pointer","#
            + #""targetClass":"_User"}},"indexes":{"category_score":{"category":1,"score":-1},"owner_score":{"owner":1,"score":-1}}}"#
        let (schema, orders) = try JSONParser.parseKeepingKeyOrder(Array(body.utf8))
        _ = try await server.call("POST", "/schemas/Item", schema, keyOrders: orders)
        return (user, token)
    }

    static func measure(backend: String, size: Int, port: Int, user: String, token: String, wrk: Wrk, seconds: Int, work: URL) throws -> [Figure] {
        let url = "http://127.0.0.1:\(port)"
        let mine = BenchData.urlEncode(#"{"owner":{"__type":"Pointer","className":"_User","objectId":"\#(user)"}}"#)
        let category = BenchData.urlEncode(#"{"category":"c17"}"#)
        let signedIn = ["X-Parse-Application-Id": "bench-app", "X-Parse-Session-Token": token]
        let scenarios: [(String, String)] = [
            (
                "get by id",
                """
                \(WrkScript.headerLines(headers))
                request = function() return wrk.format("GET", string.format("/parse/classes/Item/g%09d", math.random(\(size)))) end
                """
            ),
            (
                "indexed query",
                WrkScript.fixed(method: "GET", path: "/parse/classes/Item?where=\(category)&order=-score&limit=20", headers: headers, body: nil)
            ),
            (
                "ACL'd query (signed in)",
                WrkScript.fixed(method: "GET", path: "/parse/classes/Item?where=\(mine)&order=-score&limit=20", headers: signedIn, body: nil)
            ),
            (
                "ACL'd query + include",
                WrkScript.fixed(
                    method: "GET", path: "/parse/classes/Item?where=\(mine)&order=-score&limit=20&include=owner", headers: signedIn, body: nil)
            ),
            (
                "page by skip (skip 80)",
                WrkScript.fixed(
                    method: "GET", path: "/parse/classes/Item?where=\(category)&order=-score&limit=20&skip=80", headers: headers, body: nil)
            ),
            ("count, whole class", WrkScript.fixed(method: "GET", path: "/parse/classes/Item?count=1&limit=0", headers: headers, body: nil)),
            (
                "count, one category (1%)",
                WrkScript.fixed(method: "GET", path: "/parse/classes/Item?where=\(category)&count=1&limit=0", headers: headers, body: nil)
            ),
            (
                "create",
                WrkScript.fixed(
                    method: "POST", path: "/parse/classes/Item", headers: headers,
                    body:
                        #"{"category":"c5","score":7,"title":"new","owner":{"__type":"Pointer","className":"_User","objectId":"\#(user)"},"#
                        + #""ACL":{"\#(user)":{"read":true,"write":true}}}"#
                )
            ),
        ]
        // Warm the caches the way a server that has been running would have them.
        for (_, script) in scenarios.prefix(4) {
            _ = try wrk.run(name: "warm-up", url: url, seconds: 1, script: script, directory: work, quiet: true)
        }
        return try scenarios.map { name, script in
            Figure(
                backend: backend, scenario: name, size: size,
                measure: try wrk.run(name: "\(backend) \(size) \(name)", url: url, seconds: seconds, script: script, directory: work))
        }
    }

    static func report(_ figures: [Figure]) {
        for backend in ["SQLite", "PostgreSQL"] {
            let mine = figures.filter { $0.backend == backend }
            guard !mine.isEmpty else { continue }
            let sizes = Array(Set(mine.map(\.size))).sorted()
            let scenarios = mine.map(\.scenario).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            print("")
            print(
                "\(backend): req/s (p99 ms) by objects in the class; last column: throughput at the largest size against the smallest (the baseline)")
            print("| request | " + sizes.map { "\($0.formatted(.number.grouping(.automatic)))" }.joined(separator: " | ") + " | largest / smallest |")
            print("|---|" + sizes.map { _ in "---:|" }.joined() + "---:|")
            for s in scenarios {
                let row = sizes.map { size in mine.first { $0.scenario == s && $0.size == size }?.measure }
                let cells = row.map { m in m.map { "\(fmt($0.requestsPerSecond)) (\(ms($0.p99)))" } ?? "–" }
                let ratio = (row.last??.requestsPerSecond ?? 0) / max(1, row.first??.requestsPerSecond ?? 1)
                print("| \(s) | " + cells.joined(separator: " | ") + " | \(String(format: "%.2f", ratio)) |")
            }
        }
    }
}
