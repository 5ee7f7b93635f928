import ArgumentParser
import Foundation
import Logging
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyStorage

/// `parsley export [--output FILE] [--files]`: the whole database (schemas, objects with their internal fields and
/// permissions, relations, /config parameters and optionally the files objects refer to) as JSON lines, read
/// page by page, so a deployment moves between SQLite and PostgreSQL with `parsley import`. The database is
/// found like `serve` finds it.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the whole database as JSON lines (for parsley import).",
        discussion: """
            With --class, writes one class instead (JSON lines or CSV, through find's rules, page by page) for \
            `parsley import --class` or a spreadsheet.
            Reads the database `parsley serve` would use (--database-uri / PARSE_SERVER_DATABASE_URI, or \
            <data-dir>/parsley.sqlite) inside one read transaction, so a running server may keep writing. \
            With --files the files that objects refer to are read through the configured file store \
            (PARSLEY_FILES_ADAPTER, PARSLEY_FILES_DIR) and included as base64.
            Example: parsley export --database-uri sqlite:old.sqlite -o app.jsonl --files
            """)

    @Option(name: [.short, .long], help: "The file to write (must not exist; default standard output).") var output: String?
    @Flag(help: "Also export the files objects refer to.") var files = false
    @Option(name: .customLong("class"), help: "Export only this class, as find answers it with the master key (see --format).")
    var className: String?
    @Option(help: "With --class: jsonl (an object a line) or csv (a header, then a record an object).") var format = "jsonl"
    @Option(name: .customLong("where"), help: "With --class: only the objects this query matches (JSON, as find's where).")
    var whereText: String?
    @OptionGroup(title: "Server settings (as for serve)") var settings: ServerSettings

    func run() async throws {
        try await Transfer.reportingErrors("export") {
            if className != nil { return try await exportClass() }
            let setup = try Transfer.Setup(settings, createFolders: false)
            if let output, FileManager.default.fileExists(atPath: output) {
                throw ServerSettings.Invalid(description: "\(output) already exists")
            }
            if let path = setup.sqlitePath, !FileManager.default.fileExists(atPath: path) {
                throw ServerSettings.Invalid(description: "no database at \(path)")
            }
            var options = setup.options
            if files { try ServerSettings.applyFileSettings(to: &options, dataDir: setup.dataDir, values: setup.values) }
            let (database, shown) = try await setup.open()
            let writer = try await Transfer.writer(to: output, database: database)
            let start = ContinuousClock.now
            try await Transfer.removingOutputOnFailure(output) {
                let summary = try await database.serving {
                    let store = SQLStore(database: database)
                    let exporter = TransferExporter(store: store, files: files ? Adapters.standard.fileStore(for: options, database: database) : nil)
                    let summary = try await exporter.export { line in try writer.write(line) }
                    try writer.flush()
                    return summary
                }
                Transfer.note("exported \(summary) from \(shown)\(output.map { " to \($0)" } ?? "") in \(ContinuousClock.now - start)")
            }
        }
    }
}

/// What export and import share: finding and opening the database like `serve`, and reporting errors.
enum Transfer {
    struct Setup {
        var uri: String
        var dataDir: String
        var storage: StorageSettings
        var options: ParseServerOptions
        /// The settings, found like serve finds them (flags, then the environment, then the config file).
        var values: OptionValues

        init(_ settings: ServerSettings, createFolders: Bool) throws {
            values = try settings.values()
            dataDir = values.string("dataDir") ?? "./parsley-data"
            uri = values.string("databaseURI") ?? "sqlite:\(dataDir)/parsley.sqlite"
            storage = try ServerSettings.storageSettings(values)
            let appId = values.string("appId") ?? "parsley"
            options = ParseServerOptions(applicationId: appId, masterKey: "parsley-transfer-only")
            if createFolders, let path = sqlitePath {
                let folder = (path as NSString).deletingLastPathComponent
                if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            }
        }

        /// The file of a `sqlite:` URI.
        var sqlitePath: String? {
            guard uri.hasPrefix("sqlite:") else { return nil }
            let path = String(uri.dropFirst("sqlite:".count))
            return path.hasPrefix("//") ? String(path.dropFirst(2)) : path
        }

        func open() async throws -> (any SQLDatabase, String) {
            var logger = Logger(label: "parsley")
            logger.logLevel = .warning
            return try await Serve.openDatabase(uri: uri, storage: storage, logger: logger)
        }
    }

    /// The file an import reads (`-`: standard input).
    static func input(_ file: String) throws -> FileHandle {
        if file == "-" { return .standardInput }
        guard let handle = FileHandle(forReadingAtPath: file) else { throw ServerSettings.Invalid(description: "cannot read \(file)") }
        return handle
    }

    /// Where an export writes: a new file at `output` (the database is closed when it cannot be made), or standard output.
    static func writer(to output: String?, database: any SQLDatabase) async throws -> LineWriter {
        guard let output else { return LineWriter(.standardOutput) }
        guard FileManager.default.createFile(atPath: output, contents: nil), let handle = FileHandle(forWritingAtPath: output) else {
            try? await database.close()
            throw ServerSettings.Invalid(description: "cannot create \(output)")
        }
        return LineWriter(handle)
    }

    /// Runs an export; a partly written `output` is removed when it fails.
    static func removingOutputOnFailure<T>(_ output: String?, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            if let output { try? FileManager.default.removeItem(atPath: output) }
            throw error
        }
    }

    /// Progress and summaries go to standard error: standard output may be the export itself.
    static func note(_ text: String) {
        FileHandle.standardError.write(Data("parsley: \(text)\n".utf8))
    }

    static func reportingErrors(_ what: String, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let invalid as ServerSettings.Invalid {
            note(invalid.description)
            throw ExitCode(2)
        } catch let e as TransferError {
            note("\(what) failed: \(e.description)")
            throw ExitCode(1)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            note("\(what) failed: \(error)")
            throw ExitCode(1)
        }
    }
}

/// Lines to a file handle through a buffer (the exporter calls it from one task at a time).
final class LineWriter: @unchecked Sendable {
    let handle: FileHandle
    var buffer: [UInt8] = []
    static let flushBytes = 1 << 18

    init(_ handle: FileHandle) {
        self.handle = handle
        buffer.reserveCapacity(Self.flushBytes + 4096)
    }

    func write(_ line: String) throws {
        buffer.append(contentsOf: line.utf8)
        buffer.append(10)
        if buffer.count >= Self.flushBytes { try flush() }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
