import ArgumentParser
import Foundation
import ParsleyAdapters
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
        options.files.fallbackAdapter = try filesFallbackAdapter(values)
        options.files.preserveFileName = try values.bool("preserveFileName", default: false)
        let directory = values.string("filesDir") ?? dataDir + "/files"
        options.files.directory = directory
        for adapter in [options.files.adapter, options.files.fallbackAdapter] {
            if case .filesystem? = adapter { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
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
                case "allowedFileUrlDomains":
                    guard let list = value.arrayValue?.compactMap(\.stringValue), list.count == value.arrayValue?.count else {
                        throw Invalid(description: "\(name): allowedFileUrlDomains must be an array of strings")
                    }
                    upload.allowedFileUrlDomains = list
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
        if let (text, _) = values.part("fileUpload", "allowedFileUrlDomains") {
            if let list = try? JSONParser.parse(text).arrayValue?.compactMap(\.stringValue) {
                upload.allowedFileUrlDomains = list
            } else {
                upload.allowedFileUrlDomains = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
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
        options.files.encryptionKey = try filesEncryptionKey(values, adapter: options.files.adapter)
    }

    /// `encryptionKey` (Parse Server's top-level option), or `encryptionKey` in the options of
    /// `{"module": "@parse/fs-files-adapter", "options": {...}}` (where Parse's fs adapter reads it), which wins.
    /// Empty means none. The S3 adapter does not encrypt (Parse's does not either): the combination stops the start
    /// rather than store files in the clear under a key.
    static func filesEncryptionKey(_ values: OptionValues, adapter: FilesAdapter) throws -> String? {
        let top = values.raw("encryptionKey")
        var key = top?.text
        var name = top?.name ?? ""
        if let raw = values.raw("filesAdapter"), case .object(let o) = raw.json, case .object(let given)? = o["options"],
            let value = given["encryptionKey"], !value.isNull
        {
            guard let text = value.stringValue else { throw Invalid(description: "\(raw.name): options.encryptionKey must be a string") }
            key = text
            name = raw.name + ": options.encryptionKey"
        }
        guard let key, !key.isEmpty else { return nil }
        if case .custom = adapter {
            throw Invalid(
                description:
                    "\(name): the S3 files adapter does not encrypt files (Parse Server's S3 adapter does not either); "
                    + "use the bucket's server-side encryption and remove the key")
        }
        return key
    }

    /// `filesAdapter`: Parsley's two stores, also under the names of Parse Server's adapters that store files
    /// the same way (the file-system adapter; GridFS, which keeps them in the database), and an S3 bucket under the
    /// S3 adapter's module name with its options (`S3FileOptions`, also from `S3_*` and `AWS_*` variables). Any
    /// other adapter would put the files somewhere else than configured, so it stops the start.
    static func filesAdapter(_ values: OptionValues) throws -> FilesAdapter {
        guard let raw = values.raw("filesAdapter") else { return .filesystem }
        var name = raw.text
        var adapterOptions: [String: JSONValue] = [:]
        if case .object(let o) = raw.json {
            guard let module = o["module"]?.stringValue, o.keys.allSatisfy({ $0 == "module" || $0 == "options" }) else {
                throw Invalid(description: "\(raw.name): must be a module name or {\"module\": ..., \"options\": {...}}")
            }
            name = module
            if let given = o["options"], !given.isNull {
                guard case .object(let object) = given else { throw Invalid(description: "\(raw.name): options must be a JSON object") }
                adapterOptions = object
            }
        }
        if S3FileOptions.moduleNames.contains(name.lowercased()) {
            do {
                return .custom(S3FileStore(options: try S3FileOptions.parse(adapterOptions, environment: values.environment)))
            } catch {
                throw Invalid(description: "\(raw.name): \(error)")
            }
        }
        guard let adapter = builtInFilesAdapter(name) else {
            throw Invalid(
                description: "\(raw.name) must be fs (files in a folder), database or @parse/s3-files-adapter: other files adapters are not supported"
            )
        }
        adapterOptions["encryptionKey"] = nil  // read by filesEncryptionKey
        guard Harmless.isEmpty(.object(adapterOptions)) else {
            throw Invalid(description: "\(raw.name): fs and database take no options but encryptionKey")
        }
        return adapter
    }

    static func builtInFilesAdapter(_ name: String) -> FilesAdapter? {
        switch name.lowercased() {
        case "fs", "filesystem", "file", "files", "@parse/fs-files-adapter", "fsfilesadapter", "fsadapter": .filesystem
        case "database", "db", "sql", "gridfsbucketadapter", "gridfsadapter", "gridstoreadapter": .database
        default: nil
        }
    }

    /// `filesFallbackAdapter` (`fs` or `database`): the store files are being moved from (`parsley files migrate`).
    static func filesFallbackAdapter(_ values: OptionValues) throws -> FilesAdapter? {
        guard let raw = values.raw("filesFallbackAdapter") else { return nil }
        guard let adapter = builtInFilesAdapter(raw.text) else { throw Invalid(description: "\(raw.name) must be fs or database") }
        return adapter
    }
}
