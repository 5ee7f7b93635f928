import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyStorage
import ParsleySQLite

/// `parsley schema apply Schemas/journal.json` / `parsley schema apply --all`: creates or migrates the classes
/// of schema files, on a running server through `/schemas` (when a server URL is configured) or directly on
/// the database `parsley serve` uses.
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema", abstract: "Manage class schemas from schema files.", subcommands: [Apply.self])

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or migrate the classes of schema files (idempotent; nothing is deleted).",
            discussion: """
                With PARSE_SERVER_URL (or --server-url) set, the changes go to that server through /schemas with \
                the master key (PARSE_SERVER_MASTER_KEY, --master-key, or <data-dir>/master.key). Otherwise they \
                are applied directly to the database `parsley serve` uses (PARSE_SERVER_DATABASE_URI / \
                PARSLEY_DATA_DIR), in one transaction; stop a server running on that database first, or use its URL.
                Every file is validated before anything changes.
                """)

        @Argument(help: "Schema files (JSON: {\"description\": ..., \"classes\": [<POST /schemas body>, ...]}).")
        var files: [String] = []
        @Flag(help: "Apply every *.json file of the schemas folder.") var all = false
        @Option(help: "The schemas folder for --all (default Schemas).") var schemasDir = "Schemas"
        @Flag(help: "Validate and show what would change, change nothing.") var dryRun = false
        /// The same settings as serve (`--server-url`/`PARSE_SERVER_URL` for a running server, else
        /// `--database-uri`/`PARSE_SERVER_DATABASE_URI` and `--data-dir`, `--app-id`, `--master-key`, `--config`).
        @OptionGroup(title: "Server settings (as for serve)") var settings: ServerSettings

        struct Failed: Error, CustomStringConvertible {
            let description: String
        }

        func run() async throws {
            do {
                try await apply()
            } catch let e as SchemaFile.Invalid {
                FileHandle.standardError.write(Data("parsley: \(e.description)\n".utf8))
                throw ExitCode(1)
            } catch let e as Failed {
                FileHandle.standardError.write(Data("parsley: \(e.description)\n".utf8))
                throw ExitCode(1)
            } catch let e as ServerSettings.Invalid {
                FileHandle.standardError.write(Data("parsley: \(e.description)\n".utf8))
                throw ExitCode(2)
            } catch let exit as ExitCode {
                throw exit
            } catch {
                FileHandle.standardError.write(Data("parsley: schema apply failed: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }

        func schemaFiles() throws -> [SchemaFile] {
            var paths = files
            if all {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: schemasDir)) ?? []
                let json = names.filter { $0.hasSuffix(".json") }.sorted()
                if json.isEmpty { throw Failed(description: "no *.json schema files in \(schemasDir)") }
                paths += json.map { "\(schemasDir)/\($0)" }
            }
            if paths.isEmpty { throw Failed(description: "name schema files, or use --all (try --help)") }
            return try paths.map { path in
                guard let data = FileManager.default.contents(atPath: path) else { throw Failed(description: "\(path): cannot read the file") }
                return try SchemaFile(name: path, text: String(decoding: data, as: UTF8.self))
            }
        }

        /// Plans every file in order (each from the schemas the previous ones leave), so a bad file stops the
        /// whole run before anything changes.
        static func plan(_ files: [SchemaFile], current: [String: ClassSchema]) throws -> [SchemaMigration] {
            var state = current
            var plans: [SchemaMigration] = []
            for file in files {
                let migration = try SchemaMigration(file, current: state)
                state = migration.result
                plans.append(migration)
            }
            return plans
        }

        static func report(_ plans: [SchemaMigration], applied: Bool) {
            for m in plans {
                print("\(m.file.name):")
                for step in m.steps where !step.summary.hasSuffix("dropping changed indexes") {
                    print("  \(step.summary)\(applied ? "" : " (not applied: dry run)")")
                }
                for c in m.unchanged { print("  \(c): unchanged") }
            }
        }

        func apply() async throws {
            // Like serve: flags, then the environment, then the config file.
            let values = try settings.values()
            let files = try schemaFiles()
            let dataDir = values.string("dataDir") ?? "./parsley-data"
            if let url = values.string("serverURL") ?? values.env("SERVER_URL") {
                let appId = values.string("appId") ?? "parsley"
                let key =
                    values.string("masterKey")
                    ?? (try? String(contentsOfFile: dataDir + "/master.key", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                guard let key, !key.isEmpty else {
                    throw Failed(description: "a master key is needed for \(RedactedURL.string(url)): set PARSE_SERVER_MASTER_KEY or --master-key")
                }
                let server = SchemaServer(url: url.hasSuffix("/") ? String(url.dropLast()) : url, appId: appId, masterKey: key)
                let plans = try Self.plan(files, current: try await server.schemas())
                if !dryRun {
                    for m in plans {
                        for step in m.steps {
                            do { try await server.send(step) } catch let e as Failed {
                                throw Failed(description: "\(m.file.name): class \(step.change.className): \(e.description)")
                            }
                        }
                    }
                }
                Self.report(plans, applied: !dryRun)
                print(dryRun ? "checked against \(RedactedURL.string(url))" : "applied to \(RedactedURL.string(url))")
                return
            }
            // The database serve would use (SQLite or PostgreSQL), found the same way.
            let setup = try Transfer.Setup(settings, createFolders: true)
            let (database, path) = try await setup.open()
            try await database.serving {
                let services = try await ParseServices.open(
                    options: ParseServerOptions(applicationId: "parsley", masterKey: "schema-apply-only"), database: database, adapters: .standard)
                let plans = try Self.plan(files, current: services.schemas.all())
                if !dryRun { try await SchemaMigration.apply(plans, to: services.schemas) }
                Self.report(plans, applied: !dryRun)
                print(dryRun ? "checked against \(path)" : "applied to \(path)")
            }
        }
    }
}

/// The `/schemas` endpoints of a running Parse server.
struct SchemaServer {
    let url: String
    let appId: String
    let masterKey: String

    func call(_ method: HTTPMethod, _ path: String, _ body: JSONValue? = nil, keyOrders: JSONKeyOrders = JSONKeyOrders()) async throws -> (
        Int, JSONValue
    ) {
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        request.headers.add(name: "X-Parse-Application-Id", value: appId)
        request.headers.add(name: "X-Parse-Master-Key", value: masterKey)
        request.headers.add(name: "Content-Type", value: "application/json")
        if let body { request.body = .bytes(ByteBuffer(string: JSONWriter.string(body, keyOrders: keyOrders))) }
        let response: HTTPClientResponse
        do {
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        } catch {
            throw SchemaCommand.Apply.Failed(description: "cannot reach \(RedactedURL.string(url)): \(error)")
        }
        let buffer = try await response.body.collect(upTo: 64 << 20)
        let text = String(buffer: buffer)
        return (Int(response.status.code), (try? JSONParser.parse(text)) ?? .string(text))
    }

    func schemas() async throws -> [String: ClassSchema] {
        let (status, json) = try await call(.GET, "/schemas")
        guard status == 200, case .array(let results)? = json["results"] else {
            throw SchemaCommand.Apply.Failed(description: "GET \(RedactedURL.string(url))/schemas answered \(status): \(JSONWriter.string(json))")
        }
        var all: [String: ClassSchema] = [:]
        for item in results { if let s = ClassSchema(json: item) { all[s.className] = s } }
        return all
    }

    func send(_ step: SchemaMigration.Step) async throws {
        let name = step.change.className
        let (status, json) = try await call(step.creates ? .POST : .PUT, "/schemas/\(name)", step.change.body, keyOrders: step.change.keyOrders)
        guard status == 200 || status == 201 else {
            throw SchemaCommand.Apply.Failed(
                description:
                    "\(step.creates ? "POST" : "PUT") \(RedactedURL.string(url))/schemas/\(name) answered \(status): \(JSONWriter.string(json))")
        }
    }
}
