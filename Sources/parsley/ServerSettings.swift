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
    @Option(help: "Database URI, sqlite:<path> (env PARSE_SERVER_DATABASE_URI, default sqlite:<data>/parsley.sqlite).") var databaseUri: String?
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
