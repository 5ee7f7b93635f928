import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ParsleyAdapters
import ParsleyDomain
import ParsleyHTTP
import ParsleyPush
import ParsleySQLite
import ParsleyStorage
import Synchronization

/// `parsley serve` (the default): runs the Parse API on the embedded SQLite database or on PostgreSQL.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the Parse API server (default).", discussion: OptionTable.helpText)

    @Argument(help: "A Parse Server config.json, as for parse-server (same as --config).") var configFile: String?
    @OptionGroup var settings: ServerSettings

    func run() async throws {
        do {
            let values = try settings.values(configFile: configFile)
            let logger = try ServerSettings.makeLogger(values)
            for warning in try values.checkUnsupported() { logger.warning("\(warning)") }
            try await serve(ServeSetup(values, logger: logger), logger: logger)
        } catch let invalid as ServerSettings.Invalid {
            // Messages name options, never their values; the redactor also hides any secret registered by then.
            FileHandle.standardError.write(Data("parsley: \(LogRedactor.shared.redact(invalid.description))\n".utf8))
            throw ExitCode(2)
        }
    }

    func serve(_ s: ServeSetup, logger: Logger) async throws {
        var s = s
        if let lines = s.logBuffer { LogRing.shared.resize(lines) }
        // Push providers own HTTP clients: made here, closed when the server has stopped.
        let providers = try await s.push?.makeProviders(logger: Logger(label: "parsley.push")) ?? []
        for provider in providers { logger.info("push: \(provider.name) through \(provider.summary)") }
        s.options.push.providers = providers
        let outcome: Result<Void, any Error>
        do { outcome = .success(try await serveWithProviders(s, logger: logger)) } catch { outcome = .failure(error) }
        for provider in providers { try? await provider.shutdown() }
        try outcome.get()
    }

    private func serveWithProviders(_ s: ServeSetup, logger: Logger) async throws {
        let (database, path) = try await Self.openDatabase(uri: s.databaseURI, storage: s.storage, logger: logger)
        // The services touch the database only once its service runs: they are prepared (the schema table, system
        // classes, the file store) before the HTTP server starts listening.
        let api = ParseAPI(
            services: ParseServices(options: s.options, database: database, cloud: Parsley.registered.withLock { $0 }, adapters: .standard),
            rateLimits: s.rateLimits)
        let operations = ServerSettings.operationsOptions(
            metrics: s.metricsPort != nil, database: database, changes: api.changes, cloud: api.services.cloud,
            liveQuery: api.services.liveQuery, pushProviders: s.options.push.providers)
        let shownHost = s.host == "0.0.0.0" ? "localhost" : s.host
        let (appId, mountPath, masterKey) = (s.options.applicationId, s.options.mountPath, s.options.masterKey)
        // Said once the socket is bound, with the port it got (PORT=0 lets the system choose one).
        var app = ParsleyApplication.application(api: api, host: s.host, port: s.port, logger: logger, operations: operations) { bound in
            logger.info("parsley serving http://\(shownHost):\(bound)\(mountPath) (app id \(appId), database \(path))")
        }
        app.beforeServerStarts { try await api.services.prepare() }
        if s.options.security.enableCheckLog {
            for failure in SecurityRouter.failures(s.options) { logger.warning("security check failed: \(failure)") }
        }
        if s.masterKeyGenerated {
            // Written straight to the file descriptor: a pipe would otherwise buffer it past a crash.
            FileHandle.standardOutput.write(
                Data(
                    """
                    Generated a master key and saved it in \(s.dataDir)/master.key (shown only this once):
                      \(masterKey)
                    Try:
                      curl -X POST -H 'X-Parse-Application-Id: \(appId)' -H 'X-Parse-Master-Key: \(masterKey)' \\
                           -H 'Content-Type: application/json' -d '{"score":1337}' http://\(shownHost):\(s.port)\(mountPath)/classes/GameScore

                    """.utf8))
        }
        // SIGTERM/SIGINT: stop accepting, let requests in flight finish, then close the database (queued writes commit).
        try await ServerSettings.runServices(
            database: database, app: app, metrics: operations.metrics.flatMap { m in s.metricsPort.map { (m, $0) } },
            metricsHost: s.metricsHost, shutdownTimeout: s.shutdownTimeout, logger: logger)
        logger.info("parsley stopped")
    }
}

/// Everything `parsley serve` needs before it opens the database, read and checked from `OptionValues` (a
/// wrong value stops the start before anything listens).
struct ServeSetup {
    var options: ParseServerOptions
    var masterKeyGenerated: Bool
    var dataDir: String
    var host: String
    var port: Int
    var databaseURI: String
    var storage: StorageSettings
    var rateLimits: [RateLimitRule]
    var metricsPort: Int?
    var metricsHost: String
    var shutdownTimeout: Int
    /// Parse Server's `push` option, checked (its providers are made when the server starts).
    var push: PushConfiguration?
    /// Recent log lines kept for `/scriptlog` (nil: the default).
    var logBuffer: Int?

    init(_ values: OptionValues, logger: Logger) throws {
        typealias Invalid = ServerSettings.Invalid
        dataDir = values.string("dataDir") ?? "./parsley-data"
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let appId = values.string("appId") ?? "parsley"
        port = try values.integer("port", default: 1337) ?? 1337
        guard port <= 65_535 else { throw Invalid(description: "PORT must be 0 to 65535") }
        host = values.string("host") ?? "0.0.0.0"
        let mountPath = values.string("mountPath") ?? "/parse"
        let (masterKey, generated) = try MasterKeyFile.resolve(given: values.string("masterKey"), dataDir: dataDir)
        masterKeyGenerated = generated
        let maxUpload = try ServerSettings.byteSize(values.string("maxUploadSize") ?? "20mb")
        options = ParseServerOptions(
            applicationId: appId,
            masterKey: masterKey,
            restAPIKey: values.string("restAPIKey"),
            clientKey: values.string("clientKey"),
            javascriptKey: values.string("javascriptKey"),
            dotNetKey: values.string("dotNetKey"),
            mountPath: mountPath,
            publicServerURL: values.string("publicServerURL"),
            defaultLimit: try values.integer("defaultLimit", default: 100) ?? 100,
            maxLimit: try values.integer("maxLimit", default: nil),
            allowClientClassCreation: try values.bool("allowClientClassCreation", default: false),
            maxBatchSize: try values.integer("batchLimit", default: 1000) ?? 1000,
            maxRequestBytes: maxUpload
        )
        try ServerSettings.applyUserSettings(to: &options, values: values, logger: logger)
        try ServerSettings.applyPagesSettings(to: &options, values: values, logger: logger)
        try ServerSettings.applyDatabaseOptions(to: &options, values: values, logger: logger)
        try ServerSettings.applyRequestSettings(to: &options, values: values)
        try ServerSettings.applyCompatibilitySettings(to: &options, values: values)
        try ServerSettings.applyLiveQuerySettings(to: &options, values: values)
        try ServerSettings.applyAppSettings(to: &options, values: values, logger: logger)
        options.estimatedCountThreshold = try values.integer("estimatedCountThreshold", default: 100_000) ?? 100_000
        if options.estimatedCountThreshold < 0 { throw Invalid(description: "PARSLEY_ESTIMATED_COUNT_THRESHOLD must be 0 (always count) or more") }
        options.readOnlyMasterKey = values.string("readOnlyMasterKey")
        if let key = options.readOnlyMasterKey {
            guard key.count >= 8, key != options.masterKey else {
                throw Invalid(description: "PARSE_SERVER_READ_ONLY_MASTER_KEY must be at least 8 characters and differ from the master key")
            }
        }
        options.dashboard.enabled = try values.bool("dashboard", default: true)
        options.dashboard.adminRole = values.string("dashboardAdminRole")
        try ServerSettings.applyFileSettings(to: &options, dataDir: dataDir, values: values)
        ServerSettings.registerSecrets(options, values: values)
        databaseURI = values.string("databaseURI") ?? "sqlite:\(dataDir)/parsley.sqlite"
        storage = try ServerSettings.storageSettings(values)
        rateLimits = try ServerSettings.rateLimits(values)
        (metricsPort, metricsHost) = try ServerSettings.metricsListener(values)
        shutdownTimeout = try values.integer("shutdownTimeout", default: 30) ?? 30
        _ = try ServerSettings.logSettings(values)
        push = try ServerSettings.pushConfiguration(values, logger: logger)
        logBuffer = try values.integer("logBuffer", default: nil)
        if let lines = logBuffer, lines < 1 { throw Invalid(description: "PARSLEY_LOG_BUFFER must be at least 1") }
    }
}

/// The master key when none is configured: generated once (32 random hex characters), kept in the data
/// folder with owner-only permissions, and reused on later starts.
enum MasterKeyFile {
    static func resolve(given: String?, dataDir: String) throws -> (String, Bool) {
        if let given {
            guard given.count >= 8 else { throw ServerSettings.Invalid(description: "PARSE_SERVER_MASTER_KEY must be at least 8 characters") }
            return (given, false)
        }
        let path = dataDir + "/master.key"
        if let existing = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), existing.count >= 8 {
            return (existing, false)
        }
        var rng = SystemRandomNumberGenerator()
        let key = (0..<32).map { _ in String(rng.next(upperBound: UInt8(16)), radix: 16) }.joined()
        _ = FileManager.default.createFile(atPath: path, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: 0o600])
        return (key, true)
    }
}
