import Foundation
import Hummingbird
import Logging
import NIOCore
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPostgres
import ParsleyStorage
import PostgresNIO

/// `--database-uri postgres://...`: the core table on PostgreSQL, with pgbench-style raw inserts and point reads
/// through postgres-nio as the baseline, then one node against two `parsley` processes on the same database.
/// Works in a fresh database it creates next to the one named (and drops at the end).
enum PostgresBench {
    static func run(uri: String, arguments: BenchArguments, wrk: Wrk, work: URL, logger: Logger) async throws {
        try await withFreshDatabase(uri: uri, prefix: "parsley_bench", logger: logger) { settings, url in
            try await measure(url: url, settings: settings, arguments: arguments, wrk: wrk, work: work, logger: logger)
        }
    }

    /// Runs `body` on a new database next to the one `uri` names (its settings and URL), dropped afterwards
    /// whatever `body` does.
    static func withFreshDatabase<T>(
        uri: String, prefix: String, logger: Logger, _ body: (PostgresConnectionSettings, String) async throws -> T
    ) async throws -> T {
        let admin = try PostgresConnectionSettings(url: uri)
        let name = "\(prefix)_\(Int.random(in: 100_000...999_999))"
        try await adminQuery(admin, "CREATE DATABASE \(name)", logger: logger)
        var settings = admin
        settings.database = name
        let url = "postgres://\(settings.username)\(settings.password.map { ":" + $0 } ?? "")@\(settings.host):\(settings.port)/\(name)"
        let outcome = await attempt { try await body(settings, url) }
        try? await adminQuery(admin, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)", logger: logger)
        return try outcome.get()
    }

    static func measure(url: String, settings: PostgresConnectionSettings, arguments: BenchArguments, wrk: Wrk, work: URL, logger: Logger)
        async throws
    {

        print(
            "Parsley benchmark on PostgreSQL: \(ProcessInfo.processInfo.activeProcessorCount) cores, wrk -t2 -c64 -d\(arguments.seconds)s, "
                + "synchronous_commit=on, pool 20"
        )
        let raw = try await rawBaseline(settings, seconds: arguments.seconds, logger: logger)

        let database = try await PostgresDatabase.open(url: url, poolSize: 20, logger: logger)
        let (headers, port) = (BenchServer.headers, arguments.port)
        var table: [Row] = []
        let ids = try await BenchServer.with(database: database, port: port, logger: logger, changeEvents: arguments.changeEvents) { server in
            let (api, base) = (server.api, server.base)

            let core = try await CoreScenarios.run(
                api: api, wrk: wrk, base: base, headers: headers, seconds: arguments.seconds, work: work, insert: raw.insert, read: raw.read)
            table += core.rows
            let ids = core.ids
            // The same get by id, right after the core scenarios, on a second server whose lookups are never coalesced
            // (PARSLEY_POSTGRES_POINT_READ_CONCURRENCY=0; the first server idles meanwhile): what the shared `IN (...)`
            // statements are worth, in this run.
            let plainDatabase = try await PostgresDatabase.open(url: url, poolSize: 20, pointReadConcurrency: 0, logger: logger)
            let uncoalesced = try await BenchServer.with(database: plainDatabase, port: port + 3, logger: logger) { plain in
                try wrk.run(
                    name: "get-uncoalesced", url: plain.base, seconds: arguments.seconds,
                    script: WrkScript.randomId(method: "GET", prefix: "/parse/classes/Bench/", ids: ids, headers: headers, body: nil), directory: work
                )
            }
            table.insert(Row(name: "get by id, lookups not coalesced", result: uncoalesced, baseline: raw.read), at: 2)
            // The floor of any request here: HTTP in and out and one round trip to PostgreSQL (`SELECT 1`), no Parse
            // logic. What a get by id can reach on this machine at this moment is below this.
            let floor = try wrk.run(
                name: "health", url: base, seconds: arguments.seconds,
                script: WrkScript.fixed(method: "GET", path: "/parse/health", headers: headers, body: nil), directory: work)
            table.append(Row(name: "floor: GET /health (HTTP + SELECT 1)", result: floor, baseline: raw.read))

            try await BenchData.populate(api, className: "Item", count: arguments.objects)
            try await BenchData.addIndex(api, className: "Item", base: base)
            let queryPath = BenchData.queryPath("Item")
            let indexed = try wrk.run(
                name: "query", url: base, seconds: arguments.seconds,
                script: WrkScript.fixed(method: "GET", path: queryPath, headers: headers, body: nil),
                directory: work)
            table.append(Row(name: "query, indexed (\(arguments.objects) objects)", result: indexed, baseline: raw.read))
            return ids
        }

        // Scale-out: the same get-by-id load on one `parsley` process, then split across two on the same database.
        let nodes = try await twoNodes(url: url, ids: ids, headers: headers, wrk: wrk, seconds: arguments.seconds, work: work, basePort: port + 1)

        print("")
        print("baseline (raw postgres-nio, 64 concurrent tasks on a pool of 20, autocommit, no HTTP):")
        print("  insert: \(fmt(raw.insert.requestsPerSecond)) ops/s  p50 \(ms(raw.insert.p50)) ms  p99 \(ms(raw.insert.p99)) ms")
        print("  point read by primary key: \(fmt(raw.read.requestsPerSecond)) ops/s  p50 \(ms(raw.read.p50)) ms  p99 \(ms(raw.read.p99)) ms")
        print("")
        Row.printTable(table)
        print("")
        print(nodes)
    }

    // MARK: Baseline

    static func rawBaseline(_ settings: PostgresConnectionSettings, seconds: Int, logger: Logger) async throws -> (insert: Measure, read: Measure) {
        var configuration = PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.username, password: settings.password, database: settings.database,
            tls: try settings.tls.clientTLS())
        configuration.options.maximumConnections = 20
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return try await withBackground({ await client.run() }) {
            try await client.query(#"CREATE TABLE raw_bench ("objectId" TEXT PRIMARY KEY, "createdAt" TEXT, "updatedAt" TEXT, data JSONB)"#)
            let payload = BenchData.payload(seed: 1)
            let counter = Counter()
            let insert = try await timed(seconds: seconds) {
                let id = "id\(counter.next())"
                let stamp = "2026-01-01T00:00:00.000Z"
                try await client.query(
                    #"INSERT INTO raw_bench ("objectId","createdAt","updatedAt",data) VALUES (\#(id), \#(stamp), \#(stamp), \#(payload)::jsonb)"#
                )
            }
            let written = max(1, counter.value)
            let read = try await timed(seconds: seconds) {
                let id = "id\(Int.random(in: 1...written))"
                for try await _ in try await client.query(#"SELECT * FROM raw_bench WHERE "objectId" = \#(id)"#) {}
            }
            print("  raw postgres-nio: \(fmt(insert.requestsPerSecond)) inserts/s, \(fmt(read.requestsPerSecond)) point reads/s")
            return (insert, read)
        }
    }

    /// Runs `operation` from 64 concurrent tasks for `seconds`; throughput and latency percentiles.
    static func timed(seconds: Int, _ operation: @escaping @Sendable () async throws -> Void) async throws -> Measure {
        let deadline = Date().addingTimeInterval(Double(seconds))
        let start = Date()
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<64 {
                group.addTask {
                    var lat: [Double] = []
                    while Date() < deadline {
                        let t = Date()
                        try await operation()
                        lat.append(Date().timeIntervalSince(t))
                    }
                    return lat
                }
            }
            var all: [Double] = []
            for try await l in group { all += l }
            return all
        }
        let elapsed = Date().timeIntervalSince(start)
        return Measure(
            requestsPerSecond: Double(latencies.count) / elapsed, p50: RawSQLiteBaseline.percentile(latencies, 0.5),
            p99: RawSQLiteBaseline.percentile(latencies, 0.99))
    }

    static func adminQuery(_ settings: PostgresConnectionSettings, _ sql: String, logger: Logger) async throws {
        let configuration = PostgresConnection.Configuration(
            host: settings.host, port: settings.port, username: settings.username, password: settings.password,
            database: settings.database ?? "postgres", tls: try settings.tls.connectionTLS())
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        let outcome = await attempt { try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
        try? await connection.close()
        _ = try outcome.get()
    }

    // MARK: Two nodes

    static func twoNodes(url: String, ids: [String], headers: [String: String], wrk: Wrk, seconds: Int, work: URL, basePort: Int) async throws
        -> String
    {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parsley")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            return "two nodes: skipped (build the parsley executable next to parsley-bench: swift build -c release)"
        }
        func start(_ port: Int) throws -> Process {
            let p = Process()
            p.executableURL = executable
            var env = ProcessInfo.processInfo.environment
            env["PARSE_SERVER_DATABASE_URI"] = url
            env["PARSE_SERVER_APPLICATION_ID"] = "bench"
            env["PARSE_SERVER_MASTER_KEY"] = "bench-master-key"
            env["PORT"] = "\(port)"
            env["PARSE_SERVER_HOST"] = "127.0.0.1"
            env["PARSLEY_DATA_DIR"] = work.appendingPathComponent("node\(port)").path
            env["LOG_LEVEL"] = "error"
            p.environment = env
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        let a = try start(basePort), b = try start(basePort + 1)
        defer {
            a.terminate()
            b.terminate()
        }
        try await Task.sleep(for: .seconds(2))
        let script = WrkScript.randomId(method: "GET", prefix: "/parse/classes/Bench/", ids: ids, headers: headers, body: nil)
        let free = try await oneAgainstTwo(basePort: basePort, script: script, wrk: wrk, seconds: seconds, work: work, rounds: 1)
        var report = """
            scale-out (get by id, separate `parsley` processes on one PostgreSQL, 64 connections in all):
            \(free)
            """
        // The same with each node held to a CPU share (as a container's CPU limit would), so the nodes and not
        // the database or the shared cores are the limit: what adding a node buys when the database has room.
        let share = 0.4
        if CPULimit.apply(pid: a.processIdentifier, cpus: share, group: "parsley-bench-a"),
            CPULimit.apply(pid: b.processIdentifier, cpus: share, group: "parsley-bench-b")
        {
            defer { CPULimit.remove(groups: ["parsley-bench-a", "parsley-bench-b"]) }
            let limited = try await oneAgainstTwo(basePort: basePort, script: script, wrk: wrk, seconds: seconds, work: work, rounds: 3)
            report += "\nthe same, each node limited to \(share) CPU (cgroup cpu quota):\n\(limited)"
        } else {
            report += "\nthe same with CPU-limited nodes: skipped (no writable cgroup cpu controller here)"
        }
        return report
    }

    /// get-by-id on the first node alone, then on both at once, `rounds` times in turns (a throttled node's
    /// figure varies from run to run); the medians, each round's ratio, and PostgreSQL's CPU use.
    static func oneAgainstTwo(basePort: Int, script: String, wrk: Wrk, seconds: Int, work: URL, rounds: Int) async throws -> String {
        var ones: [(Measure, Double)] = [], twos: [(Measure, Double)] = []
        for _ in 0..<rounds {
            let cpu0 = PostgresCPU.seconds()
            let one = try wrk.run(name: "one node", url: "http://127.0.0.1:\(basePort)", seconds: seconds, script: script, directory: work)
            let cpu1 = PostgresCPU.seconds()
            // Two wrk processes at once, 32 connections each, one per node.
            let both = try await withThrowingTaskGroup(of: Measure.self) { group in
                for port in [basePort, basePort + 1] {
                    group.addTask {
                        try wrk.run(
                            name: "node :\(port)", url: "http://127.0.0.1:\(port)", seconds: seconds, script: script, directory: work,
                            connections: 32, threads: 1)
                    }
                }
                var total = Measure(requestsPerSecond: 0, p50: 0, p99: 0)
                for try await m in group {
                    total.requestsPerSecond += m.requestsPerSecond
                    total.p50 = max(total.p50, m.p50)
                    total.p99 = max(total.p99, m.p99)
                }
                return total
            }
            let cpu2 = PostgresCPU.seconds()
            ones.append((one, (cpu1 - cpu0) / Double(seconds) * 100))
            twos.append((both, (cpu2 - cpu1) / Double(seconds) * 100))
        }
        func median(_ list: [(Measure, Double)]) -> (Measure, Double) {
            list.sorted { $0.0.requestsPerSecond < $1.0.requestsPerSecond }[list.count / 2]
        }
        let (one, oneShare) = median(ones), (both, twoShare) = median(twos)
        let ratios = zip(ones, twos).map { String(format: "%.2f", $1.0.requestsPerSecond / max(1, $0.0.requestsPerSecond)) }
        let label = rounds > 1 ? " (median of \(rounds) rounds in turns)" : ""
        return """
              one node\(label):  \(fmt(one.requestsPerSecond)) req/s  p50 \(ms(one.p50)) ms  p99 \(ms(one.p99)) ms  PostgreSQL CPU \(fmt(oneShare))% of one core
              two nodes\(label): \(fmt(both.requestsPerSecond)) req/s  p50 \(ms(both.p50)) ms  p99 \(ms(both.p99)) ms  PostgreSQL CPU \(fmt(twoShare))% of one core
              ratio two/one of the medians: \(String(format: "%.2f", both.requestsPerSecond / max(1, one.requestsPerSecond)))\(rounds > 1 ? "  (per round: \(ratios.joined(separator: ", ")))" : "")
            """
    }
}

/// A CPU quota for a process through the cgroup CPU controller (v1 `cpu.cfs_quota_us` or v2 `cpu.max`), as a
/// container runtime sets one. Needs a writable cgroup hierarchy (root on this machine).
enum CPULimit {
    static let period = 100_000

    static func root() -> (path: String, v2: Bool)? {
        let fm = FileManager.default
        if fm.isWritableFile(atPath: "/sys/fs/cgroup/cpu/cgroup.procs") { return ("/sys/fs/cgroup/cpu", false) }
        if let controllers = try? String(contentsOfFile: "/sys/fs/cgroup/cgroup.controllers", encoding: .utf8), controllers.contains("cpu"),
            fm.isWritableFile(atPath: "/sys/fs/cgroup/cgroup.procs")
        {
            return ("/sys/fs/cgroup", true)
        }
        return nil
    }

    static func apply(pid: Int32, cpus: Double, group: String) -> Bool {
        guard let (root, v2) = root() else { return false }
        let dir = root + "/" + group
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let quota = Int(cpus * Double(period))
        do {
            if v2 {
                try "\(quota) \(period)".write(toFile: dir + "/cpu.max", atomically: false, encoding: .utf8)
            } else {
                try "\(period)".write(toFile: dir + "/cpu.cfs_period_us", atomically: false, encoding: .utf8)
                try "\(quota)".write(toFile: dir + "/cpu.cfs_quota_us", atomically: false, encoding: .utf8)
            }
            try "\(pid)".write(toFile: dir + "/cgroup.procs", atomically: false, encoding: .utf8)
            return true
        } catch {
            return false
        }
    }

    /// Moves the processes back to the root group and removes the groups.
    static func remove(groups: [String]) {
        guard let (root, _) = root() else { return }
        for group in groups {
            let dir = root + "/" + group
            let pids = (try? String(contentsOfFile: dir + "/cgroup.procs", encoding: .utf8))?.split(separator: "\n") ?? []
            for pid in pids { try? "\(pid)".write(toFile: root + "/cgroup.procs", atomically: false, encoding: .utf8) }
            rmdir(dir)
        }
    }
}

/// CPU seconds used so far by every process named `postgres` (from /proc), to tell whether the database is busy.
enum PostgresCPU {
    static func seconds() -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
        for pid in entries where pid.allSatisfy(\.isNumber) {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                stat[stat.index(after: open)..<close] == "postgres"
            else { continue }
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            if fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) { total += (u + s) / ticks }
        }
        return total
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        n += 1
        return n
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return n
    }
}
