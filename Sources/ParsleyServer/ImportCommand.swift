import ArgumentParser
import Foundation
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyStorage

/// `parsley import FILE`: reads what `parsley export` wrote into the database `serve` would use (SQLite or
/// PostgreSQL), keeping objectIds, dates, permissions, password hashes, relations, schemas and files.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read a parsley export (JSON lines) into an empty database.",
        discussion: """
            Writes to the database `parsley serve` would use (--database-uri / PARSE_SERVER_DATABASE_URI, or \
            <data-dir>/parsley.sqlite, created when missing); stop servers using it first. The target must \
            not hold objects unless --force is given (objects with the same objectId are then overwritten). \
            Files in the export go to the configured file store (PARSLEY_FILES_ADAPTER, PARSLEY_FILES_DIR).
            Example: parsley import app.jsonl --database-uri postgres://parse:secret@localhost:5432/parse
            With --class, reads one class (what `parsley export --class` or the dashboard wrote, or a spreadsheet's CSV \
            with a header of field names) into an existing app class: rows that do not fit the schema or that a write \
            refuses are reported (line, code, error) and skipped, each batch is written in one transaction; the exit \
            status is 3 when rows were refused. A running server may keep serving meanwhile.
            Example: parsley import --class Post posts.csv
            """)

    @Argument(help: "The export to read (- for standard input).") var file: String
    @Flag(help: "Import into a database that already has objects.") var force = false
    @Option(
        name: .customLong("class"),
        help: "Import JSON lines or CSV into this existing app class instead (checked against its schema, written in batches).")
    var className: String?
    @Option(help: "With --class: jsonl or csv (default: csv for a .csv file, else jsonl).") var format: String?
    @Option(help: "With --class: rows written per transaction.") var batchSize = 100
    @OptionGroup(title: "Server settings (as for serve)") var settings: ServerSettings

    func run() async throws {
        try await Transfer.reportingErrors("import") {
            if className != nil { return try await importClass() }
            let handle = try Transfer.input(file)
            let setup = try Transfer.Setup(settings, createFolders: true)
            var options = setup.options
            try ServerSettings.applyFileSettings(to: &options, dataDir: setup.dataDir, values: setup.values)
            let (database, shown) = try await setup.open()
            let start = ContinuousClock.now
            let summary = try await database.serving {
                let api = ParseAPI(services: try await ParseServices.open(options: options, database: database, adapters: .standard))
                let importer = TransferImporter(
                    store: api.services.store, schemas: api.schemas, files: api.services.files.store, force: force)
                let reader = LineReader(handle)
                return try await importer.run { try reader.next() }
            }
            Transfer.note("imported \(summary) into \(shown) in \(ContinuousClock.now - start)")
        }
    }
}

/// Lines of a file handle, read a megabyte at a time (a line may be longer: file data lines are 1 MiB).
final class LineReader {
    let handle: FileHandle
    var buffer: [UInt8] = []
    var start = 0
    /// Where the search for the next newline goes on (bytes before it hold none).
    var scanned = 0
    var atEnd = false

    init(_ handle: FileHandle) { self.handle = handle }

    func next() throws -> String? {
        while true {
            if let i = buffer[scanned...].firstIndex(of: 10) {
                let line = String(decoding: buffer[start..<i], as: UTF8.self)
                start = i + 1
                scanned = start
                return line
            }
            scanned = buffer.count
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = String(decoding: buffer[start...], as: UTF8.self)
                start = buffer.count
                return line
            }
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
            if let data = try handle.read(upToCount: 1 << 20), !data.isEmpty {
                buffer.append(contentsOf: data)
            } else {
                atEnd = true
            }
        }
    }
}
