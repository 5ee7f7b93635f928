import ArgumentParser
import Foundation
import ParsleyDomain

/// Every setting of `parsley serve`: a flag, or else the environment variable Parse Server users know, or else
/// the default. One table, so the README table and the code cannot drift.
struct ServerSettings: ParsableArguments {
    @Option(help: "Application id (env PARSE_SERVER_APPLICATION_ID, default parsley).") var appId: String?
    @Option(help: "Master key (env PARSE_SERVER_MASTER_KEY; generated into the data folder when absent).") var masterKey: String?
    @Option(help: "REST API key; when set it is required (env PARSE_SERVER_REST_API_KEY).") var restApiKey: String?
    @Option(help: "Client key (env PARSE_SERVER_CLIENT_KEY).") var clientKey: String?
    @Option(help: "JavaScript key (env PARSE_SERVER_JAVASCRIPT_KEY).") var javascriptKey: String?
    @Option(help: "Database URI: sqlite:<path> or postgres://user:password@host:port/database (env PARSE_SERVER_DATABASE_URI, default sqlite:<data>/parsley.sqlite).")
    var databaseUri: String?
    @Option(help: "PostgreSQL connections per server process (env PARSLEY_DATABASE_POOL_SIZE, default 20).") var databasePoolSize: Int?
    @Option(help: "Milliseconds after which a database statement is cancelled (env PARSLEY_STATEMENT_TIMEOUT_MS, default 15000).")
    var statementTimeoutMs: Int?
    @Option(help: "Named server-side prepared statements on PostgreSQL; false behind PgBouncer in transaction mode (env PARSLEY_POSTGRES_PREPARED_STATEMENTS, default true).")
    var postgresPreparedStatements: Bool?
    @Option(help: "Lookups of one object by id that run at once on PostgreSQL before further ones are coalesced into shared statements; 0 never coalesces (env PARSLEY_POSTGRES_POINT_READ_CONCURRENCY, default 2).")
    var postgresPointReadConcurrency: Int?
    @Option(help: "Data folder (env PARSLEY_DATA_DIR, default ./parsley-data).") var dataDir: String?
    @Option(help: "Listen address (env PARSE_SERVER_HOST, default 0.0.0.0).") var host: String?
    @Option(help: "Port (env PORT or PARSE_SERVER_PORT, default 1337).") var port: Int?
    @Option(help: "Mount path (env PARSE_SERVER_MOUNT_PATH, default /parse).") var mountPath: String?
    @Option(help: "Public server URL for links (env PARSE_SERVER_PUBLIC_SERVER_URL).") var publicServerUrl: String?
    @Option(help: "Maximum request size such as 20mb (env PARSE_SERVER_MAX_UPLOAD_SIZE, default 20mb).") var maxUploadSize: String?
    @Option(help: "Let clients without the master key create classes (env PARSE_SERVER_ALLOW_CLIENT_CLASS_CREATION, default false).")
    var allowClientClassCreation: Bool?
    @Option(help: "Default query limit (env PARSE_SERVER_DEFAULT_LIMIT, default 100).") var defaultLimit: Int?
    @Option(help: "Maximum query limit (env PARSE_SERVER_MAX_LIMIT, default none).") var maxLimit: Int?
    @Option(help: "Maximum requests in one /batch (env PARSE_SERVER_BATCH_LIMIT, default 1000).") var batchLimit: Int?
    @Option(help: "Folder of uploaded files (env PARSLEY_FILES_DIR, default <data>/files).") var filesDir: String?
    @Option(help: "Where files are stored: fs or database (env PARSLEY_FILES_ADAPTER, default fs).") var filesAdapter: String?
    @Option(help: "Seconds an upload may stall (no body bytes arriving) before it is answered 130 and dropped (env PARSLEY_UPLOAD_STALL_TIMEOUT, default 30).")
    var uploadStallTimeout: Int?
    @Option(help: "JSON config file in Parse Server's format; flags and env win over it (env PARSE_SERVER_CONFIG).") var config: String?
    @Option(help: "Log format: text, logfmt or json (env PARSLEY_LOG_FORMAT, default text).") var logFormat: String?
    @Option(help: "Port of the Prometheus /metrics listener (env PARSLEY_METRICS_PORT, default off).") var metricsPort: Int?
    @Option(help: "Address of the metrics listener (env PARSLEY_METRICS_HOST, default 127.0.0.1).") var metricsHost: String?
    @Option(help: "Rate limits, Parse Server's JSON (env PARSE_SERVER_RATE_LIMIT).") var rateLimit: String?
    @Option(help: "Seconds in-flight requests get to finish on SIGTERM (env PARSLEY_SHUTDOWN_TIMEOUT, default 30).") var shutdownTimeout: Int?

    static func env(_ names: String...) -> String? {
        for n in names { if let v = ProcessInfo.processInfo.environment[n], !v.isEmpty { return v } }
        return nil
    }

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    static func integer(_ flag: Int?, _ env: String, default value: Int?) throws -> Int? {
        if let flag { return flag }
        guard let text = Self.env(env) else { return value }
        guard let v = Int(text), v >= 0 else { throw Invalid(description: "\(env) must be a whole number, got '\(text)'") }
        return v
    }

    static func bool(_ flag: Bool?, _ env: String, default value: Bool) throws -> Bool {
        if let flag { return flag }
        guard let text = Self.env(env)?.lowercased() else { return value }
        switch text {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw Invalid(description: "\(env) must be true or false, got '\(text)'")
        }
    }

    /// `20mb`, `512kb`, `1gb` or a byte count.
    static func byteSize(_ text: String) throws -> Int {
        let lower = text.lowercased().trimmingCharacters(in: .whitespaces)
        let units: [(String, Int)] = [("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10), ("b", 1)]
        for (suffix, factor) in units where lower.hasSuffix(suffix) {
            if let n = Double(lower.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), n > 0 { return Int(n * Double(factor)) }
        }
        if let n = Int(lower), n > 0 { return n }
        throw Invalid(description: "max upload size must look like 20mb, got '\(text)'")
    }
}

extension ServerSettings {
    /// Files: the store (`fs` under `<data>/files`, or `database`) and Parse Server's `fileUpload` rules, from
    /// `PARSE_SERVER_FILE_UPLOAD_OPTIONS` (JSON) and then the single `PARSE_SERVER_FILE_UPLOAD_*` variables.
    func applyFileSettings(to options: inout ParseServerOptions, dataDir: String) throws {
        switch (filesAdapter ?? Self.env("PARSLEY_FILES_ADAPTER") ?? "fs").lowercased() {
        case "fs", "filesystem", "file", "files": options.filesAdapter = .filesystem
        case "database", "db", "sql": options.filesAdapter = .database
        case let other: throw Invalid(description: "PARSLEY_FILES_ADAPTER must be fs or database, got '\(other)'")
        }
        let directory = filesDir ?? Self.env("PARSLEY_FILES_DIR") ?? dataDir + "/files"
        options.filesDirectory = directory
        if case .filesystem = options.filesAdapter {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        var upload = options.fileUpload
        if let text = Self.env("PARSE_SERVER_FILE_UPLOAD_OPTIONS") {
            guard let json = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                throw Invalid(description: "PARSE_SERVER_FILE_UPLOAD_OPTIONS must be a JSON object, got '\(text)'")
            }
            if let v = json["enableForPublic"] as? Bool { upload.enableForPublic = v }
            if let v = json["enableForAnonymousUser"] as? Bool { upload.enableForAnonymousUser = v }
            if let v = json["enableForAuthenticatedUser"] as? Bool { upload.enableForAuthenticatedUser = v }
            if let v = json["fileExtensions"] as? [String] { upload.fileExtensions = v }
        }
        upload.enableForPublic = try Self.bool(nil, "PARSE_SERVER_FILE_UPLOAD_ENABLE_FOR_PUBLIC", default: upload.enableForPublic)
        upload.enableForAnonymousUser = try Self.bool(nil, "PARSE_SERVER_FILE_UPLOAD_ENABLE_FOR_ANONYMOUS_USER", default: upload.enableForAnonymousUser)
        upload.enableForAuthenticatedUser = try Self.bool(
            nil, "PARSE_SERVER_FILE_UPLOAD_ENABLE_FOR_AUTHENTICATED_USER", default: upload.enableForAuthenticatedUser)
        if let text = Self.env("PARSE_SERVER_FILE_UPLOAD_FILE_EXTENSIONS") {
            if let list = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String] {
                upload.fileExtensions = list
            } else {
                upload.fileExtensions = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
        }
        for pattern in upload.fileExtensions where pattern != "*" {
            guard (try? Regex(pattern)) != nil else {
                throw Invalid(description: "PARSE_SERVER_FILE_UPLOAD_FILE_EXTENSIONS: '\(pattern)' is not a regular expression")
            }
        }
        options.fileUpload = upload
        let stall = try Self.integer(uploadStallTimeout, "PARSLEY_UPLOAD_STALL_TIMEOUT", default: 30) ?? 30
        guard stall >= 1 else { throw Invalid(description: "PARSLEY_UPLOAD_STALL_TIMEOUT must be at least 1 second") }
        options.uploadStallTimeout = .seconds(stall)
    }
}
