import Logging
import ParsleyCore
import ParsleyDomain

/// Emails, password policy and account lockout from the environment. Parse Server's JSON-valued variables
/// (`PARSE_SERVER_PASSWORD_POLICY`, `PARSE_SERVER_ACCOUNT_LOCKOUT`) work, and flat variables override them.
extension ServerSettings {
    static func applyUserSettings(to options: inout ParseServerOptions, logger: Logger) throws {
        options.appName = env("PARSE_SERVER_APP_NAME", "APP_NAME")
        options.verifyUserEmails = try bool(nil, "PARSE_SERVER_VERIFY_USER_EMAILS", default: false)
        options.preventLoginWithUnverifiedEmail = try bool(nil, "PARSE_SERVER_PREVENT_LOGIN_WITH_UNVERIFIED_EMAIL", default: false)
        options.preventSignupWithUnverifiedEmail = try bool(nil, "PARSE_SERVER_PREVENT_SIGNUP_WITH_UNVERIFIED_EMAIL", default: false)
        if let seconds = try integer(nil, "PARSE_SERVER_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION", default: nil) {
            guard seconds > 0 else { throw Invalid(description: "PARSE_SERVER_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION must be a positive number of seconds") }
            options.emailVerifyTokenValidityDuration = Int64(seconds)
        }
        options.passwordPolicy = try passwordPolicy()
        options.accountLockout = try accountLockout()
        var emailLogger = logger
        emailLogger[metadataKey: "component"] = "email"
        if let adapter = try smtpAdapter() {
            options.emailAdapter = adapter
            logger.info("emails are sent through SMTP \(adapter.configuration.host):\(adapter.configuration.port)")
        } else {
            options.emailAdapter = LoggingEmailAdapter(logger: emailLogger)
            if options.verifyUserEmails {
                logger.warning("PARSE_SERVER_VERIFY_USER_EMAILS is on but PARSLEY_SMTP_HOST is not set: emails are only logged (links at LOG_LEVEL=debug)")
            }
        }
    }

    /// A JSON object from a variable, or nil.
    static func jsonObject(_ name: String) throws -> [String: JSONValue]? {
        guard let text = env(name) else { return nil }
        guard case .object(let o)? = try? JSONParser.parse(text) else { throw Invalid(description: "\(name) must be a JSON object, got '\(text)'") }
        return o
    }

    static func passwordPolicy() throws -> PasswordPolicy? {
        let json = try jsonObject("PARSE_SERVER_PASSWORD_POLICY")
        var policy = PasswordPolicy()
        var any = json != nil
        if let json {
            policy.validatorPattern = json["validatorPattern"]?.stringValue
            policy.validationError = json["validationError"]?.stringValue
            policy.doNotAllowUsername = json["doNotAllowUsername"]?.boolValue ?? false
            policy.maxPasswordHistory = json["maxPasswordHistory"]?.integerValue ?? 0
            policy.resetTokenValidityDuration = json["resetTokenValidityDuration"]?.integerValue.map(Int64.init)
            policy.resetTokenReuseIfValid = json["resetTokenReuseIfValid"]?.boolValue ?? false
            policy.resetPasswordSuccessOnInvalidEmail = json["resetPasswordSuccessOnInvalidEmail"]?.boolValue ?? true
        }
        if let pattern = env("PARSE_SERVER_PASSWORD_POLICY_PATTERN") {
            policy.validatorPattern = pattern
            any = true
        }
        if let message = env("PARSE_SERVER_PASSWORD_POLICY_VALIDATION_ERROR") {
            policy.validationError = message
            any = true
        }
        if env("PARSE_SERVER_PASSWORD_POLICY_DO_NOT_ALLOW_USERNAME") != nil {
            policy.doNotAllowUsername = try bool(nil, "PARSE_SERVER_PASSWORD_POLICY_DO_NOT_ALLOW_USERNAME", default: false)
            any = true
        }
        if let n = try integer(nil, "PARSE_SERVER_PASSWORD_POLICY_MAX_PASSWORD_HISTORY", default: nil) {
            policy.maxPasswordHistory = n
            any = true
        }
        if let n = try integer(nil, "PARSE_SERVER_PASSWORD_POLICY_RESET_TOKEN_VALIDITY_DURATION", default: nil) {
            policy.resetTokenValidityDuration = Int64(n)
            any = true
        }
        guard any else { return nil }
        if let pattern = policy.validatorPattern, !PasswordPolicy.isValidPattern(pattern) {
            throw Invalid(description: "password policy validatorPattern is not a valid regular expression: '\(pattern)'")
        }
        guard (0...20).contains(policy.maxPasswordHistory) else { throw Invalid(description: "password policy maxPasswordHistory must be 0 to 20") }
        if let d = policy.resetTokenValidityDuration, d <= 0 {
            throw Invalid(description: "password policy resetTokenValidityDuration must be a positive number of seconds")
        }
        return policy
    }

    static func accountLockout() throws -> AccountLockout? {
        let json = try jsonObject("PARSE_SERVER_ACCOUNT_LOCKOUT")
        var duration = json?["duration"]?.integerValue
        var threshold = json?["threshold"]?.integerValue
        var unlock = json?["unlockOnPasswordReset"]?.boolValue ?? false
        if let d = try integer(nil, "PARSE_SERVER_ACCOUNT_LOCKOUT_DURATION", default: nil) { duration = d }
        if let t = try integer(nil, "PARSE_SERVER_ACCOUNT_LOCKOUT_THRESHOLD", default: nil) { threshold = t }
        unlock = try bool(nil, "PARSE_SERVER_ACCOUNT_LOCKOUT_UNLOCK_ON_PASSWORD_RESET", default: unlock)
        guard duration != nil || threshold != nil else { return nil }
        guard let duration, (1...99_999).contains(duration) else {
            throw Invalid(description: "account lockout duration must be 1 to 99999 minutes (PARSE_SERVER_ACCOUNT_LOCKOUT_DURATION)")
        }
        guard let threshold, (1...999).contains(threshold) else {
            throw Invalid(description: "account lockout threshold must be 1 to 999 attempts (PARSE_SERVER_ACCOUNT_LOCKOUT_THRESHOLD)")
        }
        return AccountLockout(duration: duration, threshold: threshold, unlockOnPasswordReset: unlock)
    }

    static func smtpAdapter() throws -> SMTPEmailAdapter? {
        guard let host = env("PARSLEY_SMTP_HOST") else { return nil }
        guard let from = env("PARSLEY_SMTP_FROM") else {
            throw Invalid(description: "PARSLEY_SMTP_FROM (the sender address) is required with PARSLEY_SMTP_HOST")
        }
        let port = try integer(nil, "PARSLEY_SMTP_PORT", default: 25) ?? 25
        guard (1...65_535).contains(port) else { throw Invalid(description: "PARSLEY_SMTP_PORT must be 1 to 65535") }
        let authText = env("PARSLEY_SMTP_AUTH")?.lowercased() ?? "automatic"
        guard let auth = SMTPEmailAdapter.AuthMethod(rawValue: authText) else {
            throw Invalid(description: "PARSLEY_SMTP_AUTH must be automatic, plain or login, got '\(authText)'")
        }
        return SMTPEmailAdapter(
            .init(
                host: host, port: port, username: env("PARSLEY_SMTP_USERNAME"), password: env("PARSLEY_SMTP_PASSWORD"), from: from,
                heloName: env("PARSLEY_SMTP_HELO_NAME") ?? "localhost", authMethod: auth))
    }
}
