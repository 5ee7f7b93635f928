import ArgumentParser
import Foundation
import ParsleySQLite

/// `parsley backup <file>`: a consistent copy of the SQLite database, taken while the server runs
/// (`VACUUM INTO` through a connection of its own). The database is found like `serve` finds it:
/// `--database-uri`, `PARSE_SERVER_DATABASE_URI`, or `<data folder>/parsley.sqlite`.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Copy the SQLite database consistently, also while the server runs.")

    @Argument(help: "The backup file to write (must not exist).") var file: String
    @Option(help: "Database URI, sqlite:<path> (env PARSE_SERVER_DATABASE_URI).") var databaseUri: String?
    @Option(help: "Data folder (env PARSLEY_DATA_DIR, default ./parsley-data).") var dataDir: String?

    func run() async throws {
        do {
            let values = OptionValues()
            let dataDir = dataDir ?? values.string("dataDir") ?? "./parsley-data"
            let uri = databaseUri ?? values.string("databaseURI") ?? "sqlite:\(dataDir)/parsley.sqlite"
            guard uri.hasPrefix("sqlite:") else {
                throw ServerSettings.Invalid(description: "PARSE_SERVER_DATABASE_URI: backup copies SQLite databases; for PostgreSQL use pg_dump")
            }
            var path = String(uri.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard FileManager.default.fileExists(atPath: path) else { throw ServerSettings.Invalid(description: "no database at \(path)") }
            guard !FileManager.default.fileExists(atPath: file) else { throw ServerSettings.Invalid(description: "\(file) already exists") }
            let start = ContinuousClock.now
            try SQLiteDatabase.backup(path: path, to: file)
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
            print("parsley: backed up \(path) to \(file) (\(size) bytes, \(ContinuousClock.now - start))")
        } catch let invalid as ServerSettings.Invalid {
            FileHandle.standardError.write(Data("parsley: \(invalid.description)\n".utf8))
            throw ExitCode(2)
        } catch {
            FileHandle.standardError.write(Data("parsley: backup failed: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
