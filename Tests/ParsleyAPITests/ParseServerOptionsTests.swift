import Foundation
import Logging
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Testing

@testable import ParsleyServer

/// `docs/parse-server-options.md` against `OptionTable`, the one table the config file, the environment and the
/// flags are read through: same rows both ways, every supported option read by the start-up code through its
/// variable, its flag and its config key, every ignored one warned about, every refused one refused.
@Suite("Parse Server options: the table, the parser and the docs")
struct ParseServerOptionsTests {
    /// One row of the docs table.
    struct DocRow: Equatable, CustomStringConvertible {
        var key: String
        var env: [String]
        var flags: [String]
        var status: String
        var section: String
        var description: String {
            "| `\(key)` | \(env.map { "`\($0)`" }.joined(separator: ", ")) | \(flags.map { "`\($0)`" }.joined(separator: ", ")) | \(status) |"
        }
    }

    /// A templates folder for `emailTemplates`' sample value.
    static let templatesFolder: String = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-templates-sample")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try? Data("Verify {{email}}".utf8).write(to: dir.appendingPathComponent("verification_email.subject.txt"))
        return dir.path
    }()

    static var docURL: URL {
        // Tests/ParsleyAPITests/<this file> → the repository.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/parse-server-options.md")
    }

    /// The rows of the docs file's tables: `| `key` | `ENV`, `ENV2` | `--flag`, `--flag-2` | status | notes |`.
    static func docRows() throws -> [DocRow] {
        let text = try String(contentsOf: docURL, encoding: .utf8)
        var rows: [DocRow] = []
        var section = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { section = String(line.dropFirst(3)) }
            guard line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { continue }
            func names(_ cell: String) -> [String] {
                cell.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
                    .filter { !$0.isEmpty }
            }
            rows.append(DocRow(key: names(cells[0]).first ?? "", env: names(cells[1]), flags: names(cells[2]), status: cells[3], section: section))
        }
        return rows
    }

    static func expectedRow(_ spec: OptionSpec) -> DocRow {
        DocRow(
            key: spec.key, env: spec.env, flags: spec.flags, status: spec.status.rawValue,
            section: spec.origin == .parseServer ? "Parse Server options" : "Parsley's own settings")
    }

    @Test("the docs table and OptionTable have the same rows (key, variables, flags, status), both ways")
    func docsMatchTable() throws {
        let rows = try Self.docRows()
        let documented = Dictionary(rows.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(rows.count == documented.count, "a key is documented twice")
        for spec in OptionTable.all {
            let expected = Self.expectedRow(spec)
            #expect(documented[spec.key] == expected, "docs/parse-server-options.md should have, under '\(expected.section)':\n\(expected) <notes> |")
        }
        let known = Set(OptionTable.all.map(\.key))
        for row in rows where !known.contains(row.key) {
            Issue.record("docs/parse-server-options.md documents \(row.key), which OptionTable does not have")
        }
        // Parse Server 7's options are all there (parse-server 7.3.0's Definitions.js has 93), and Parse Server 9's
        // `graphQLPublicIntrospection`, `requestComplexity`, `readOnlyMasterKeyIps`, `allowAggregationForReadOnlyMasterKey`
        // `protectedFieldsOwnerExempt`, `protectedFieldsSaveResponseExempt`, `protectedFieldsTriggerExempt`,
        // `enableSanitizedErrorResponse`, `enableInsecureAuthAdapters`, `enableProductPurchaseLegacyApi`, `masterKeyTtl`,
        // `query`, `requestContextMiddleware` and `verifyServerUrl`.
        #expect(OptionTable.all.filter { $0.origin == .parseServer }.count == 108)
        for key in [
            "protectedFieldsTriggerExempt", "enableSanitizedErrorResponse", "enableInsecureAuthAdapters", "enableProductPurchaseLegacyApi",
            "masterKeyTtl", "query", "requestContextMiddleware", "verifyServerUrl",
        ] {
            #expect(known.contains(key), "Parse Server 9's \(key) has no row")
        }
    }

    /// A temporary data folder and the settings a start needs besides the one under test.
    static func baseEnvironment(_ dir: URL) -> [String: String] {
        ["PARSLEY_DATA_DIR": dir.path, "PARSE_SERVER_MASTER_KEY": "unit-master-key"]
    }

    /// A new empty folder under the temporary directory.
    static func newTempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-options-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func withTempDir<T>(_ body: (URL) throws -> T) throws -> T {
        let dir = try newTempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        return try body(dir)
    }

    static func withTempDir<T>(_ body: (URL) async throws -> T) async throws -> T {
        let dir = try newTempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        return try await body(dir)
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "parsley-options-test")
        logger.logLevel = .critical
        return logger
    }

    @Test("the start-up code reads every supported option")
    func everySupportedOptionIsRead() throws {
        try Self.withTempDir { dir in
            let values = OptionValues(environment: Self.baseEnvironment(dir))
            _ = try ServeSetup(values, logger: Self.quietLogger)
            let supported = Set(OptionTable.all.filter { $0.status == .supported }.map(\.key))
            let unread = supported.subtracting(values.consulted)
            #expect(unread.isEmpty, "supported but never read: \(unread.sorted())")
            let unsupportedRead = values.consulted.subtracting(supported)
            #expect(unsupportedRead.isEmpty, "read although not supported: \(unsupportedRead.sorted())")
        }
    }

    /// A value of `spec` that the parser accepts (for checking that each way of setting it reaches it).
    static func sample(_ spec: OptionSpec) -> String {
        if spec.kind == .bool { return "true" }
        switch spec.key {
        case "accountLockout": return #"{"duration":5,"threshold":3}"#
        case "fileUpload": return #"{"enableForPublic":true}"#
        case "idempotencyOptions": return #"{"paths":["classes/.*"],"ttl":60}"#
        case "passwordPolicy": return #"{"maxPasswordHistory":2}"#
        case "rateLimit": return #"[{"requestPath":"/classes/*","requestTimeWindow":1000,"requestCount":5}]"#
        case "requestKeywordDenylist": return #"[{"key":"evil"}]"#
        case "push": return "{}"
        case "auth": return #"{"anonymous":{"enabled":true}}"#
        case "liveQuery": return #"{"classNames":["Chat"]}"#
        case "security": return #"{"enableCheck":true}"#
        case "protectedFields": return #"{"Profile":{"*":["secret"]}}"#
        case "trustProxy": return "loopback, 10.0.0.0/8"
        case "liveQueryServerOptions": return #"{"websocketTimeout":5000}"#
        case "databaseOptions": return #"{"allowPublicExplain":true}"#
        case "query": return #"{"aggregationRawValues":true}"#
        case "customPages": return #"{"invalidLink":"https://example.com/invalid.html"}"#
        case "pages": return #"{"enableRouter":true,"pagesEndpoint":"pages"}"#
        case "filesAdapter": return "database"
        case "filesFallbackAdapter": return "fs"
        case "logLevel": return "warn"
        case "logFormat": return "json"
        case "smtpAuth": return "plain"
        case "smtpSecurity": return "tls"
        case "smtpCAFile": return "/etc/hostname"
        case "emailTemplates": return Self.templatesFolder
        case "maxUploadSize": return "5mb"
        case "graphQLPath": return "/sample-graphql"
        case "requestComplexity": return #"{"graphQLDepth":12,"graphQLFields":-1}"#
        case "masterKey": return "sample-master-key"
        case "readOnlyMasterKey": return "sample-read-only-key"
        case "masterKeyIps": return "127.0.0.1,::1"
        case "readOnlyMasterKeyIps": return "127.0.0.1,10.0.0.0/8"
        case "maintenanceKey": return "sample-maintenance-key"
        case "maintenanceKeyIps": return "127.0.0.1,10.0.0.0/8"
        case "logLevels": return #"{"triggerAfter":"silent","cloudFunctionError":"warn"}"#
        case "schema": return #"{"definitions":[{"className":"Sample","fields":{"name":{"type":"String"}}}],"lockSchemas":true}"#
        case "databaseURI": return "sqlite:/tmp/sample.sqlite"
        case "dataDir", "filesDir": return "/tmp/sample-dir"
        case "port", "metricsPort", "smtpPort": return "4242"
        default: return "7"
        }
    }

    @Test("every supported option reaches the parser by each of its variables, its flags and its config key")
    func everyWayOfSettingAnOption() async throws {
        try await Self.withTempDir { dir in
            for spec in OptionTable.all where spec.status == .supported {
                // Seconds of parsing in a debug build: one option at a time, so the other tests' tasks get the threads between.
                await Task.yield()
                let value = Self.sample(spec)
                for name in spec.env {
                    let values = OptionValues(environment: [name: value])
                    #expect(values.raw(spec.key)?.text == value, "\(name) does not set \(spec.key)")
                }
                for flag in spec.flags {
                    let arguments = try OptionFlags.rewrite(["serve", flag, value, "--config", "x.json"])
                    let settings = try ServerSettings.parsing(Array(arguments.dropFirst()))
                    #expect(settings.config == "x.json")
                    let values = OptionValues(flags: try OptionFlags.parse(settings.parseOptions), environment: [:])
                    #expect(values.raw(spec.key)?.text == value, "\(flag) does not set \(spec.key): \(arguments)")
                    let joined = try OptionFlags.rewrite(["\(flag)=\(value)"])
                    #expect(
                        try OptionFlags.parse(ServerSettings.parsing(joined).parseOptions)[spec.key] == value, "\(flag)=… does not set \(spec.key)")
                }
                let file = dir.appendingPathComponent("\(spec.key).json")
                let json = OptionValues.json(value)
                try Data(JSONWriter.string(.object([spec.key: json == .string(value) ? .string(value) : json])).utf8).write(to: file)
                let values = try ServerSettings.parsing(["--config", file.path]).values(environment: [:])
                #expect(values.raw(spec.key)?.json == json, "config key \(spec.key) is not read")
                #expect(values.unknownFileKeys.isEmpty)
            }
        }
    }

    @Test("the sample values are accepted by the whole start-up code, and flags win over variables over the file")
    func samplesAndPrecedence() throws {
        try Self.withTempDir { dir in
            var env = Self.baseEnvironment(dir)
            for spec in OptionTable.all
            where spec.status == .supported && !["dataDir", "filesDir", "databaseURI", "masterKey", "smtpHost"].contains(spec.key) {
                env[spec.env[0]] = Self.sample(spec)
            }
            env["PARSLEY_METRICS_PORT"] = "4242"
            _ = try ServeSetup(OptionValues(environment: env), logger: Self.quietLogger)

            let file = dir.appendingPathComponent("config.json")
            try Data(#"{"appId":"file","applicationId":"alias","defaultLimit":3,"maxLimit":9,"someFutureOption":1}"#.utf8).write(to: file)
            let values = try ServerSettings.parsing(try OptionFlags.rewrite(["--appId", "flag", "--config", file.path]))
                .values(environment: ["PARSE_SERVER_APPLICATION_ID": "env", "PARSE_SERVER_DEFAULT_LIMIT": "5"])
            #expect(values.string("appId") == "flag")
            #expect(try values.integer("defaultLimit", default: nil) == 5)
            #expect(try values.integer("maxLimit", default: nil) == 9)
            #expect(values.unknownFileKeys == ["someFutureOption"])
            let fromFile = try ServerSettings.parsing(["--config", file.path]).values(environment: [:])
            #expect(fromFile.string("appId") == "file")  // the key wins over its alias
        }
    }

    /// A value of an unsupported option that Parsley does not do anyway (so it must be warned about or refused).
    static func triggering(_ spec: OptionSpec) -> String? {
        ["true", "false", "x", #"{"a":1}"#, "12345"].first { !spec.harmless(OptionValues.json($0)) }
    }

    @Test("every ignored option set to something Parsley does not do gives a warning naming it; every refused one stops the start naming it")
    func ignoredAndRefused() throws {
        for spec in OptionTable.all where spec.status != .supported {
            let value = try #require(Self.triggering(spec), "\(spec.key) has no value that is not harmless")
            for values in [
                OptionValues(environment: [spec.env[0]: value]),
                OptionValues(flags: [spec.key: value], environment: [:]),
                OptionValues(environment: [:], file: [spec.key: OptionValues.json(value)]),
            ] {
                switch spec.status {
                case .ignored:
                    let warnings = try values.checkUnsupported()
                    #expect(warnings.count == 1 && warnings[0].contains("option \(spec.key) ") && warnings[0].contains("ignored"), "\(warnings)")
                case .refused:
                    #expect(throws: ServerSettings.Invalid.self) { try values.checkUnsupported() }
                    do {
                        _ = try values.checkUnsupported()
                    } catch let e as ServerSettings.Invalid {
                        #expect(e.description.contains("refusing to start") && e.description.contains("\(spec.key) ("), "\(e.description)")
                    }
                case .supported: break
                }
            }
        }
        // Values that describe what Parsley does anyway pass quietly.
        let harmless = OptionValues(
            environment: [
                "PARSE_SERVER_ALLOW_CUSTOM_OBJECT_ID": "false", "PARSE_SERVER_MASTER_KEY_IPS": "0.0.0.0/0,::0",
                "PARSE_SERVER_REVOKE_SESSION_ON_PASSWORD_RESET": "true",
            ],
            file: [
                "protectedFields": ["_User": ["*": ["email"]]], "allowOrigin": "*", "collectionPrefix": "", "objectIdSize": 10,
                "userSensitiveFields": ["email"],
            ])
        #expect(try harmless.checkUnsupported().isEmpty)
    }

    @Test("flags: Parse Server's camel case and Parsley's kebab case; a boolean alone is true; values and errors")
    func flags() throws {
        #expect(OptionSpec.kebab("restAPIKey") == "rest-api-key")
        #expect(OptionSpec.kebab("databaseURI") == "database-uri")
        #expect(OptionSpec.kebab("publicServerURL") == "public-server-url")
        #expect(OptionSpec.kebab("graphQLPath") == "graph-ql-path")
        #expect(OptionSpec.kebab("port") == "port")
        #expect(OptionTable.spec("appId").flags == ["--appId", "--app-id"])
        #expect(OptionTable.spec("port").flags == ["--port"])
        let rewritten = try OptionFlags.rewrite([
            "--enforcePrivateUsers", "--allowClientClassCreation", "false", "--masterKey", "-starts-with-dash", "--maxLimit=50", "--verbose",
        ])
        #expect(
            try OptionFlags.parse(ServerSettings.parsing(rewritten).parseOptions) == [
                "enforcePrivateUsers": "true", "allowClientClassCreation": "false", "masterKey": "-starts-with-dash", "maxLimit": "50",
                "verbose": "true",
            ])
        #expect(throws: ServerSettings.Invalid.self) { try OptionFlags.rewrite(["--appId"]) }
        // Subcommands with flags of their own are left alone; export and import share serve's settings.
        #expect(try OptionFlags.rewrite(["backup", "f", "--data-dir", "d"]) == ["backup", "f", "--data-dir", "d"])
        #expect(try OptionFlags.rewrite(["export", "--database-uri", "x"]) == ["export", "--parse-option=databaseURI=x"])
    }

    static func setup(_ env: [String: String]) throws -> ServeSetup {
        try withTempDir { dir in try ServeSetup(OptionValues(environment: baseEnvironment(dir).merging(env) { $1 }), logger: quietLogger) }
    }

    static func refusal(_ env: [String: String]) throws -> String {
        do {
            _ = try setup(env)
        } catch let e as ServerSettings.Invalid {
            return e.description
        }
        throw Failure("\(env) was accepted")
    }

    @Test("the hardening options: parsed into ParseServerOptions, defaults as Parse Server's, bad JSON refused naming the variable")
    func hardeningOptions() throws {
        let defaults = try Self.setup([:]).options
        #expect(defaults.email.verifySuccessOnInvalidEmail == true)
        #expect(defaults.accounts.enforcePrivateUsers == true)
        #expect(defaults.accounts.enableAnonymousUsers == true)
        #expect(defaults.security.requestKeywordDenylist == KeywordRule.parseServerDefault)
        #expect(defaults.security.idempotency == nil)
        #expect(defaults.accounts.sessionLength == 31_536_000)

        let set = try Self.setup([
            "PARSE_SERVER_EMAIL_VERIFY_SUCCESS_ON_INVALID_EMAIL": "false", "PARSE_SERVER_ENFORCE_PRIVATE_USERS": "false",
            "PARSE_SERVER_ENABLE_ANON_USERS": "false", "PARSE_SERVER_SESSION_LENGTH": "3600",
            "PARSE_SERVER_REQUEST_KEYWORD_DENYLIST": #"[{"key":"evil"},{"value":"bad.*"},{"key":"n","value":1},{"key":"b","value":true}]"#,
            "PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS": #"{"paths":["classes/.*","functions/.*"],"ttl":120}"#,
        ]).options
        #expect(set.email.verifySuccessOnInvalidEmail == false)
        #expect(set.accounts.enforcePrivateUsers == false)
        #expect(set.accounts.enableAnonymousUsers == false)
        #expect(set.accounts.sessionLength == 3600)
        #expect(
            set.security.requestKeywordDenylist == [
                KeywordRule(key: "evil"), KeywordRule(value: "bad.*"), KeywordRule(key: "n", value: 1), KeywordRule(key: "b", value: true),
            ])
        #expect(set.security.idempotency == IdempotencyOptions(paths: ["classes/.*", "functions/.*"], ttl: 120))
        let empty = try Self.setup(["PARSE_SERVER_REQUEST_KEYWORD_DENYLIST": "[]"]).options
        #expect(empty.security.requestKeywordDenylist.isEmpty)
        let flat = try Self.setup([
            "PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_PATHS": "classes/.*,users", "PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_TTL": "30",
        ])
        #expect(flat.options.security.idempotency == IdempotencyOptions(paths: ["classes/.*", "users"], ttl: 30))

        for (name, value) in [
            ("PARSE_SERVER_REQUEST_KEYWORD_DENYLIST", "not json"), ("PARSE_SERVER_REQUEST_KEYWORD_DENYLIST", #"{"key":"a"}"#),
            ("PARSE_SERVER_REQUEST_KEYWORD_DENYLIST", #"[{"keys":"a"}]"#), ("PARSE_SERVER_REQUEST_KEYWORD_DENYLIST", #"[{"key":1}]"#),
            ("PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS", "{paths"), ("PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS", #"{"ttl":0}"#),
            ("PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS", #"{"paths":"classes"}"#), ("PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS", "[]"),
            ("PARSE_SERVER_EMAIL_VERIFY_SUCCESS_ON_INVALID_EMAIL", "maybe"), ("PARSE_SERVER_ENFORCE_PRIVATE_USERS", "sometimes"),
            ("PARSE_SERVER_SESSION_LENGTH", "0"), ("PARSE_SERVER_PASSWORD_POLICY", #"{"maxPasswordAge":30}"#),
            ("PARSE_SERVER_PASSWORD_POLICY_MAX_PASSWORD_AGE", "30"), ("PARSE_SERVER_FILES_ADAPTER", "@parse/s3-files-adapter"),
        ] {
            let message = try Self.refusal([name: value])
            #expect(message.contains(name), "\(name)=\(value): \(message)")
        }
    }

    @Test("Parse Server's names for log settings, files adapters and password policy parts")
    func parseServerSpellings() throws {
        let logs = try ServerSettings.logSettings(OptionValues(environment: ["PARSE_SERVER_LOG_LEVEL": "warn", "JSON_LOGS": "true"]))
        #expect(logs.0 == .json && logs.1 == .warning)
        let verbose = try ServerSettings.logSettings(OptionValues(environment: ["VERBOSE": "1", "PARSLEY_LOG_FORMAT": "logfmt"]))
        #expect(verbose.0 == .logfmt && verbose.1 == .debug)
        for (name, expected) in [("GridFSBucketAdapter", FilesAdapter.database), ("@parse/fs-files-adapter", .filesystem), ("database", .database)] {
            let adapter = try ServerSettings.filesAdapter(OptionValues(environment: ["PARSE_SERVER_FILES_ADAPTER": name]))
            #expect("\(adapter)" == "\(expected)")
        }
        let policy = try Self.setup([
            "PARSE_SERVER_PASSWORD_POLICY_VALIDATOR_PATTERN": "^.{8,}$",
            "PARSE_SERVER_PASSWORD_POLICY_RESET_PASSWORD_SUCCESS_ON_INVALID_EMAIL": "false",
        ]).options.accounts.passwordPolicy
        #expect(policy?.validatorPattern == "^.{8,}$")
        #expect(policy?.resetPasswordSuccessOnInvalidEmail == false)
    }
}
