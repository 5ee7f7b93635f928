import Foundation
import Logging
import ParsleyCore
import ParsleyDomain
import ParsleyPostgres
import ParsleySQLite
import ParsleyStorage

/// How the server reaches its database.
struct StorageSettings {
    var poolSize: Int
    var statementTimeout: Duration
    var preparedStatements = true
    /// Point reads running at once before others are coalesced (0: never).
    var pointReadConcurrency = PostgresDatabase.defaultPointReadConcurrency
    /// Parse Server's `collectionPrefix`: before every table and index name of this app.
    var tablePrefix = ""
}

extension ServerSettings {
    static func storageSettings(_ values: OptionValues) throws -> StorageSettings {
        let pool = try values.integer("databasePoolSize", default: 20) ?? 20
        guard pool >= 1 else { throw Invalid(description: "PARSLEY_DATABASE_POOL_SIZE must be at least 1") }
        let timeout = try values.integer("statementTimeoutMs", default: 15_000) ?? 15_000
        guard timeout >= 1 else { throw Invalid(description: "PARSLEY_STATEMENT_TIMEOUT_MS must be at least 1") }
        let prepared = try values.bool("postgresPreparedStatements", default: true)
        let pointReads =
            try values.integer("postgresPointReadConcurrency", default: PostgresDatabase.defaultPointReadConcurrency)
            ?? PostgresDatabase.defaultPointReadConcurrency
        guard pointReads >= 0 else { throw Invalid(description: "PARSLEY_POSTGRES_POINT_READ_CONCURRENCY must be 0 or more") }
        let prefix = values.string("collectionPrefix") ?? ""
        // Letters, digits and `_` (Parse Server's Mongo collection names allow more; SQL names and PostgreSQL's
        // 63-byte limit want a short, plain prefix).
        guard prefix.count <= 20, prefix.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }) else {
            throw Invalid(description: "\(OptionTable.spec("collectionPrefix").shownName) must be at most 20 letters, digits or _")
        }
        return StorageSettings(
            poolSize: pool, statementTimeout: .milliseconds(timeout), preparedStatements: prepared, pointReadConcurrency: pointReads,
            tablePrefix: prefix)
    }
}

extension ServerSettings {
    /// Parse Server's `databaseOptions`: `allowPublicExplain` (Parse Server 9); its other keys configure Parse
    /// Server's database drivers and are ignored with a warning.
    static func applyDatabaseOptions(to options: inout ParseServerOptions, values: OptionValues, logger: Logger) throws {
        var given: [String: JSONValue] = [:]
        var name = OptionTable.spec("databaseOptions").shownName
        if let (json, shown) = try values.object("databaseOptions") {
            given = json
            name = shown
        }
        if let (text, variable) = values.part("databaseOptions", "allowPublicExplain") {
            options.allowPublicExplain = try OptionValues.bool(text, name: variable)
        } else if let value = given["allowPublicExplain"] {
            switch value {
            case .bool(let b): options.allowPublicExplain = b
            case .string(let text): options.allowPublicExplain = try OptionValues.bool(text, name: "\(name): allowPublicExplain")
            default: throw Invalid(description: "\(name): allowPublicExplain must be true or false")
            }
        }
        for key in given.keys.sorted() where key != "allowPublicExplain" {
            logger.warning(
                "Parse Server option databaseOptions (\(name)): ignoring \(key), a database driver option (Parsley's are PARSLEY_DATABASE_POOL_SIZE and PARSLEY_STATEMENT_TIMEOUT_MS)"
            )
        }
    }
}

extension ServerSettings {
    /// The password of a `postgres://` database URI (registered with the log redactor), nil for SQLite.
    static func databasePassword(_ uri: String?) -> String? {
        guard let uri, PostgresConnectionSettings.isPostgres(uri) else { return nil }
        return (try? PostgresConnectionSettings(url: uri))?.password
    }
}

extension Serve {
    /// Opens the database a URI names: `postgres://...` for PostgreSQL, `sqlite:<path>` for the embedded file.
    /// Returns it with a description safe to log (no password).
    static func openDatabase(uri: String, storage: StorageSettings, logger: Logger) async throws -> (any SQLDatabase, String) {
        if PostgresConnectionSettings.isPostgres(uri) {
            let settings: PostgresConnectionSettings
            do {
                settings = try PostgresConnectionSettings(url: uri)
            } catch {
                throw ServerSettings.Invalid(description: "PARSE_SERVER_DATABASE_URI: \(error)")
            }
            let shown = "postgres://\(settings.username)@\(settings.host):\(settings.port)/\(settings.database ?? "")"
            do {
                let db = try await PostgresDatabase.open(
                    url: uri, poolSize: storage.poolSize, statementTimeout: storage.statementTimeout,
                    preparedStatements: storage.preparedStatements, pointReadConcurrency: storage.pointReadConcurrency,
                    tablePrefix: storage.tablePrefix, logger: logger)
                return (db, shown)
            } catch {
                throw ServerSettings.Invalid(description: "PARSE_SERVER_DATABASE_URI: cannot use \(shown): \(error)")
            }
        }
        guard uri.hasPrefix("sqlite:") else {
            // The URI itself is never shown (it may hold a password); its scheme says enough (`mongodb`).
            let got = RedactedURL.scheme(uri).map { ", not \($0):" } ?? ""
            throw ServerSettings.Invalid(
                description: "PARSE_SERVER_DATABASE_URI must be sqlite:<path> or postgres://user:password@host:port/database\(got)")
        }
        var path = String(uri.dropFirst("sqlite:".count))
        if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
        return (
            try await SQLiteDatabase.open(path: path, statementTimeout: storage.statementTimeout, tablePrefix: storage.tablePrefix, logger: logger),
            path
        )
    }
}
