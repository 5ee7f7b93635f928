import ArgumentParser
import Foundation
import ParsleyAdapters
import ParsleyDomain
import ParsleyStorage

/// `parsley files migrate`: moves the files of one adapter into another while servers keep serving them;
/// `parsley files rotate-key`: re-encrypts files at rest under a new `encryptionKey`.
struct FilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "files", abstract: "Manage stored files.", subcommands: [FilesMigrate.self, FilesRotateKey.self])
}

/// Parse Server's `filesController.adapter.rotateEncryptionKey({oldKey, fileNames})`.
struct FilesRotateKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-key",
        abstract: "Encrypt stored files with the configured encryptionKey, decrypting them with the old one.",
        discussion: """
            The new key is the configured encryptionKey (PARSE_SERVER_ENCRYPTION_KEY, --encryptionKey or the config file); \
            the old one comes from PARSLEY_OLD_ENCRYPTION_KEY or --old-key-file (a file holding the key). Without an old \
            key the files are taken as stored in the clear (encrypting them for the first time); without a new key they \
            are decrypted (encryption removed). Files that cannot be read with the old key are left as they are and \
            counted as not rotated. Keys are never printed. Stop the servers, or run it while they still use the old key \
            and restart them with the new one right after.
            Example: PARSLEY_OLD_ENCRYPTION_KEY=old PARSE_SERVER_ENCRYPTION_KEY=new parsley files rotate-key
            """)

    @Option(help: "A file holding the old key (else PARSLEY_OLD_ENCRYPTION_KEY; neither: the files are not encrypted yet).")
    var oldKeyFile: String?
    @Option(help: "Only these stored file names (repeat the option; default: every file).") var fileName: [String] = []
    @Option(help: "The adapter the files are in: fs or database (default: the configured filesAdapter).") var adapter: String?
    @OptionGroup(title: "Server settings (as for serve)") var settings: ServerSettings

    func run() async throws {
        try await Transfer.reportingErrors("files rotate-key") {
            let setup = try Transfer.Setup(settings, createFolders: false)
            var options = setup.options
            try ServerSettings.applyFileSettings(to: &options, dataDir: setup.dataDir, values: setup.values)
            var oldKey = setup.values.environment["PARSLEY_OLD_ENCRYPTION_KEY"]
            if let oldKeyFile {
                guard let text = try? String(contentsOfFile: oldKeyFile, encoding: .utf8) else {
                    throw ServerSettings.Invalid(description: "--old-key-file: cannot read the file")
                }
                oldKey = text.trimmingCharacters(in: .newlines)
            }
            if oldKey?.isEmpty == true { oldKey = nil }
            let newKey = options.files.encryptionKey
            guard oldKey != nil || newKey != nil else {
                throw ServerSettings.Invalid(description: "neither an old key nor an encryptionKey: nothing to rotate")
            }
            let storeAdapter: FilesAdapter
            if let adapter {
                guard let builtIn = ServerSettings.builtInFilesAdapter(adapter) else {
                    throw ServerSettings.Invalid(description: "--adapter must be fs or database")
                }
                storeAdapter = builtIn
            } else {
                storeAdapter = options.files.adapter
            }
            if case .custom = storeAdapter { throw ServerSettings.Invalid(description: "files in S3 are not encrypted by Parsley") }
            options.files.encryptionKey = nil  // the store as it is on disk; the rotation wraps it with each key
            let (database, _) = try await setup.open()
            let start = ContinuousClock.now
            let names = fileName.isEmpty ? nil : fileName
            let summary = try await database.serving {
                let store = Adapters.standard.fileStore(storeAdapter, options: options, database: database)
                try await store.prepare()
                let rotation = FileKeyRotation(store: store, oldKey: oldKey, newKey: newKey)
                return try await rotation.run(fileNames: names) { name, rotated in
                    Transfer.note(rotated ? "rotated \(name)" : "not rotated \(name) (cannot be read with the old key)")
                }
            }
            Transfer.note(
                "files rotate-key: \(summary.rotated.count) rotated, \(summary.notRotated.count) not rotated, in \(ContinuousClock.now - start)")
            if !summary.notRotated.isEmpty { throw ExitCode(1) }
        }
    }
}

struct FilesMigrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy every file from one files adapter into another (fs or database to s3, ...).",
        discussion: """
            Without downtime: first restart the servers with the new filesAdapter and filesFallbackAdapter set to \
            the old one (new uploads go to the new store; a file not copied yet is read from the old one), then run \
            this, then remove filesFallbackAdapter. Files the target already has are skipped: an interrupted run is \
            run again. The source keeps its files unless --delete-source.
            Example: PARSLEY_FILES_ADAPTER=@parse/s3-files-adapter S3_BUCKET=files parsley files migrate --from fs --to s3
            """)

    @Option(help: "The adapter the files are in: fs or database (default: filesFallbackAdapter, else fs).") var from: String?
    @Option(help: "The adapter to copy to: s3, fs or database (default: the configured filesAdapter).") var to: String?
    @Flag(help: "Delete each file from the source once copied.") var deleteSource = false
    @OptionGroup(title: "Server settings (as for serve)") var settings: ServerSettings

    func run() async throws {
        try await Transfer.reportingErrors("files migrate") {
            let setup = try Transfer.Setup(settings, createFolders: false)
            var options = setup.options
            try ServerSettings.applyFileSettings(to: &options, dataDir: setup.dataDir, values: setup.values)
            let sourceName = from ?? (options.files.fallbackAdapter.map { if case .database = $0 { "database" } else { "fs" } } ?? "fs")
            guard let sourceAdapter = ServerSettings.builtInFilesAdapter(sourceName) else {
                throw ServerSettings.Invalid(description: "--from must be fs or database")
            }
            let targetAdapter: FilesAdapter
            switch to?.lowercased() {
            case nil: targetAdapter = options.files.adapter
            case "s3"?:
                if case .custom(let store) = options.files.adapter, store is S3FileStore {
                    targetAdapter = options.files.adapter
                } else {
                    do {
                        targetAdapter = .custom(S3FileStore(options: try S3FileOptions.parse([:], environment: setup.values.environment)))
                    } catch {
                        throw ServerSettings.Invalid(description: "--to s3: \(error)")
                    }
                }
            case let name?:
                guard let adapter = ServerSettings.builtInFilesAdapter(name) else {
                    throw ServerSettings.Invalid(description: "--to must be s3, fs or database")
                }
                targetAdapter = adapter
            }
            if case .filesystem = sourceAdapter, case .filesystem = targetAdapter {
                throw ServerSettings.Invalid(description: "--from and --to are the same")
            }
            if case .database = sourceAdapter, case .database = targetAdapter {
                throw ServerSettings.Invalid(description: "--from and --to are the same")
            }
            let (database, _) = try await setup.open()
            let start = ContinuousClock.now
            let summary = try await database.serving {
                let adapters = Adapters.standard
                let source = adapters.fileStore(sourceAdapter, options: options, database: database)
                let target = adapters.fileStore(targetAdapter, options: options, database: database)
                try await source.prepare()
                try await target.prepare()
                let migration = FileMigration(source: source, target: target, deletingSource: deleteSource)
                return try await migration.run { name, copied in if copied { Transfer.note("copied \(name)") } }
            }
            Transfer.note(
                "files migrate: \(summary.copied) copied (\(summary.bytes) bytes), \(summary.skipped) already there, in \(ContinuousClock.now - start)"
            )
        }
    }
}
