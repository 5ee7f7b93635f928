import Foundation
import Logging
import ParsleyCore
import ParsleyStorage
import Testing

@testable import ParsleyServer

/// Messages about options name the option and the problem, never its value: a value may be a key, a password, a
/// URI with a password, or a JSON option with credentials inside (an S3 files adapter's `secretAccessKey`). Every
/// option of `OptionTable` (and every variable of a part of one) is set, as a variable and as a config-file key,
/// to wrong values holding a sentinel; the start-up checks' error and log lines must never contain it.
@Suite("Options: messages never show values")
struct OptionSecretsTests {
    static let sentinel = "SENTINEL-7c1e9d"

    /// Wrong values shaped like what operators put in options.
    static let shapes: [String] = [
        sentinel,
        #"{"broken": "\#(sentinel)""#,
        #"{"module":"@parse/s3-files-adapter","options":{"bucket":"b","accessKey":"AKIA","secretAccessKey":"\#(sentinel)"}}"#,
        #"["\#(sentinel)", {"key": "\#(sentinel)", "value": ["\#(sentinel)"]}]"#,
        "mongodb://parse:\(sentinel)@db.example:27017/app",
        "postgres://parse:\(sentinel)@127.0.0.1:1/app",
        #"{"ios":{"token":{"key":"\#(sentinel)","keyId":"K","teamId":"T"},"host":"https://u:\#(sentinel)@h"},"#
            + #""android":{"firebaseServiceAccount":"\#(sentinel)"}}"#,
        #"[{"requestPath":"/x","requestTimeWindow":1000,"requestCount":1,"zone":"\#(sentinel)"}]"#,
        #"{"paths":["(\#(sentinel)"],"classNames":["(\#(sentinel)"],"validatorPattern":"(\#(sentinel)","fileExtensions":["(\#(sentinel)"]}"#,
        "(\(sentinel)",
        "true \(sentinel)",
        "12\(sentinel)",
    ]

    /// Folders the start creates (a wrong value would make one in the working directory); paths, never secrets.
    static let notSwept: Set<String> = ["dataDir", "filesDir"]

    /// Everything the start-up checks say about `values`: their error and their log lines.
    static func messages(_ values: OptionValues) async -> [String] {
        let capture = LogCapture()
        let logger = Logger(label: "parsley-option-secrets") { _ in capture }
        var said: [String] = []
        do {
            said += try values.checkUnsupported()
            let setup = try ServeSetup(values, logger: logger)
            if values.raw("databaseURI") != nil {
                let (database, _) = try await Serve.openDatabase(uri: setup.databaseURI, storage: setup.storage, logger: logger)
                try? await database.close()
            }
        } catch {
            said.append("\(error)")
        }
        return said + capture.lines.map(\.1)
    }

    @Test("every option and part variable, set to wrong values holding a secret: no message shows it")
    func noOptionMessageShowsItsValue() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-option-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let base = ["PARSLEY_DATA_DIR": dir.path, "PARSE_SERVER_MASTER_KEY": "unit-master-key"]
        var checked = 0
        var refusedSomewhere: Set<String> = []
        for spec in OptionTable.all where !Self.notSwept.contains(spec.key) {
            let variables = spec.env + spec.parts.flatMap(\.1)
            for shape in Self.shapes {
                var runs: [(String, OptionValues)] = variables.map { variable in
                    (variable, OptionValues(environment: base.merging([variable: shape]) { $1 }))
                }
                runs.append(("config file key \(spec.key)", OptionValues(environment: base, file: [spec.key: OptionValues.json(shape)])))
                for (way, values) in runs {
                    // Over a thousand start-ups that rarely wait for anything: let the other tests' tasks in between.
                    await Task.yield()
                    let said = await Self.messages(values)
                    checked += 1
                    if !said.isEmpty { refusedSomewhere.insert(spec.key) }
                    for line in said where line.contains(Self.sentinel) {
                        Issue.record("\(spec.key) via \(way) = \(shape): the message shows the value: \(line)")
                    }
                }
            }
        }
        #expect(checked > 1000)
        // The sweep reached the options of issue 28.
        for key in ["filesAdapter", "databaseURI", "push", "rateLimit", "auth", "emailAdapter", "passwordPolicy", "masterKeyIps"] {
            #expect(refusedSomewhere.contains(key), "\(key) was never refused or warned about")
        }
    }

    @Test("refusals still name the option and the problem")
    func refusalsNameTheOption() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-option-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let base = ["PARSLEY_DATA_DIR": dir.path, "PARSE_SERVER_MASTER_KEY": "unit-master-key"]
        for (variable, value, expected) in [
            // (An S3 adapter whose secret is under a name S3 does not use: no credentials; one without a bucket: none.)
            ("PARSE_SERVER_FILES_ADAPTER", Self.shapes[2], "PARSE_SERVER_FILES_ADAPTER (filesAdapter): filesAdapter (S3): credentials are required"),
            (
                "PARSE_SERVER_FILES_ADAPTER", "@parse/s3-files-adapter",
                "PARSE_SERVER_FILES_ADAPTER (filesAdapter): filesAdapter (S3): bucket is required"
            ),
            (
                "PARSE_SERVER_DATABASE_URI", Self.shapes[4],
                "PARSE_SERVER_DATABASE_URI must be sqlite:<path> or postgres://user:password@host:port/database, not mongodb:"
            ),
            ("PARSE_SERVER_DATABASE_URI", Self.shapes[5], "cannot use postgres://parse@127.0.0.1:1/app"),
            ("PARSE_SERVER_PUSH", Self.shapes[6], "push.android.firebaseServiceAccount: is neither the key's text nor the path of a readable file"),
            ("PARSE_SERVER_PUSH", Self.shapes[1], "PARSE_SERVER_PUSH (push) must be JSON or the path of a readable JSON file"),
            ("PARSE_SERVER_RATE_LIMIT", Self.shapes[7], "rate limit entry 0: zone must be ip, global, session or user"),
            ("PARSE_SERVER_MASTER_KEY_IPS", "10.0.0.1, \(Self.sentinel)", "entry 2 is not an IP address or CIDR range"),
            ("PARSE_SERVER_PORT", Self.sentinel, "PARSE_SERVER_PORT must be a whole number"),
            ("PARSE_SERVER_LOG_LEVEL", Self.sentinel, "PARSE_SERVER_LOG_LEVEL (logLevel) must be trace"),
            ("PARSE_SERVER_MAX_UPLOAD_SIZE", Self.sentinel, "PARSE_SERVER_MAX_UPLOAD_SIZE (maxUploadSize) must be a size"),
            ("PARSE_SERVER_LIVE_QUERY", Self.sentinel, "PARSE_SERVER_LIVE_QUERY (liveQuery) must be JSON and is not"),
            ("PARSE_SERVER_LIVE_QUERY", "[1]", "PARSE_SERVER_LIVE_QUERY (liveQuery) must be a JSON object, not an array"),
            (
                "PARSE_SERVER_AUTH_PROVIDERS", #"{"apple":{"clientSecret":"\#(Self.sentinel)"}}"#,
                "PARSE_SERVER_AUTH_PROVIDERS (auth): auth.apple: `clientId`"
            ),
            ("PARSE_SERVER_AUTH_PROVIDERS", #"{"facebook":{"appIds":[],"appSecret":"\#(Self.sentinel)"}}"#, "auth.facebook: `appIds` must be"),
        ] {
            let said = await Self.messages(OptionValues(environment: base.merging([variable: value]) { $1 }))
            #expect(said.contains { $0.contains(expected) }, "\(variable): \(said)")
            #expect(!said.contains { $0.contains(Self.sentinel) }, "\(variable): \(said)")
        }
    }

    @Test("URLs in messages and logs lose their password")
    func redactedURLs() {
        #expect(RedactedURL.string("postgres://parse:pw@db:5432/app?sslmode=require") == "postgres://parse:[redacted]@db:5432/app?sslmode=require")
        #expect(RedactedURL.string("postgres://parse:p@ss/w#rd@db/app") == "postgres://parse:[redacted]@db/app")
        #expect(RedactedURL.string("https://proxy.example:8443/apns") == "https://proxy.example:8443/apns")
        #expect(RedactedURL.string("https://user@proxy.example") == "https://user@proxy.example")
        #expect(RedactedURL.string("sqlite:/data/parsley.sqlite") == "sqlite:/data/parsley.sqlite")
        #expect(RedactedURL.scheme("mongodb+srv://u:p@h/db") == "mongodb+srv")
        #expect(RedactedURL.scheme("not a uri: at all") == nil)
        #expect(RedactedURL.scheme("/path/only") == nil)
    }
}
