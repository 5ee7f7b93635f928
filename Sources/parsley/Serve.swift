import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ParsleyDomain
import ParsleyHTTP
import ParsleySQLite
import ParsleyStorage

/// `parsley serve` (the default): runs the Parse API on the embedded SQLite database or on PostgreSQL.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the Parse API server (default).")

    @OptionGroup var settings: ServerSettings

    func run() async throws {
        do {
            // A config file only fills variables that are not set, so flags and the environment win over it.
            let unknown = try (settings.config ?? ServerSettings.env("PARSE_SERVER_CONFIG")).map(ConfigFile.apply(path:)) ?? []
            let logger = try settings.makeLogger()
            if !unknown.isEmpty { logger.warning("config file: ignoring unknown options \(unknown.joined(separator: ", "))") }
            try await serve(logger: logger)
        } catch let invalid as ServerSettings.Invalid {
            FileHandle.standardError.write(Data("parsley: \(invalid.description)\n".utf8))
            throw ExitCode(2)
        }
    }

    func serve(logger: Logger) async throws {
        let s = settings
        let dataDir = s.dataDir ?? ServerSettings.env("PARSLEY_DATA_DIR") ?? "./parsley-data"
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let appId = s.appId ?? ServerSettings.env("PARSE_SERVER_APPLICATION_ID", "APP_ID") ?? "parsley"
        let port = try ServerSettings.integer(s.port, "PORT", default: nil) ?? ServerSettings.integer(nil, "PARSE_SERVER_PORT", default: 1337) ?? 1337
        let host = s.host ?? ServerSettings.env("PARSE_SERVER_HOST") ?? "0.0.0.0"
        let mountPath = s.mountPath ?? ServerSettings.env("PARSE_SERVER_MOUNT_PATH") ?? "/parse"
        let (masterKey, generated) = try MasterKeyFile.resolve(
            given: s.masterKey ?? ServerSettings.env("PARSE_SERVER_MASTER_KEY", "MASTER_KEY"), dataDir: dataDir)
        let maxUpload = try ServerSettings.byteSize(s.maxUploadSize ?? ServerSettings.env("PARSE_SERVER_MAX_UPLOAD_SIZE") ?? "20mb")
        var options = ParseServerOptions(
            applicationId: appId,
            masterKey: masterKey,
            restAPIKey: s.restApiKey ?? ServerSettings.env("PARSE_SERVER_REST_API_KEY"),
            clientKey: s.clientKey ?? ServerSettings.env("PARSE_SERVER_CLIENT_KEY"),
            javascriptKey: s.javascriptKey ?? ServerSettings.env("PARSE_SERVER_JAVASCRIPT_KEY"),
            dotNetKey: ServerSettings.env("PARSE_SERVER_DOT_NET_KEY"),
            mountPath: mountPath,
            publicServerURL: s.publicServerUrl ?? ServerSettings.env("PARSE_SERVER_PUBLIC_SERVER_URL", "PARSE_PUBLIC_SERVER_URL"),
            defaultLimit: try ServerSettings.integer(s.defaultLimit, "PARSE_SERVER_DEFAULT_LIMIT", default: 100) ?? 100,
            maxLimit: try ServerSettings.integer(s.maxLimit, "PARSE_SERVER_MAX_LIMIT", default: nil),
            allowClientClassCreation: try ServerSettings.bool(s.allowClientClassCreation, "PARSE_SERVER_ALLOW_CLIENT_CLASS_CREATION", default: false),
            maxBatchSize: try ServerSettings.integer(s.batchLimit, "PARSE_SERVER_BATCH_LIMIT", default: 1000) ?? 1000,
            maxRequestBytes: maxUpload
        )
        try ServerSettings.applyUserSettings(to: &options, logger: logger)
        try s.applyFileSettings(to: &options, dataDir: dataDir)
        ServerSettings.registerSecrets(options)
        let uri = s.databaseUri ?? ServerSettings.env("PARSE_SERVER_DATABASE_URI", "DATABASE_URI") ?? "sqlite:\(dataDir)/parsley.sqlite"
        let storage = try s.storageSettings()
        let (database, path) = try await Self.openDatabase(uri: uri, storage: storage, logger: logger)
        let (operations, metricsPort) = try s.operationsOptions(database: database)
        let api = try await ParsleyServer.makeAPI(options: options, database: database)
        let shownHost = host == "0.0.0.0" ? "localhost" : host
        // Said once the socket is bound, with the port it got (PORT=0 lets the system choose one).
        let app = ParsleyServer.application(api: api, host: host, port: port, logger: logger, operations: operations) { bound in
            logger.info("parsley serving http://\(shownHost):\(bound)\(mountPath) (app id \(appId), database \(path))")
        }
        if generated {
            // Written straight to the file descriptor: a pipe would otherwise buffer it past a crash.
            FileHandle.standardOutput.write(Data(
                """
                Generated a master key and saved it in \(dataDir)/master.key (shown only this once):
                  \(masterKey)
                Try:
                  curl -X POST -H 'X-Parse-Application-Id: \(appId)' -H 'X-Parse-Master-Key: \(masterKey)' \\
                       -H 'Content-Type: application/json' -d '{"score":1337}' http://\(shownHost):\(port)\(mountPath)/classes/GameScore

                """.utf8))
        }
        // SIGTERM/SIGINT: stop accepting, let requests in flight finish, then close the database (queued writes commit).
        do {
            try await s.runServices(app, metrics: operations.metrics.flatMap { m in metricsPort.map { (m, $0) } }, logger: logger)
        } catch {
            try? await database.close()
            throw error
        }
        try await database.close()
        logger.info("parsley stopped")
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
