// parsley-bench: starts Parsley in-process on a fresh SQLite database, drives it over loopback with wrk
// (keep-alive, 64 connections), and measures raw sqlite-nio as the baseline in the same run.
// Run: scripts/bench.sh   (or: swift run -c release parsley-bench [--seconds 10] [--objects 100000]; --files for files only;
// --database-uri postgres://user@host:port/db for the PostgreSQL table)
import Foundation
import Hummingbird
import Logging
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleySQLite

let arguments = BenchArguments(CommandLine.arguments)
var logger = Logger(label: "parsley-bench")
logger.logLevel = .critical
let work = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: work) }

/// Runs one benchmark alone when its flag is given, then exits.
func runAlone(_ flag: String, _ body: () async throws -> Void) async throws {
    guard CommandLine.arguments.contains(flag) else { return }
    try await body()
    try? FileManager.default.removeItem(at: work)
    exit(0)
}

// `--files`: only the files benchmark (FilesBench.swift).
try await runAlone("--files") { try await FilesBench.run(work: work, logger: logger, port: arguments.port) }
// `--push`: notifications/s from the parsley executable to fake APNs and FCM servers (PushBench.swift).
try await runAlone("--push") { try await PushBench.run(work: work, arguments: arguments, logger: logger) }
// `--livequery`: connections, events/s and commit-to-delivery delay of LiveQuery (LiveQueryBench.swift).
try await runAlone("--livequery") { try await LiveQueryBench.run(work: work, arguments: arguments, logger: logger) }
// `--aggregate`: $group with $sum over --objects objects on SQLite (and PostgreSQL with --database-uri).
try await runAlone("--aggregate") { try await AggregateBench.run(work: work, arguments: arguments, logger: logger) }

guard let wrk = Wrk.locate() else {
    print("wrk is required (apt-get install wrk); scripts/bench.sh installs it.")
    exit(1)
}

// `--edge`: get by id, /health and create on the parsley executable as the README starts it, against a bare
// Hummingbird + sqlite-nio server and the same executable without its access log (EdgeBench.swift).
try await runAlone("--edge") { try await EdgeBench.run(work: work, wrk: wrk, arguments: arguments, logger: logger) }

// `--journal`: the journal app's traffic as signed-in users, SQLite and (with --database-uri) PostgreSQL (JournalBench.swift).
try await runAlone("--journal") { try await JournalBench.run(work: work, wrk: wrk, arguments: arguments, logger: logger) }

// `--growth`: the cost of requests as one class grows from 10^4 to 10^7 objects, table and plot (GrowthBench.swift).
try await runAlone("--growth") { try await GrowthBench.run(work: work, wrk: wrk, arguments: arguments, logger: logger) }

// `--logins`: Sign in with Apple (cached JWKS) against password log-ins (bcrypt), log-ins/s (LoginBench.swift).
try await runAlone("--logins") { try await LoginBench.run(work: work, wrk: wrk, arguments: arguments, logger: logger) }

// `--cloud`: the cost of no-op cloud code triggers on create (CloudBench.swift).
try await runAlone("--cloud") { try await CloudBench.run(work: work, wrk: wrk, arguments: arguments, logger: logger) }

// `--database-uri postgres://...`: the PostgreSQL table (PostgresBench.swift), then exit.
if let uri = arguments.databaseURI {
    try await PostgresBench.run(uri: uri, arguments: arguments, wrk: wrk, work: work, logger: logger)
    try? FileManager.default.removeItem(at: work)
    exit(0)
}

let database = try await SQLiteDatabase.open(path: work.appendingPathComponent("parsley.sqlite").path, logger: logger)
try await BenchServer.with(database: database, port: arguments.port, logger: logger, changeEvents: arguments.changeEvents) { server in
    let (api, base, headers, options) = (server.api, server.base, BenchServer.headers, BenchServer.options)
    var table: [Row] = []

    print(
        "Parsley benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores, wrk -t2 -c64 -d\(arguments.seconds)s, SQLite WAL "
            + "synchronous=FULL\(arguments.changeEvents ? ", change events on with a subscriber" : "")"
    )

    // `--security` skips 1-3 and the unindexed query: the signed-in scenarios and the query they are compared with.
    let full = !arguments.securityOnly

    // 1. Raw sqlite-nio baseline, same database settings, no HTTP.
    let raw = full ? try await RawSQLiteBaseline.run(directory: work, inserts: arguments.baselineOps, logger: logger) : nil

    // 2-3. Create (POST one ~300-byte object), get by id and update with Increment over the ids created.
    var get: Measure?
    if let raw {
        let core = try await CoreScenarios.run(
            api: api, wrk: wrk, base: base, headers: headers, seconds: arguments.seconds, work: work, insert: raw.insert, read: raw.read)
        table += core.rows
        get = core.get
    }

    // 4. Query on 100,000 objects: equality + order + limit 20, without and with an index.
    try await BenchData.populate(api, className: "Item", count: arguments.objects)
    let queryScript = WrkScript.fixed(method: "GET", path: BenchData.queryPath("Item"), headers: headers, body: nil)
    if let raw {
        let scan = try wrk.run(name: "query", url: base, seconds: arguments.seconds, script: queryScript, directory: work)
        table.append(Row(name: "query, no index (\(arguments.objects) objects)", result: scan, baseline: raw.read))
    }
    try await BenchData.addIndex(api, className: "Item", base: base)
    if let raw {
        let indexed = try wrk.run(name: "query", url: base, seconds: arguments.seconds, script: queryScript, directory: work)
        table.append(Row(name: "query, indexed (\(arguments.objects) objects)", result: indexed, baseline: raw.read))
    }

    // 5. Security: log-in per second, then the same get and indexed query as a user with a session token on a
    //    class where every object has an ACL (10 roles, the user in 3 of them).
    let fixture = try await SecurityBench.populate(api: api, base: base, arguments: arguments)
    if arguments.hold {
        // `--hold`: keep serving the populated database for a profiler or a hand-run load generator.
        print("  serving \(base); session token \(fixture.token)")
        print("  ACL'd query: \(SecurityBench.Fixture.queryPath)")
        print("  plain query: \(BenchData.queryPath("Item"))")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
    let security = try await SecurityBench.measure(
        fixture, api: api, wrk: wrk, base: base, headers: headers, plainQueryScript: queryScript, arguments: arguments, directory: work)
    // Without the raw baseline (`--security`), rows compare with themselves.
    table.append(Row(name: "log-in (bcrypt cost \(options.accounts.bcryptCost))", result: security.login, baseline: raw?.insert ?? security.login))
    table.append(Row(name: "get by id, session + ACL", result: security.get, baseline: get ?? security.get))
    table.append(
        Row(
            name: "query, indexed, no ACLs (median of \(SecurityBench.rounds), in turns with the next)", result: security.plainQuery,
            baseline: raw?.read ?? security.plainQuery))
    table.append(
        Row(name: "query, indexed, session + ACL (median of \(SecurityBench.rounds))", result: security.query, baseline: security.plainQuery))

    if let raw {
        print("")
        print("baseline (raw sqlite-nio, same process, no HTTP):")
        print(
            "  insert, one transaction each, synchronous=FULL: \(fmt(raw.insert.requestsPerSecond)) ops/s  p50 \(ms(raw.insert.p50)) ms  p99 "
                + "\(ms(raw.insert.p99)) ms"
        )
        print(
            "  point read by primary key, 4 concurrent readers: \(fmt(raw.read.requestsPerSecond)) ops/s  p50 \(ms(raw.read.p50)) ms  p99 "
                + "\(ms(raw.read.p99)) ms"
        )
    }
    print("")
    Row.printTable(table)
    print("")
    print("peak memory (VmHWM of this process: server + SQLite caches + \(arguments.objects) objects): \(PeakMemory.megabytes()) MB")

}
exit(0)
