#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import Logging
import ParsleyPostgres
import ParsleySQLite
import ParsleyStorage
import PostgresNIO
import Synchronization

/// The storage backends every HTTP test runs against.
enum Backend: String, Sendable, CustomStringConvertible {
    case sqlite, postgres
    var description: String { rawValue }

    /// SQLite always; PostgreSQL when a server is configured or `initdb` can be found (decided without starting
    /// anything: the cluster starts on first use). With `PARSLEY_REQUIRE_POSTGRES=1` PostgreSQL is always
    /// included, so a missing server fails the suite instead of skipping half of it.
    static let all: [Backend] = {
        if PostgresCluster.source != nil || PostgresCluster.required { return [.sqlite, .postgres] }
        FileHandle.standardError.write(Data((PostgresCluster.skippedMessage + "\n").utf8))
        return [.sqlite]
    }()
}

/// A database for one test: a fresh SQLite file in a temporary folder, or a fresh database on the PostgreSQL
/// test server. `with` closes and removes it afterwards.
struct TestDatabase: Sendable {
    let backend: Backend
    let database: any SQLDatabase
    /// A temporary folder for the test's own files (the SQLite database lives here).
    let directory: URL
    /// The PostgreSQL database's URL (nil for SQLite).
    let url: String?

    /// The servers' logger: warnings and errors only.
    static let logger: Logger = {
        var logger = Logger(label: "parsley-test")
        logger.logLevel = .warning
        return logger
    }()

    static func with<T: Sendable>(
        _ backend: Backend, logger: Logger, statementTimeout: Duration = .seconds(15),
        pointReadConcurrency: Int = PostgresDatabase.defaultPointReadConcurrency, _ body: @Sendable (TestDatabase) async throws -> T
    ) async throws -> T {
        return try await TestSlots.run {
            try await open(backend, logger: logger, statementTimeout: statementTimeout, pointReadConcurrency: pointReadConcurrency, body)
        }
    }

    private static func open<T: Sendable>(
        _ backend: Backend, logger: Logger, statementTimeout: Duration, pointReadConcurrency: Int, _ body: @Sendable (TestDatabase) async throws -> T
    ) async throws -> T {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        switch backend {
        case .sqlite:
            let database = try await SQLiteDatabase.open(
                path: dir.appendingPathComponent("db.sqlite").path, readers: 2, statementTimeout: statementTimeout, logger: logger)
            return try await run(TestDatabase(backend: backend, database: database, directory: dir, url: nil), body)
        case .postgres:
            return try await PostgresCluster.shared.withFreshDatabase { url in
                let database = try await PostgresDatabase.open(
                    url: url, poolSize: 8, statementTimeout: statementTimeout, pointReadConcurrency: pointReadConcurrency, logger: logger)
                return try await run(TestDatabase(backend: backend, database: database, directory: dir, url: url), body)
            }
        }
    }

    /// Runs the database beside `body` (as `serve` runs it in its ServiceGroup), then closes it.
    private static func run<T: Sendable>(_ db: TestDatabase, _ body: @Sendable (TestDatabase) async throws -> T) async throws -> T {
        try await db.database.serving { try await body(db) }
    }
}

/// The process-wide PostgreSQL test server: `PARSLEY_TEST_POSTGRES_URL` when set, otherwise a throwaway
/// cluster (initdb in a temporary folder, started on first use, stopped when the test process exits).
actor PostgresCluster {
    static let shared = PostgresCluster()

    /// Where a server comes from, decided cheaply (no process started).
    enum Source: Sendable {
        case url(String)
        case initdb(binDir: URL)
    }

    static let environment = ProcessInfo.processInfo.environment
    static let required = environment["PARSLEY_REQUIRE_POSTGRES"] == "1"
    static let skippedMessage =
        "PostgreSQL not found: the PostgreSQL half of the test suite was SKIPPED (install Debian's postgresql or set PARSLEY_TEST_POSTGRES_URL)"

    /// PARSLEY_TEST_POSTGRES=0 turns the PostgreSQL half off (a quick local run; it still fails under
    /// PARSLEY_REQUIRE_POSTGRES=1).
    static let source: Source? = {
        if environment["PARSLEY_TEST_POSTGRES"] == "0" { return nil }
        if let url = environment["PARSLEY_TEST_POSTGRES_URL"], !url.isEmpty { return .url(url) }
        if let bin = findBinDir() { return .initdb(binDir: bin) }
        return nil
    }()

    /// Whether the test server offers TLS with a known CA: the cluster the tests start themselves, or
    /// PARSLEY_TEST_POSTGRES_URL with PARSLEY_TEST_POSTGRES_CA (scripts/pg-test-cluster.sh sets both).
    static var offersTLS: Bool {
        if case .initdb = source { return true }
        return !(environment["PARSLEY_TEST_POSTGRES_CA"] ?? "").isEmpty && source != nil
    }

    /// The CA (PEM) that signed the test server's certificate, once the server is up.
    func rootCertificate() async throws -> String? {
        _ = try await serverURL()
        if case .url = Self.source { return Self.environment["PARSLEY_TEST_POSTGRES_CA"] }
        return LocalCluster.rootCertificate.withLock { $0 }
    }

    /// The folder holding `initdb`, `pg_ctl` and `postgres`: from PATH (symlinks resolved), else the newest
    /// /usr/lib/postgresql/<version>/bin.
    static func findBinDir() -> URL? {
        let fm = FileManager.default
        func complete(_ dir: URL) -> Bool {
            ["initdb", "pg_ctl", "postgres"].allSatisfy { fm.isExecutableFile(atPath: dir.appendingPathComponent($0).path) }
        }
        for entry in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(entry)).appendingPathComponent("initdb")
            guard fm.isExecutableFile(atPath: candidate.path) else { continue }
            let dir = candidate.resolvingSymlinksInPath().deletingLastPathComponent()
            if complete(dir) { return dir }
            if complete(candidate.deletingLastPathComponent()) { return candidate.deletingLastPathComponent() }
        }
        let versions = ((try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap { v in Int(v).map { ($0, v) } }
            .sorted { $0.0 > $1.0 }
        for (_, v) in versions {
            let dir = URL(fileURLWithPath: "/usr/lib/postgresql/\(v)/bin")
            if complete(dir) { return dir }
        }
        return nil
    }

    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    private var server: Task<String?, any Error>?

    /// The URL of the server's maintenance database (`.../postgres`), starting the throwaway cluster on the first
    /// call; nil when no PostgreSQL can be found.
    func serverURL() async throws -> String? {
        if server == nil {
            server = Task.detached { try await Self.start() }
        }
        return try await server!.value
    }

    /// Creates `p_<random hex>` and returns its URL.
    func freshDatabase() async throws -> String {
        guard let admin = try await serverURL() else {
            throw Unavailable(
                description: Self.required
                    ? "PARSLEY_REQUIRE_POSTGRES=1 but no PostgreSQL server: set PARSLEY_TEST_POSTGRES_URL or install Debian's postgresql (initdb)"
                    : Self.skippedMessage)
        }
        let name = "p_" + (0..<12).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        try await Self.execute(admin, "CREATE DATABASE \"\(name)\"")
        return try Self.url(admin, database: name)
    }

    /// Drops a database made by `freshDatabase`, disconnecting whoever is still connected.
    func dropDatabase(_ url: String) async {
        guard let admin = try? await serverURL(), let settings = try? PostgresConnectionSettings(url: url),
            let name = settings.database, name.hasPrefix("p_")
        else { return }
        try? await Self.execute(admin, "DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
    }

    /// A fresh database for the duration of `body`, dropped afterwards. It takes one of the `TestSlots` (which
    /// also keeps a parallel run under the server's connection limit); a test that already holds one (a second
    /// database inside the first) does not wait for another.
    nonisolated func withFreshDatabase<T: Sendable>(_ body: (String) async throws -> T) async throws -> T {
        try await TestSlots.run {
            let url = try await freshDatabase()
            do {
                let result = try await body(url)
                await dropDatabase(url)
                return result
            } catch {
                await dropDatabase(url)
                throw error
            }
        }
    }

    static func url(_ admin: String, database: String) throws -> String {
        guard var components = URLComponents(string: admin) else { throw Unavailable(description: "bad PostgreSQL URL \(admin)") }
        components.path = "/" + database
        components.query = nil
        guard let s = components.string else { throw Unavailable(description: "bad PostgreSQL URL \(admin)") }
        return s
    }

    static func execute(_ url: String, _ sql: String) async throws {
        let s = try PostgresConnectionSettings(url: url)
        var logger = Logger(label: "parsley-test-postgres")
        logger.logLevel = .error
        let configuration = PostgresConnection.Configuration(
            host: s.host, port: s.port, username: s.username, password: s.password, database: s.database ?? "postgres", tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
        } catch {
            try? await connection.close()
            throw Unavailable(description: "PostgreSQL test server \(s.host):\(s.port): \(sql): \(String(reflecting: error))")
        }
        try await connection.close()
    }

    // MARK: The throwaway cluster

    private static func start() async throws -> String? {
        switch source {
        case nil: return nil
        case .url(let url): return url
        case .initdb(let bin):
            return try await offThread { try LocalCluster.start(bin: bin) }
        }
    }
}

/// initdb + pg_ctl in a temporary folder, as the `postgres` user when running as root (initdb refuses root).
enum LocalCluster {
    static let prefix = "parsley-pg-"

    static func start(bin: URL) throws -> String {
        let fm = FileManager.default
        // /tmp rather than $TMPDIR: the `postgres` user must reach it, and socket paths must stay short.
        let tmp = fm.fileExists(atPath: "/tmp") ? URL(fileURLWithPath: "/tmp") : fm.temporaryDirectory
        reapStale(in: tmp, bin: bin)
        let root = tmp.appendingPathComponent(prefix + UUID().uuidString.prefix(8).lowercased())
        let data = root.appendingPathComponent("data")
        try fm.createDirectory(at: root, withIntermediateDirectories: true)
        try String(getpid()).write(to: root.appendingPathComponent("owner.pid"), atomically: true, encoding: .utf8)
        let user = try runAsUser()
        if let user { try chown(root.path, user) }
        // Held until the server listens on it (PostgreSQL binds beside the reservation): initdb and the certificates
        // take seconds, long enough for a parallel test's server to be given a port that was merely free.
        let reservation = try ReservedPort()
        defer { reservation.release() }
        let port = reservation.port
        try run(
            asUser: user,
            [bin.appendingPathComponent("initdb").path, "-D", data.path, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"])
        var options =
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c listen_addresses=127.0.0.1 -p \(port) -k "
            + "\(root.path)"
        // TLS on (connections choose it with sslmode): a test CA, a certificate for localhost and 127.0.0.1, and a
        // client certificate for the role parsley_cert, which may log in by certificate only.
        let tls = root.appendingPathComponent("tls")
        try makeCertificates(in: tls, user: user)
        rootCertificate.withLock { $0 = tls.appendingPathComponent("ca.crt").path }
        options += " -c ssl=on -c ssl_cert_file=\(tls.path)/server.crt -c ssl_key_file=\(tls.path)/server.key -c ssl_ca_file=\(tls.path)/ca.crt"
        let hba = data.appendingPathComponent("pg_hba.conf")
        let rules = try String(contentsOf: hba, encoding: .utf8)
        try ("hostssl all \(certificateRole) all cert\n" + rules).write(to: hba, atomically: false, encoding: .utf8)
        let pgCtl = bin.appendingPathComponent("pg_ctl").path
        // Registered before starting, so a start that half-succeeds is still stopped.
        registerStop(command: wrap(asUser: user, [pgCtl, "stop", "-D", data.path, "-m", "immediate"]), remove: root.path)
        try run(
            asUser: user, [pgCtl, "start", "-w", "-t", "60", "-D", data.path, "-l", root.appendingPathComponent("server.log").path, "-o", options])
        let url = "postgres://postgres@127.0.0.1:\(port)/postgres"
        FileHandle.standardError.write(Data("PostgreSQL test cluster: \(url) (data in \(data.path))\n".utf8))
        return url
    }

    /// The test CA (PEM) of the throwaway cluster this process started, which signed its server certificate; nil
    /// before it started or when the tests use PARSLEY_TEST_POSTGRES_URL.
    static let rootCertificate = Mutex<String?>(nil)

    /// The role that logs in with the client certificate (`client.crt`, `client.key` next to the CA).
    static let certificateRole = "parsley_cert"

    /// A CA, a server certificate signed by it (names localhost and 127.0.0.1) and a client certificate for
    /// `certificateRole`, made with the openssl command (Debian's postgresql depends on it); the server key
    /// readable by the server's user only, as PostgreSQL demands.
    static func makeCertificates(in dir: URL, user: (name: String, uid: uid_t, gid: gid_t)?) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let p = dir.path
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: "\(p)/ext.cnf", atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try run(
            asUser: nil,
            ["openssl", "req", "-x509"] + ec + ["-keyout", "\(p)/ca.key", "-out", "\(p)/ca.crt", "-days", "3", "-subj", "/CN=parsley-test-ca"])
        try run(asUser: nil, ["openssl", "req"] + ec + ["-keyout", "\(p)/server.key", "-out", "\(p)/server.csr", "-subj", "/CN=localhost"])
        try run(
            asUser: nil,
            [
                "openssl", "x509", "-req", "-in", "\(p)/server.csr", "-CA", "\(p)/ca.crt", "-CAkey", "\(p)/ca.key", "-CAcreateserial",
                "-out", "\(p)/server.crt", "-days", "3", "-extfile", "\(p)/ext.cnf",
            ])
        try run(asUser: nil, ["openssl", "req"] + ec + ["-keyout", "\(p)/client.key", "-out", "\(p)/client.csr", "-subj", "/CN=\(certificateRole)"])
        try run(
            asUser: nil,
            [
                "openssl", "x509", "-req", "-in", "\(p)/client.csr", "-CA", "\(p)/ca.crt", "-CAkey", "\(p)/ca.key", "-CAcreateserial",
                "-out", "\(p)/client.crt", "-days", "3",
            ])
        if let user {
            for file in ["", "/server.key", "/server.crt"] { try chown(p + file, user) }
        }
        chmod("\(p)/server.key", 0o600)
    }

    /// The user to run initdb/pg_ctl as: nil when not root, else `postgres`.
    static func runAsUser() throws -> (name: String, uid: uid_t, gid: gid_t)? {
        guard geteuid() == 0 else { return nil }
        guard let pw = getpwnam("postgres") else {
            throw PostgresCluster.Unavailable(
                description:
                    "running as root and there is no `postgres` user to run initdb as (install Debian's postgresql or set PARSLEY_TEST_POSTGRES_URL)")
        }
        return ("postgres", pw.pointee.pw_uid, pw.pointee.pw_gid)
    }

    static func chown(_ path: String, _ user: (name: String, uid: uid_t, gid: gid_t)) throws {
        #if canImport(Glibc)
            let result = Glibc.chown(path, user.uid, user.gid)
        #else
            let result = Darwin.chown(path, user.uid, user.gid)
        #endif
        guard result == 0 else {
            throw PostgresCluster.Unavailable(description: "chown \(path) to \(user.name) failed: errno \(errno)")
        }
    }

    static func wrap(asUser user: (name: String, uid: uid_t, gid: gid_t)?, _ arguments: [String]) -> [String] {
        guard let user else { return arguments }
        for runuser in ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"] where FileManager.default.isExecutableFile(atPath: runuser) {
            return [runuser, "-u", user.name, "--"] + arguments
        }
        // No runuser: su with a shell command line.
        let line = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return ["/bin/su", user.name, "-s", "/bin/sh", "-c", line]
    }

    /// Runs a command (as `user` when given), throwing with its output when it fails. `ChildProcess` (posix_spawn +
    /// waitpid) rather than Foundation's Process, whose wait does not return while a daemon the command started
    /// (pg_ctl start) still holds an inherited descriptor.
    static func run(asUser user: (name: String, uid: uid_t, gid: gid_t)?, _ arguments: [String]) throws {
        let command = wrap(asUser: user, arguments)
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-pg-cmd-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let status = spawnAndWait(command, output: log.path)
        guard status == 0 else {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw PostgresCluster.Unavailable(
                description: "PostgreSQL test cluster: `\(command.joined(separator: " "))` failed (exit status \(status)): \(output)")
        }
    }

    /// Clusters left behind by test processes that died without running their exit hook.
    static func reapStale(in tmp: URL, bin: URL) {
        let fm = FileManager.default
        for entry in (try? fm.contentsOfDirectory(atPath: tmp.path)) ?? [] where entry.hasPrefix(prefix) {
            let root = tmp.appendingPathComponent(entry)
            guard let text = try? String(contentsOf: root.appendingPathComponent("owner.pid"), encoding: .utf8),
                let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { continue }
            if kill(owner, 0) == 0 || errno != ESRCH { continue }
            let user = try? runAsUser()
            let data = root.appendingPathComponent("data")
            if fm.fileExists(atPath: data.appendingPathComponent("postmaster.pid").path) {
                _ = spawnAndWait(wrap(asUser: user ?? nil, [bin.appendingPathComponent("pg_ctl").path, "stop", "-D", data.path, "-m", "immediate"]))
            }
            try? fm.removeItem(at: root)
        }
    }
}

// MARK: Stopping the cluster at exit

/// What the exit hook runs; set once, before the cluster starts.
nonisolated(unsafe) private var stopCommand: [String] = []
nonisolated(unsafe) private var stopRemove: String = ""

private func registerStop(command: [String], remove: String) {
    stopCommand = command
    stopRemove = remove
    atexit {
        _ = spawnAndWait(stopCommand)
        _ = spawnAndWait(["/bin/rm", "-rf", stopRemove])
    }
}

/// Runs a command to its end, blocking; stdin from /dev/null, stdout and stderr to `output` (default discarded).
/// Safe to call from an exit hook. Returns the exit status (0: success), or -1 when the command could not start.
@discardableResult
func spawnAndWait(_ arguments: [String], output: String = "/dev/null") -> Int32 {
    guard let first = arguments.first,
        let child = try? ChildProcess(first, Array(arguments.dropFirst()), output: URL(fileURLWithPath: output))
    else { return -1 }
    return child.waitUntilExit()
}

/// How many tests have a server or a database at once. Swift Testing starts every test together; on a small
/// machine (CI has 2 cores) hundreds of live servers then share two event loops and a request can wait longer
/// than the test client's 20 s read timeout. A test holds one slot from its first database to its end; nested
/// databases and servers of the same test (the same task tree) use the slot it holds. `PARSLEY_TEST_WIDTH`
/// overrides the width (default: 4 per core, at least 8).
enum TestSlots {
    static let width: Int = {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return Int(ProcessInfo.processInfo.environment["PARSLEY_TEST_WIDTH"] ?? "") ?? max(8, 4 * cores)
    }()
    static let semaphore = AsyncSemaphore(max(1, width))
    @TaskLocal static var held = false

    static func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        _ = StallProbe.started  // every server test passes here first: the probe starts with the first of them
        if held { return try await body() }
        await semaphore.wait()
        defer { Task { await semaphore.signal() } }
        return try await $held.withValue(true) { try await body() }
    }
}

/// A counting semaphore for async code.
actor AsyncSemaphore {
    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { available = count }

    func wait() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func signal() {
        if waiters.isEmpty {
            available += 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}
