import Foundation
public import Logging
import NIOConcurrencyHelpers
public import ParsleyStorage
import PostgresNIO
import Synchronization

/// PostgreSQL through postgres-nio's connections, in a pool of ours (`PostgresConnectionPool`). Reads lease any
/// connection; each write runs in its own transaction on one leased connection (PostgreSQL serialises conflicting
/// rows itself, so several server processes can share the database). Every statement is cancelled by the server after `statementTimeout`.
public final class PostgresDatabase: SQLDatabase, ChangeBroadcasting {
    public let dialect: any SQLDialect
    /// The `LISTEN`/`NOTIFY` channel of this app's processes (one per `collectionPrefix`).
    let channel: String
    let pool: PostgresConnectionPool
    let logger: Logger
    /// Set once `prepare()` has created the SQL functions.
    private let prepared = Atomic<Bool>(false)
    let connectionSettings: PostgresConnectionSettings
    /// Statements in flight and write transactions in flight (metrics); counted on every request, so atomics.
    private let busy = Atomic<Int>(0)
    private let writes = Atomic<Int>(0)
    /// What every executor shares: one reference instead of four fields, so an executor fits an existential's
    /// inline storage (no allocation per statement).
    private let shared: PostgresExecutor.Shared
    private let feed = NIOLockedValueBox<PostgresChangeFeed?>(nil)
    private let events = NIOLockedValueBox<PostgresChangeChannel?>(nil)
    /// Change events: `pg_notify` in the writing transaction, heard by every process (PostgresChangeChannel).
    public var changeChannel: any ChangeChannel {
        events.withLockedValue { $0 } ?? LocalChangeChannel()
    }
    /// Names of server-side prepared statements (nil: every statement runs unnamed, e.g. behind PgBouncer in
    /// transaction mode).
    let statementNames: PreparedStatementNames?
    public let pointReads: PointReadBatcher?

    /// Connects to `url` (`postgres://user:password@host:port/database`), creating Parsley's SQL functions. At most
    /// `poolSize` statement connections, opened on demand and closed after `idleTimeout` unused; a statement that
    /// finds none free within `leaseTimeout` fails. By default that is the statement timeout but at least
    /// `minimumLeaseTimeout`: a short statement timeout (set to cut slow queries) must not fail statements that only
    /// queue behind others under load, nor make the pool's sweep run every few milliseconds.
    public static func open(
        url: String, poolSize: Int = 20, statementTimeout: Duration = .seconds(15), preparedStatements: Bool = true,
        pointReadConcurrency: Int = defaultPointReadConcurrency, tablePrefix: String = "", idleTimeout: Duration = .seconds(60),
        leaseTimeout: Duration? = nil, logger: Logger
    ) async throws -> PostgresDatabase {
        let settings = try PostgresConnectionSettings(url: url)
        let listenerConfiguration = PostgresConnection.Configuration(
            host: settings.host, port: settings.port, username: settings.username, password: settings.password,
            database: settings.database, tls: try settings.tls.connectionTLS())
        // One connection first: a wrong host, password or certificate stops the start with the reason.
        try await probe(listenerConfiguration, settings: settings, logger: logger)
        var configuration = listenerConfiguration
        let ms = max(1, Int(statementTimeout.components.seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000))
        configuration.options.additionalStartupParameters = [("statement_timeout", "\(ms)"), ("application_name", "parsley")]
        let pool = PostgresConnectionPool(
            configuration: configuration, maximum: poolSize, idleTimeout: idleTimeout,
            leaseTimeout: leaseTimeout ?? max(statementTimeout, minimumLeaseTimeout),
            logger: logger)
        let db = PostgresDatabase(
            pool: pool, logger: logger, settings: settings,
            statementNames: preparedStatements ? PreparedStatementNames() : nil,
            pointReadConcurrency: pointReadConcurrency > 0 ? pointReadConcurrency : nil, tablePrefix: tablePrefix)
        let events = PostgresChangeChannel(channel: db.channel) { [weak db] id in
            guard let db else { return nil }
            let outbox = PostgresChangeChannel.outbox
            let rows = try await db.read {
                try await $0.query(SQLFragment(unsafeSQL: "SELECT payload FROM \"\(outbox)\" WHERE id = ?", [.integer(id)]))
            }
            return rows.first?.first?.text
        }
        db.events.withLockedValue { $0 = events }
        // Another process changed a schema (or the feed was lost): statements are prepared afresh.
        let names = db.statementNames
        let feed = PostgresChangeFeed(
            configuration: listenerConfiguration, logger: logger, channel: db.channel, events: events,
            heard: { topic in if topic == "*" || topic.hasPrefix("schema:") { names?.newGeneration() } }
        ) { [weak db] message in
            guard let db else { return }
            _ = try await db.write { executor in
                try await executor.query(SQLFragment(unsafeSQL: "SELECT pg_notify(?, ?)", [.text(db.channel), .text(message)]))
            }
        }
        db.feed.withLockedValue { $0 = feed }
        return db
    }

    /// The connection pool's idle sweep and the change listener, until cancelled.
    public func run() async {
        let feed = self.feed.withLockedValue { $0 }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.pool.run() }
            if let feed { group.addTask { await feed.listen() } }
        }
    }

    /// Creates Parsley's SQL functions and the change outbox (once per process).
    public func prepare() async throws {
        if prepared.load(ordering: .acquiring) { return }
        try await installFunctions()
        prepared.store(true, ordering: .releasing)
    }

    init(
        pool: PostgresConnectionPool, logger: Logger, settings: PostgresConnectionSettings,
        statementNames: PreparedStatementNames?, pointReadConcurrency: Int?, tablePrefix: String = ""
    ) {
        self.dialect = PostgresDialect(tablePrefix: tablePrefix)
        self.channel = PostgresChangeFeed.channel(tablePrefix: tablePrefix)
        self.pointReads = pointReadConcurrency.map(PointReadBatcher.init(concurrency:))
        self.statementNames = statementNames
        self.shared = PostgresExecutor.Shared(logger: logger, names: statementNames)
        self.pool = pool
        self.logger = logger
        self.connectionSettings = settings
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        if let current = Transaction.current { return try await body(current) }
        busy.add(1, ordering: .relaxed)
        defer { busy.subtract(1, ordering: .relaxed) }
        let shared = self.shared
        return try await mapErrors {
            try await pool.withConnection { connection in
                try await body(PostgresExecutor(connection: connection, shared: shared))
            }
        }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (Transaction) async throws -> T) async throws -> T {
        if let current = Transaction.current { return try await body(current) }
        return try await writing { executor in
            let transaction = Transaction(executor)
            try await executor.run("BEGIN")
            let result: T
            do {
                result = try await Transaction.$current.withValue(transaction) { try await body(transaction) }
            } catch {
                try? await executor.run("ROLLBACK")
                throw error
            }
            try await executor.run("COMMIT")
            transaction.committed()
            return result
        }
    }

    /// A statement alone is its own transaction in PostgreSQL (autocommit): no BEGIN and COMMIT round trips.
    @discardableResult public func writeStatement(_ statement: SQLFragment) async throws -> [SQLRow] {
        if let current = Transaction.current { return try await current.query(statement) }
        return try await writing { try await $0.query(statement) }
    }

    /// A write on a leased connection, counted in `poolUsage` while it runs.
    private func writing<T>(_ body: (PostgresExecutor) async throws -> T) async throws -> T {
        busy.add(1, ordering: .relaxed)
        writes.add(1, ordering: .relaxed)
        defer {
            busy.subtract(1, ordering: .relaxed)
            writes.subtract(1, ordering: .relaxed)
        }
        let shared = self.shared
        return try await mapErrors {
            try await pool.withConnection { connection in try await body(PostgresExecutor(connection: connection, shared: shared)) }
        }
    }

    public var poolUsage: (readersBusy: Int, readers: Int, writesQueued: Int) {
        (busy.load(ordering: .relaxed), pool.maximum, writes.load(ordering: .relaxed))
    }

    /// The shortest default wait for a free connection before a statement fails (`open`'s `leaseTimeout`).
    public static let minimumLeaseTimeout: Duration = .seconds(30)

    /// Lookups by id in flight before further ones are coalesced (`PointReadBatcher`): on two cores, 2 keep
    /// PostgreSQL busy while the rest share statements (the benchmark's get by id: 8.8–10.5k req/s uncoalesced,
    /// 14.4–15.5k coalesced; 4 and 8 were slower).
    public static let defaultPointReadConcurrency = 2

    public func broadcast(_ topic: String) async {
        await feed.withLockedValue { $0 }?.broadcast(topic)
    }

    public func changes() -> AsyncStream<String> {
        feed.withLockedValue { $0 }?.changes() ?? AsyncStream { $0.finish() }
    }

    /// Ends the change streams (the connections closed when `run()` returned).
    public func close() async throws {
        await feed.withLockedValue { $0 }?.stop()
    }

    static func probe(_ configuration: PostgresConnection.Configuration, settings: PostgresConnectionSettings, logger: Logger) async throws {
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try? await connection.close()
        } catch {
            let reason: String
            if let e = error as? PSQLError, e.code == .sslUnsupported {
                reason = "the server does not offer TLS (use sslmode=prefer or disable)"
            } else if let e = error as? PSQLError {
                reason = e.serverInfo?[.message] ?? e.underlying.map { "\($0)" } ?? "\(e.code)"
            } else {
                reason = "\(error)"
            }
            throw StoreError.database(
                "cannot connect to PostgreSQL at \(settings.host):\(settings.port) (sslmode \(settings.tls.mode.rawValue)): \(reason)")
        }
    }

    private func mapErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PSQLError {
            throw PostgresExecutor.storeError(error)
        }
    }

    /// Creates (or replaces) Parsley's SQL functions, serialised across server processes starting together.
    func installFunctions() async throws {
        _ = try await write { db in
            try await db.query(SQLFragment("SELECT pg_advisory_xact_lock(7238051)"))
            for statement in PostgresFunctions.statements { try await db.query(SQLFragment(unsafeSQL: statement)) }
            try await db.query(SQLFragment(unsafeSQL: PostgresChangeChannel.createOutbox))
            return true
        }
    }
}

/// Statements on one leased connection.
struct PostgresExecutor: SQLExecutor {
    final class Shared: Sendable {
        let dialect = PostgresDialect()
        let logger: Logger
        let names: PreparedStatementNames?
        init(logger: Logger, names: PreparedStatementNames?) {
            self.logger = logger
            self.names = names
        }
    }

    let connection: PostgresConnection
    let shared: Shared
    var logger: Logger { shared.logger }
    var names: PreparedStatementNames? { shared.names }

    func run(_ sql: String) async throws {
        _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
    }

    @discardableResult
    func query(_ fragment: SQLFragment) async throws -> [SQLRow] {
        try fragment.checkSize()
        let sql = shared.dialect.render(fragment)
        let bindings = PostgresValues.bindings(fragment.binds)
        do {
            if let names, let name = names.name(sql: sql, binds: fragment.binds) {
                do {
                    return try await NamedStatement.$current.withValue((name, sql)) {
                        try await Self.collect(connection.execute(NamedStatement(bindings: bindings), logger: logger))
                    }
                } catch let error as PSQLError where Self.staleStatement(error) {
                    // Prepared against columns that changed since (another process's schema change not heard of yet):
                    // new names from now on, and this once unnamed.
                    names.newGeneration()
                }
            }
            let rows = try await Self.collect(connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger))
            if let names, PreparedStatementNames.changesSchema(sql) { names.newGeneration() }
            return rows
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    static func collect<Rows: AsyncSequence>(_ sequence: Rows) async throws -> [SQLRow] where Rows.Element == PostgresRow {
        var rows: [SQLRow] = []
        for try await row in sequence {
            var out: SQLRow = []
            out.reserveCapacity(row.count)
            for cell in row { out.append(PostgresValues.value(cell)) }
            rows.append(out)
        }
        return rows
    }

    /// cached plan must not change result type; prepared statement missing; a column or table that the statement
    /// was prepared against is gone.
    static func staleStatement(_ error: PSQLError) -> Bool {
        ["0A000", "26000", "42703", "42P01"].contains(error.serverInfo?[.sqlState] ?? "")
    }

    /// SQLSTATEs as `StoreError` cases: 23505 unique_violation (with the index's name, which PostgreSQL reports as
    /// the constraint's), 2201B invalid_regular_expression, 57014 query_canceled (the statement timeout) and 54001
    /// statement_too_complex.
    static func storeError(_ error: PSQLError) -> StoreError {
        let state = error.serverInfo?[.sqlState] ?? ""
        let message = error.serverInfo?[.message] ?? "\(error.code)"
        switch state {
        case "23505": return .uniqueViolation(index: error.serverInfo?[.constraintName] ?? message)
        case "57014": return .timeout
        case "2201B": return .invalidRegex
        case "54001": return .tooComplex
        default: return .database(state.isEmpty ? message : "\(state): \(message)")
        }
    }
}

/// The parts of a `postgres://` URL.
public struct PostgresConnectionSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String?
    /// From the query: `sslmode`, `ssl`, `sslrootcert`, `sslcert`, `sslkey` (PostgresTLS.swift).
    public var tls: PostgresTLSSettings

    public init(url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql", let host = components.host, !host.isEmpty
        else {
            throw StoreError.database("not a PostgreSQL URL (postgres://user:password@host:port/database)")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        self.password = components.password.flatMap { $0.removingPercentEncoding }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = path.isEmpty ? nil : path
        self.tls = try PostgresTLSSettings(query: components.queryItems ?? [])
    }

    /// Whether a database URI names PostgreSQL (anything else is a SQLite path).
    public static func isPostgres(_ uri: String) -> Bool {
        uri.hasPrefix("postgres://") || uri.hasPrefix("postgresql://")
    }
}
