import ArgumentParser
import Foundation
import ParsleyCore
import ParsleyDomain

/// The settings of `parsley serve` (and of export/import, which find the database like serve). Every setting is
/// a row of `OptionTable`: a flag (`--appId` or `--app-id`), else its environment variable, else the config
/// file's key, else the default. The flags reach this struct through `OptionFlags.rewrite`.
struct ServerSettings: ParsableArguments {
    @Option(
        help:
            "JSON config file in Parse Server's format; flags and env win over it (env PARSE_SERVER_CONFIG). Every setting of serve is also a flag here (--appId, --database-uri, …: see parsley serve --help)."
    )
    var config: String?
    @Option(name: .customLong("parse-option"), help: .hidden) var parseOptions: [String] = []

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// Flags, the environment and the config file (`--config`, else `configFile`, else `PARSE_SERVER_CONFIG`).
    func values(configFile: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> OptionValues {
        let flags = try OptionFlags.parse(parseOptions)
        let path = config ?? configFile ?? environment["PARSE_SERVER_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        let (file, unknown) = try path.map(ConfigFile.read(path:)) ?? ([:], [])
        return OptionValues(flags: flags, environment: environment, file: file, unknownFileKeys: unknown)
    }

    /// The settings of command-line arguments (after `OptionFlags.rewrite`).
    static func parsing(_ arguments: [String]) throws -> ServerSettings { try parse(arguments) }

    /// `20mb`, `512kb`, `1gb` or a byte count.
    static func byteSize(_ text: String, name: String = OptionTable.spec("maxUploadSize").shownName) throws -> Int {
        let lower = text.lowercased().trimmingCharacters(in: .whitespaces)
        let units: [(String, Int)] = [("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10), ("b", 1)]
        for (suffix, factor) in units where lower.hasSuffix(suffix) {
            if let n = Double(lower.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), n > 0 { return Int(n * Double(factor)) }
        }
        if let n = Int(lower), n > 0 { return n }
        throw Invalid(description: "\(name) must be a size such as 20mb, 512kb, 1gb or a number of bytes")
    }
}

extension ServerSettings {
    /// Files: the store (`fs` under `<data>/files`, or `database`) and Parse Server's `fileUpload` rules, from
    /// its JSON and then the single `PARSE_SERVER_FILE_UPLOAD_*` variables.
    static func applyFileSettings(to options: inout ParseServerOptions, dataDir: String, values: OptionValues) throws {
        options.files.adapter = try filesAdapter(values)
        let directory = values.string("filesDir") ?? dataDir + "/files"
        options.files.directory = directory
        if case .filesystem = options.files.adapter {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        var upload = options.files.upload
        if let (json, name) = try values.object("fileUpload") {
            for (key, value) in json {
                switch key {
                case "enableForPublic", "enableForAnonymousUser", "enableForAuthenticatedUser":
                    guard let b = value.boolValue else { throw Invalid(description: "\(name): \(key) must be true or false") }
                    if key == "enableForPublic" { upload.enableForPublic = b }
                    if key == "enableForAnonymousUser" { upload.enableForAnonymousUser = b }
                    if key == "enableForAuthenticatedUser" { upload.enableForAuthenticatedUser = b }
                case "fileExtensions":
                    guard let list = value.arrayValue?.compactMap(\.stringValue), list.count == value.arrayValue?.count else {
                        throw Invalid(description: "\(name): fileExtensions must be an array of strings")
                    }
                    upload.fileExtensions = list
                default: continue
                }
            }
        }
        if let (text, name) = values.part("fileUpload", "enableForPublic") { upload.enableForPublic = try OptionValues.bool(text, name: name) }
        if let (text, name) = values.part("fileUpload", "enableForAnonymousUser") {
            upload.enableForAnonymousUser = try OptionValues.bool(text, name: name)
        }
        if let (text, name) = values.part("fileUpload", "enableForAuthenticatedUser") {
            upload.enableForAuthenticatedUser = try OptionValues.bool(text, name: name)
        }
        if let (text, _) = values.part("fileUpload", "fileExtensions") {
            if let list = try? JSONParser.parse(text).arrayValue?.compactMap(\.stringValue) {
                upload.fileExtensions = list
            } else {
                upload.fileExtensions = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
        }
        for (i, pattern) in upload.fileExtensions.enumerated() where pattern != "*" {
            guard (try? Regex(pattern)) != nil else {
                throw Invalid(
                    description: "fileUpload.fileExtensions (PARSE_SERVER_FILE_UPLOAD_FILE_EXTENSIONS): entry \(i + 1) is not a regular expression")
            }
        }
        options.files.upload = upload
        let stall = try values.integer("uploadStallTimeout", default: 30) ?? 30
        guard stall >= 1 else { throw Invalid(description: "PARSLEY_UPLOAD_STALL_TIMEOUT must be at least 1 second") }
        options.files.uploadStallTimeout = .seconds(stall)
    }

    /// `filesAdapter`: Parsley's two stores, also under the names of Parse Server's adapters that store files
    /// the same way (the file-system adapter; GridFS, which keeps them in the database). Anything else (S3, GCS,
    /// an adapter with options) would put the files somewhere else than configured, so it stops the start.
    static func filesAdapter(_ values: OptionValues) throws -> FilesAdapter {
        guard let raw = values.raw("filesAdapter") else { return .filesystem }
        var name = raw.text
        if case .object(let o) = raw.json {
            guard let module = o["module"]?.stringValue, o.keys.allSatisfy({ $0 == "module" || $0 == "options" }),
                Harmless.isEmpty(o["options"] ?? .null)
            else {
                throw Invalid(
                    description:
                        "\(raw.name): only fs or database (a module without options) are supported; other files adapters (S3, GCS, ...) are not")
            }
            name = module
        }
        switch name.lowercased() {
        case "fs", "filesystem", "file", "files", "@parse/fs-files-adapter", "fsfilesadapter", "fsadapter": return .filesystem
        case "database", "db", "sql", "gridfsbucketadapter", "gridfsadapter", "gridstoreadapter": return .database
        default:
            throw Invalid(description: "\(raw.name) must be fs (files in a folder) or database: other files adapters are not supported")
        }
    }
}
