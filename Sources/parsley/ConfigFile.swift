import Foundation
import ParsleyCore

/// `parsley --config parsley.json` / `PARSE_SERVER_CONFIG`: a JSON file in Parse Server's format
/// (`{"appId":"…","masterKey":"…","databaseURI":"…","port":1337,"rateLimit":[…]}`). Each known option fills the
/// environment variable of the same setting unless that variable is already set, so the order is
/// flag > environment > file > default and every setting is validated (and named) in one place.
enum ConfigFile {
    /// Parse Server option → environment variable.
    static let options: [String: String] = [
        "appId": "PARSE_SERVER_APPLICATION_ID", "applicationId": "PARSE_SERVER_APPLICATION_ID",
        "masterKey": "PARSE_SERVER_MASTER_KEY", "restAPIKey": "PARSE_SERVER_REST_API_KEY", "clientKey": "PARSE_SERVER_CLIENT_KEY",
        "javascriptKey": "PARSE_SERVER_JAVASCRIPT_KEY", "dotNetKey": "PARSE_SERVER_DOT_NET_KEY",
        "databaseURI": "PARSE_SERVER_DATABASE_URI", "host": "PARSE_SERVER_HOST", "port": "PARSE_SERVER_PORT",
        "mountPath": "PARSE_SERVER_MOUNT_PATH", "publicServerURL": "PARSE_SERVER_PUBLIC_SERVER_URL",
        "maxUploadSize": "PARSE_SERVER_MAX_UPLOAD_SIZE", "allowClientClassCreation": "PARSE_SERVER_ALLOW_CLIENT_CLASS_CREATION",
        "defaultLimit": "PARSE_SERVER_DEFAULT_LIMIT", "maxLimit": "PARSE_SERVER_MAX_LIMIT", "batchLimit": "PARSE_SERVER_BATCH_LIMIT",
        "appName": "PARSE_SERVER_APP_NAME", "verifyUserEmails": "PARSE_SERVER_VERIFY_USER_EMAILS",
        "preventLoginWithUnverifiedEmail": "PARSE_SERVER_PREVENT_LOGIN_WITH_UNVERIFIED_EMAIL",
        "preventSignupWithUnverifiedEmail": "PARSE_SERVER_PREVENT_SIGNUP_WITH_UNVERIFIED_EMAIL",
        "emailVerifyTokenValidityDuration": "PARSE_SERVER_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION",
        "passwordPolicy": "PARSE_SERVER_PASSWORD_POLICY", "accountLockout": "PARSE_SERVER_ACCOUNT_LOCKOUT",
        "rateLimit": "PARSE_SERVER_RATE_LIMIT", "logLevel": "LOG_LEVEL",
        // Parsley's own settings, under the same camel-case names as their flags.
        "dataDir": "PARSLEY_DATA_DIR", "logFormat": "PARSLEY_LOG_FORMAT", "metricsPort": "PARSLEY_METRICS_PORT",
        "metricsHost": "PARSLEY_METRICS_HOST", "shutdownTimeout": "PARSLEY_SHUTDOWN_TIMEOUT",
        "smtpHost": "PARSLEY_SMTP_HOST", "smtpPort": "PARSLEY_SMTP_PORT", "smtpUsername": "PARSLEY_SMTP_USERNAME",
        "smtpPassword": "PARSLEY_SMTP_PASSWORD", "smtpAuth": "PARSLEY_SMTP_AUTH", "smtpFrom": "PARSLEY_SMTP_FROM",
        "smtpHeloName": "PARSLEY_SMTP_HELO_NAME", "databasePoolSize": "PARSLEY_DATABASE_POOL_SIZE",
        "statementTimeoutMs": "PARSLEY_STATEMENT_TIMEOUT_MS", "postgresPreparedStatements": "PARSLEY_POSTGRES_PREPARED_STATEMENTS",
        "postgresPointReadConcurrency": "PARSLEY_POSTGRES_POINT_READ_CONCURRENCY",
        "filesDir": "PARSLEY_FILES_DIR", "uploadStallTimeout": "PARSLEY_UPLOAD_STALL_TIMEOUT",
    ]

    /// Parse Server options that mean nothing here and are accepted silently.
    static let ignored: Set<String> = ["serverURL", "cloud", "liveQuery", "push", "filesAdapter", "databaseOptions", "logsFolder", "verbose", "silent"]

    /// Reads `path` and fills the environment; returns the names of options it did not know (for a warning).
    @discardableResult
    static func apply(path: String) throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServerSettings.Invalid(description: "PARSE_SERVER_CONFIG: cannot read config file '\(path)'")
        }
        guard case .object(let object)? = try? JSONParser.parse(String(decoding: data, as: UTF8.self)) else {
            throw ServerSettings.Invalid(description: "PARSE_SERVER_CONFIG: '\(path)' is not a JSON object")
        }
        var unknown: [String] = []
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            guard let variable = options[key] else {
                if !ignored.contains(key) { unknown.append(key) }
                continue
            }
            let text: String
            switch value {
            case .string(let s): text = s
            case .null: continue
            case .bool(let b): text = b ? "true" : "false"
            case .object, .array: text = String(decoding: JSONWriter.bytes(value), as: UTF8.self)
            case .int(let n): text = String(n)
            case .double(let d): text = d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
            }
            if let current = ProcessInfo.processInfo.environment[variable], !current.isEmpty { continue }
            setenv(variable, text, 1)
        }
        return unknown
    }
}
