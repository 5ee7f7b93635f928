import Foundation
import HTTPTypes
import HummingbirdTesting
import ParsleyCore
import ParsleyPushFakes
import Testing

@testable import ParsleyServer

/// The `parsley` executable given options that hold secrets (issue 28): whether it refuses them or starts, nothing it
/// prints (standard output and error) shows the secret, and a refusal names the option.
@Suite("Process: option values holding secrets are never printed", .serialized)
struct OptionSecretsProcessTests {
    static let secret = "SENTINEL-5b0d2a"

    enum Expect: Sendable {
        /// Exit status 2 with a line containing this text.
        case refused(naming: String)
        /// Starts (healthy), and its output contains this text.
        case starts(saying: String)
    }

    struct Case: CustomStringConvertible, Sendable {
        var description: String
        var arguments: [String] = []
        var environment: [String: String] = [:]
        /// Config-file JSON (written to a file passed with `--config`).
        var file: String?
        var expect: Expect
    }

    static var cases: [Case] {
        let s = secret
        let s3 =
            #"{"module":"@parse/s3-files-adapter","options":{"bucket":"b","region":"eu-west-1","accessKey":"AKIAEXAMPLE","secretAccessKey":"\#(s)"}}"#
        let key = PushTestKeys.apnsKey()
        let pem = JSONWriter.string(.string(key.pem))
        return [
            Case(
                description: "S3 files adapter (variable)", environment: ["PARSE_SERVER_FILES_ADAPTER": s3],
                expect: .refused(naming: "PARSE_SERVER_FILES_ADAPTER (filesAdapter)")),
            Case(
                description: "S3 files adapter (flag)", arguments: ["--filesAdapter", s3],
                expect: .refused(naming: "PARSE_SERVER_FILES_ADAPTER (--filesAdapter)")),
            Case(
                description: "S3 files adapter (config file)", file: #"{"filesAdapter":\#(s3)}"#,
                expect: .refused(naming: "PARSE_SERVER_FILES_ADAPTER (config file key filesAdapter)")),
            Case(
                description: "S3 files adapter by name", environment: ["PARSE_SERVER_FILES_ADAPTER": "s3://AKIA:\(s)@bucket"],
                expect: .refused(naming: "PARSE_SERVER_FILES_ADAPTER")),
            Case(
                description: "MongoDB URI with a password", environment: ["PARSE_SERVER_DATABASE_URI": "mongodb://parse:\(s)@db.example:27017/app"],
                expect: .refused(naming: "PARSE_SERVER_DATABASE_URI")),
            Case(
                description: "PostgreSQL URI nobody answers", environment: ["PARSE_SERVER_DATABASE_URI": "postgres://parse:\(s)@127.0.0.1:1/app"],
                expect: .refused(naming: "PARSE_SERVER_DATABASE_URI")),
            Case(
                description: "push key that is neither PEM nor a file",
                environment: ["PARSE_SERVER_PUSH": #"{"ios":{"token":{"key":"\#(s)","keyId":"K","teamId":"T"},"topic":"com.example.app"}}"#],
                expect: .refused(naming: "push.ios.token.key")),
            Case(
                description: "push JSON with a typo",
                environment: ["PARSE_SERVER_PUSH": #"{"ios":{"token":{"key":\#(pem),"keyId":"\#(s)","teamId":"T"},}"#],
                expect: .refused(naming: "PARSE_SERVER_PUSH (push)")),
            Case(
                description: "FCM service account JSON with a typo",
                environment: ["PARSE_SERVER_PUSH": #"{"android":{"firebaseServiceAccount":"{\"private_key\":\"\#(s)\""}}"#],
                expect: .refused(naming: "push.android.firebaseServiceAccount")),
            Case(
                description: "email adapter with an SMTP password (ignored)",
                environment: [
                    "PARSE_SERVER_EMAIL_ADAPTER": #"{"module":"parse-smtp-template","options":{"host":"smtp.example","user":"u","password":"\#(s)"}}"#
                ],
                expect: .starts(saying: "Parse Server option emailAdapter (PARSE_SERVER_EMAIL_ADAPTER) is not supported and is ignored")),
            Case(
                description: "SMTP password with a bad SMTP setting",
                environment: ["PARSLEY_SMTP_HOST": "smtp.example", "PARSLEY_SMTP_PASSWORD": s, "PARSLEY_SMTP_AUTH": s],
                expect: .refused(naming: "PARSLEY_SMTP_AUTH")),
            Case(
                description: "rate limit with a bad zone",
                environment: ["PARSE_SERVER_RATE_LIMIT": #"[{"requestPath":"/x","requestTimeWindow":1000,"requestCount":1,"zone":"\#(s)"}]"#],
                expect: .refused(naming: "PARSE_SERVER_RATE_LIMIT")),
            Case(
                description: "rate limit that is not JSON", environment: ["PARSE_SERVER_RATE_LIMIT": "[{\(s)"],
                expect: .refused(naming: "PARSE_SERVER_RATE_LIMIT")),
            Case(
                description: "auth providers with an app secret and no client id",
                environment: ["PARSE_SERVER_AUTH_PROVIDERS": #"{"apple":{"clientSecret":"\#(s)"}}"#],
                expect: .refused(naming: "PARSE_SERVER_AUTH_PROVIDERS (auth): auth.apple: `clientId`")),
            Case(
                description: "facebook Graph API settings with an app secret and no app id",
                environment: ["PARSE_SERVER_AUTH_PROVIDERS": #"{"facebook":{"appIds":[],"appSecret":"\#(s)"}}"#],
                expect: .refused(naming: "PARSE_SERVER_AUTH_PROVIDERS (auth): auth.facebook: `appIds` must be")),
            Case(
                description: "encryption key with the S3 files adapter",
                environment: [
                    "PARSE_SERVER_ENCRYPTION_KEY": s, "PARSE_SERVER_FILES_ADAPTER": "@parse/s3-files-adapter", "S3_BUCKET": "b",
                    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "not-the-secret", "AWS_REGION": "us-east-1",
                    "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9",
                ],
                expect: .refused(naming: "PARSE_SERVER_ENCRYPTION_KEY (encryptionKey): the S3 files adapter does not encrypt")),
            Case(
                description: "fs adapter options with an encryption key and an option that is not supported",
                environment: [
                    "PARSE_SERVER_FILES_ADAPTER": #"{"module":"@parse/fs-files-adapter","options":{"encryptionKey":"\#(s)","filesSubDirectory":"x"}}"#
                ],
                expect: .refused(naming: "PARSE_SERVER_FILES_ADAPTER")),
            Case(
                description: "password policy with a bad part", environment: ["PARSE_SERVER_PASSWORD_POLICY": #"{"validatorPattern":"(\#(s)"}"#],
                expect: .refused(naming: "validatorPattern")),
            Case(
                description: "a flag left without its value", arguments: ["--clientKey", "--masterKey", s],
                expect: .refused(naming: "--clientKey needs a value")),
            Case(
                description: "a secret taken for the config file's path", arguments: [s],
                expect: .refused(naming: "PARSE_SERVER_CONFIG: cannot read the config file")),
            Case(description: "a key in a number option", environment: ["PARSLEY_METRICS_PORT": s], expect: .refused(naming: "PARSLEY_METRICS_PORT")),
            Case(
                description: "a key in a boolean option", environment: ["PARSE_SERVER_VERIFY_USER_EMAILS": s],
                expect: .refused(naming: "PARSE_SERVER_VERIFY_USER_EMAILS")),
            Case(
                description: "webhook key, read-only master key and an APNs proxy with a password (starts)",
                environment: [
                    "PARSE_SERVER_WEBHOOK_KEY": s, "PARSE_SERVER_READ_ONLY_MASTER_KEY": "ro-\(s)",
                    "PARSE_SERVER_PUSH":
                        #"{"ios":{"token":{"key":\#(pem),"keyId":"K","teamId":"T"},"topic":"com.example.app","#
                        + #""host":"https://apns:\#(s)@127.0.0.1:9"}}"#,
                ],
                expect: .starts(saying: "host https://apns:[redacted]@127.0.0.1:9")),
        ]
    }

    @Test("wrong options holding secrets: refused naming the option, or started, never printed", arguments: Self.cases)
    func secretsAreNeverPrinted(_ c: Case) async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        var arguments = c.arguments
        if let file = c.file {
            let path = dir.appendingPathComponent("config.json")
            try Data(file.utf8).write(to: path)
            arguments += ["--config", path.path]
        }
        let environment = c.environment.merging([
            "PORT": "0", "PARSE_SERVER_HOST": "127.0.0.1", "PARSE_SERVER_MASTER_KEY": ParseServerConfigProcessTests.masterKey,
        ]) { a, _ in a }
        let child = try ParseServerConfigProcessTests.Child(arguments, environment: environment, dataDir: dir)
        defer { child.process.killNow() }
        switch c.expect {
        case .refused(let name):
            await child.process.exited()
            let output = child.output
            #expect(child.process.terminationStatus == 2, "\(c): \(output)")
            #expect(output.contains(name), "\(c): does not name \(name): \(output)")
            #expect(!output.contains(Self.secret), "\(c): the secret is printed: \(output)")
        case .starts(let said):
            try await child.waitUntilHealthy(mount: "/parse")
            let output = child.output
            #expect(output.contains(said), "\(c): \(output)")
            #expect(!output.contains(Self.secret), "\(c): the secret is printed: \(output)")
        }
    }

    @Test("a PostgreSQL URI with a password: the start-up line shows the database without it")
    func databasePasswordIsNotLogged() async throws {
        guard Backend.all.contains(.postgres) else { return }
        try await PostgresCluster.shared.withFreshDatabase { url in
            // The test cluster trusts local connections, so any password is accepted.
            guard let scheme = url.range(of: "://"), let at = url.range(of: "@"), !url[scheme.upperBound..<at.lowerBound].contains(":") else {
                return
            }
            let withPassword = String(url[..<at.lowerBound]) + ":" + Self.secret + String(url[at.lowerBound...])
            let dir = try ProcessTests.tempDir()
            defer { try? FileManager.default.removeItem(at: dir) }
            let child = try ParseServerConfigProcessTests.Child(
                [], environment: ["PORT": "0", "PARSE_SERVER_HOST": "127.0.0.1", "PARSE_SERVER_DATABASE_URI": withPassword], dataDir: dir)
            defer { child.process.killNow() }
            try await child.waitUntilHealthy(mount: "/parse")
            let output = child.output
            #expect(output.contains("database postgres://"), "\(output)")
            #expect(!output.contains(Self.secret), "\(output)")
        }
    }
}
