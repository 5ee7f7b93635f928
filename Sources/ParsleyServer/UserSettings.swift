import Foundation
import Logging
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyPush

/// Users, emails, password policy and account lockout. Parse Server's JSON-valued options (`passwordPolicy`,
/// `accountLockout`) work, and their single variables (`PARSE_SERVER_PASSWORD_POLICY_*`) override their parts.
extension ServerSettings {
    static func applyUserSettings(to options: inout ParseServerOptions, values: OptionValues, logger: Logger) throws {
        options.appName = values.string("appName")
        options.email.verifyUserEmails = try values.bool("verifyUserEmails", default: false)
        options.email.preventLoginWithUnverifiedEmail = try values.bool("preventLoginWithUnverifiedEmail", default: false)
        options.email.preventSignupWithUnverifiedEmail = try values.bool("preventSignupWithUnverifiedEmail", default: false)
        if let seconds = try values.integer("emailVerifyTokenValidityDuration", default: nil) {
            guard seconds > 0 else {
                throw Invalid(description: "PARSE_SERVER_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION must be a positive number of seconds")
            }
            options.email.verifyTokenValidityDuration = Int64(seconds)
        }
        options.email.verifySuccessOnInvalidEmail = try values.bool("emailVerifySuccessOnInvalidEmail", default: true)
        options.email.sendUserEmailVerification = try values.bool("sendUserEmailVerification", default: true)
        options.email.verifyTokenReuseIfValid = try values.bool("emailVerifyTokenReuseIfValid", default: false)
        if options.email.verifyTokenReuseIfValid, options.email.verifyTokenValidityDuration == nil {
            throw Invalid(
                description: "PARSE_SERVER_EMAIL_VERIFY_TOKEN_REUSE_IF_VALID needs PARSE_SERVER_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION")
        }
        options.accounts.convertEmailToLowercase = try values.bool("convertEmailToLowercase", default: false)
        options.accounts.convertUsernameToLowercase = try values.bool("convertUsernameToLowercase", default: false)
        options.accounts.enforcePrivateUsers = try values.bool("enforcePrivateUsers", default: true)
        options.changeEvents = try values.bool("changeEvents", default: false)
        options.accounts.enableAnonymousUsers = try values.bool("enableAnonymousUsers", default: true)
        options.accounts.auth = try authProviders(values, logger: logger)
        if let seconds = try values.integer("sessionLength", default: nil) {
            guard seconds > 0 else { throw Invalid(description: "PARSE_SERVER_SESSION_LENGTH must be a positive number of seconds") }
            options.accounts.sessionLength = Int64(seconds)
        }
        options.accounts.passwordPolicy = try passwordPolicy(values)
        options.accounts.lockout = try accountLockout(values)
        var emailLogger = logger
        emailLogger[metadataKey: "component"] = "email"
        if let adapter = try smtpAdapter(values) {
            options.email.adapter = adapter
            logger.info("emails are sent through SMTP \(adapter.configuration.host):\(adapter.configuration.port)")
        } else {
            options.email.adapter = LoggingEmailAdapter(logger: emailLogger)
            if options.email.verifyUserEmails {
                logger.warning(
                    "PARSE_SERVER_VERIFY_USER_EMAILS is on but PARSLEY_SMTP_HOST is not set: emails are only logged (links at LOG_LEVEL=debug)")
            }
        }
        options.email.templates = try emailTemplates(values)
    }

    /// `emailTemplates` (`PARSLEY_EMAIL_TEMPLATES`): a folder of `verification_email` and `password_reset_email`
    /// templates, `.subject.txt`, `.txt` and `.html`, each optional; a folder without any of them stops the start.
    static func emailTemplates(_ values: OptionValues) throws -> EmailTemplateSet {
        guard let folder = values.string("emailTemplates") else { return EmailTemplateSet() }
        func read(_ name: String) throws -> String? {
            let path = URL(fileURLWithPath: folder).appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw Invalid(description: "PARSLEY_EMAIL_TEMPLATES: \(name) in the folder cannot be read as UTF-8 text")
            }
        }
        func template(_ base: String) throws -> EmailTemplateSet.Template {
            var subject = try read(base + ".subject.txt")
            while let last = subject?.last, last == "\n" || last == "\r" { subject?.removeLast() }
            return .init(subject: subject, text: try read(base + ".txt"), html: try read(base + ".html"))
        }
        let set = EmailTemplateSet(verification: try template("verification_email"), passwordReset: try template("password_reset_email"))
        if set == EmailTemplateSet() {
            throw Invalid(
                description: "PARSLEY_EMAIL_TEMPLATES: the folder holds none of verification_email.{subject.txt,txt,html}, "
                    + "password_reset_email.{subject.txt,txt,html}")
        }
        return set
    }

    static func passwordPolicy(_ values: OptionValues) throws -> PasswordPolicy? {
        let json = try values.object("passwordPolicy")
        var policy = PasswordPolicy()
        var any = json != nil
        func number(_ value: JSONValue, _ part: String, _ name: String) throws -> Int {
            guard let n = value.integerValue, n >= 0 else { throw Invalid(description: "\(name): \(part) must be a whole number") }
            return n
        }
        func flag(_ value: JSONValue, _ part: String, _ name: String) throws -> Bool {
            guard let b = value.boolValue else { throw Invalid(description: "\(name): \(part) must be true or false") }
            return b
        }
        if let (object, name) = json {
            for (part, value) in object where value != .null {
                switch part {
                case "validatorPattern":
                    guard let s = value.stringValue else { throw Invalid(description: "\(name): validatorPattern must be a string") }
                    policy.validatorPattern = s
                case "validationError": policy.validationError = value.stringValue
                case "doNotAllowUsername": policy.doNotAllowUsername = try flag(value, part, name)
                case "maxPasswordHistory": policy.maxPasswordHistory = try number(value, part, name)
                case "resetTokenValidityDuration": policy.resetTokenValidityDuration = Int64(try number(value, part, name))
                case "resetTokenReuseIfValid": policy.resetTokenReuseIfValid = try flag(value, part, name)
                case "resetPasswordSuccessOnInvalidEmail": policy.resetPasswordSuccessOnInvalidEmail = try flag(value, part, name)
                case "maxPasswordAge" where value.integerValue == 0: continue
                case "maxPasswordAge", "validatorCallback":
                    throw Invalid(
                        description:
                            "refusing to start: passwordPolicy.\(part) (\(name)) is not supported by Parsley; passwords would not be checked as configured"
                    )
                default: continue
                }
            }
        }
        func part(_ part: String) -> (String, name: String)? {
            guard let found = values.part("passwordPolicy", part) else { return nil }
            any = true
            return found
        }
        if let (text, _) = part("validatorPattern") { policy.validatorPattern = text }
        if let (text, _) = part("validationError") { policy.validationError = text }
        if let (text, name) = part("doNotAllowUsername") { policy.doNotAllowUsername = try OptionValues.bool(text, name: name) }
        if let (text, name) = part("maxPasswordHistory") { policy.maxPasswordHistory = try OptionValues.integer(text, name: name) }
        if let (text, name) = part("resetTokenValidityDuration") {
            policy.resetTokenValidityDuration = Int64(try OptionValues.integer(text, name: name))
        }
        if let (text, name) = part("resetTokenReuseIfValid") { policy.resetTokenReuseIfValid = try OptionValues.bool(text, name: name) }
        if let (text, name) = part("resetPasswordSuccessOnInvalidEmail") {
            policy.resetPasswordSuccessOnInvalidEmail = try OptionValues.bool(text, name: name)
        }
        for refused in ["maxPasswordAge", "validatorCallback"] {
            if let (text, name) = values.part("passwordPolicy", refused), text != "0" {
                throw Invalid(
                    description:
                        "refusing to start: passwordPolicy.\(refused) (\(name)) is not supported by Parsley; passwords would not be checked as configured"
                )
            }
        }
        guard any else { return nil }
        if let pattern = policy.validatorPattern, !PasswordPolicy.isValidPattern(pattern) {
            throw Invalid(description: "password policy validatorPattern (PARSE_SERVER_PASSWORD_POLICY) is not a valid regular expression")
        }
        guard (0...20).contains(policy.maxPasswordHistory) else { throw Invalid(description: "password policy maxPasswordHistory must be 0 to 20") }
        if let d = policy.resetTokenValidityDuration, d <= 0 {
            throw Invalid(description: "password policy resetTokenValidityDuration must be a positive number of seconds")
        }
        return policy
    }

    static func accountLockout(_ values: OptionValues) throws -> AccountLockout? {
        let json = try values.object("accountLockout")?.0
        var duration = json?["duration"]?.integerValue
        var threshold = json?["threshold"]?.integerValue
        var unlock = json?["unlockOnPasswordReset"]?.boolValue ?? false
        if let (text, name) = values.part("accountLockout", "duration") { duration = try OptionValues.integer(text, name: name) }
        if let (text, name) = values.part("accountLockout", "threshold") { threshold = try OptionValues.integer(text, name: name) }
        if let (text, name) = values.part("accountLockout", "unlockOnPasswordReset") { unlock = try OptionValues.bool(text, name: name) }
        guard duration != nil || threshold != nil else { return nil }
        guard let duration, (1...99_999).contains(duration) else {
            throw Invalid(description: "account lockout duration must be 1 to 99999 minutes (PARSE_SERVER_ACCOUNT_LOCKOUT_DURATION)")
        }
        guard let threshold, (1...999).contains(threshold) else {
            throw Invalid(description: "account lockout threshold must be 1 to 999 attempts (PARSE_SERVER_ACCOUNT_LOCKOUT_THRESHOLD)")
        }
        return AccountLockout(duration: duration, threshold: threshold, unlockOnPasswordReset: unlock)
    }

    static func smtpAdapter(_ values: OptionValues) throws -> SMTPEmailAdapter? {
        // Every part is read (and checked) even without a host, so a typo shows up before mails are needed.
        let host = values.string("smtpHost")
        let from = values.string("smtpFrom")
        let port = try values.integer("smtpPort", default: 25) ?? 25
        guard (1...65_535).contains(port) else { throw Invalid(description: "PARSLEY_SMTP_PORT must be 1 to 65535") }
        let authText = values.string("smtpAuth")?.lowercased() ?? "automatic"
        guard let auth = SMTPEmailAdapter.AuthMethod(rawValue: authText) else {
            throw Invalid(description: "PARSLEY_SMTP_AUTH must be automatic, plain or login")
        }
        let username = values.string("smtpUsername")
        let password = values.string("smtpPassword")
        let helo = values.string("smtpHeloName") ?? "localhost"
        let securityText = values.string("smtpSecurity")?.lowercased() ?? "starttls"
        guard let security = SMTPEmailAdapter.Security(rawValue: securityText) else {
            throw Invalid(description: "PARSLEY_SMTP_SECURITY must be starttls, tls or none")
        }
        let caFile = values.string("smtpCAFile")
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw Invalid(description: "PARSLEY_SMTP_CA_FILE: the file cannot be read")
        }
        guard let host else { return nil }
        guard let from else {
            throw Invalid(description: "PARSLEY_SMTP_FROM (the sender address) is required with PARSLEY_SMTP_HOST")
        }
        return SMTPEmailAdapter(
            .init(
                host: host, port: port, username: username, password: password, from: from, heloName: helo, authMethod: auth,
                security: security, caFile: caFile))
    }

    /// `requestKeywordDenylist` (Parse Server's JSON array of `{key, value}`) and `idempotencyOptions`
    /// (`{paths, ttl}`); they are enforced by the request pipeline.
    static func applyRequestSettings(to options: inout ParseServerOptions, values: OptionValues) throws {
        if let (value, name) = try values.json("requestKeywordDenylist") {
            options.security.requestKeywordDenylist = try keywordRules(value, name: name)
        }
        options.security.idempotency = try idempotency(values)
        if let (check, name) = try values.object("security") {
            for key in ["enableCheck", "enableCheckLog"] where check[key] != nil && check[key]?.boolValue == nil {
                throw Invalid(description: "\(name): \(key) must be true or false")
            }
            options.security.enableCheck = check["enableCheck"]?.boolValue ?? false
            options.security.enableCheckLog = check["enableCheckLog"]?.boolValue ?? false
        }
        options.security.masterKeyIps = try masterKeyIps(values)
        options.security.readOnlyMasterKeyIps = try ipList(values, "readOnlyMasterKeyIps")
        options.allowAggregationForReadOnlyMasterKey = try values.bool("allowAggregationForReadOnlyMasterKey", default: true)
        options.webhookKey = values.string("webhookKey")
        if let ms = try values.integer("webhookTimeout", default: nil) {
            guard ms >= 1 else { throw Invalid(description: "\(OptionTable.spec("webhookTimeout").shownName) must be at least 1") }
            options.webhookTimeout = .milliseconds(ms)
        }
        if let ms = try values.integer("schedulerInterval", default: nil) {
            guard ms >= 1 else { throw Invalid(description: "\(OptionTable.spec("schedulerInterval").shownName) must be at least 1") }
            options.schedulerInterval = .milliseconds(ms)
        }
    }

    /// Parse Server's `push` option: JSON, or the path of a JSON file; nil when not set (or `{}`).
    /// Entries Parsley cannot send through (certificate-based APNs, the legacy FCM `apiKey`) are left out with a
    /// warning, so an existing Parse Server config still starts; a token-auth or service-account entry with a
    /// mistake stops the start.
    static func pushConfiguration(_ values: OptionValues, logger: Logger) throws -> PushConfiguration? {
        guard let (given, raw) = try values.jsonOrFile("push") else { return nil }
        let name = OptionTable.spec("push").shownName
        let option = dropUnsupportedPush(given) { problem in
            logger.warning("Parse Server option push (\(raw.name)): \(problem)")
        }
        if option.objectValue?.isEmpty != false { return nil }
        do {
            return try PushConfiguration(option: option)
        } catch {
            throw Invalid(description: "\(name): \(error)")
        }
    }

    /// The `push` option without the entries Parsley cannot use, each reported.
    static func dropUnsupportedPush(_ option: JSONValue, report: (String) -> Void) -> JSONValue {
        guard case .object(var keys) = option else { return option }
        for key in PushConfiguration.appleKeys {
            guard let value = keys[key] else { continue }
            let entries = value.arrayValue ?? [value]
            let usable = entries.filter { entry in
                let certificate = entry["token"] == nil && (entry["pfx"] != nil || entry["cert"] != nil)
                if certificate {
                    report(
                        "certificate-based APNs (`pfx`/`cert`) for \(key) is not supported and is ignored; use token auth (`token: {key, keyId, teamId}`)"
                    )
                }
                return !certificate
            }
            if usable.isEmpty {
                keys.removeValue(forKey: key)
            } else {
                keys[key] = value.arrayValue != nil ? .array(usable) : usable[0]
            }
        }
        if let android = keys["android"], android["firebaseServiceAccount"] == nil, android["apiKey"] != nil {
            report(
                "the legacy FCM `apiKey` (shut down by Google in 2024) is not supported and is ignored; use `firebaseServiceAccount` (FCM HTTP v1)")
            keys.removeValue(forKey: "android")
        }
        return .object(keys)
    }

    /// `masterKeyIps`: a JSON array or a comma list of addresses and CIDR ranges (Parse Server's array parser).
    static func masterKeyIps(_ values: OptionValues) throws -> [IPRange]? { try ipList(values, "masterKeyIps") }

    /// `masterKeyIps`, `maintenanceKeyIps`: a JSON array or a comma list of addresses and CIDR ranges.
    static func ipList(_ values: OptionValues, _ key: String) throws -> [IPRange]? {
        guard let raw = values.string(key) else { return nil }
        let name = OptionTable.spec(key).shownName
        let entries: [String]
        if let list = try? JSONParser.parse(raw).arrayValue {
            entries = try list.map { item in
                guard let s = item.stringValue else { throw Invalid(description: "\(name): entries must be strings, not \(OptionValues.kind(item))") }
                return s
            }
        } else {
            entries = raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return try entries.enumerated().map { i, entry in
            guard let range = IPRange(entry) else { throw Invalid(description: "\(name): entry \(i + 1) is not an IP address or CIDR range") }
            return range
        }
    }

    static func keywordRules(_ value: JSONValue, name: String) throws -> [KeywordRule] {
        let problem = "must be a JSON array of {\"key\": …, \"value\": …} objects"
        guard case .array(let items) = value else { throw Invalid(description: "\(name) \(problem), not \(OptionValues.kind(value))") }
        return try items.enumerated().map { i, item in
            guard case .object(let o) = item, !o.isEmpty, o.keys.allSatisfy({ $0 == "key" || $0 == "value" }) else {
                throw Invalid(description: "\(name) \(problem); entry \(i + 1) is not")
            }
            var rule = KeywordRule()
            if let key = o["key"] {
                guard case .string(let k) = key else {
                    throw Invalid(description: "\(name): entry \(i + 1): key must be a string, not \(OptionValues.kind(key))")
                }
                rule.key = k
            }
            if let v = o["value"] {
                switch v {
                case .string, .bool, .int, .double: rule.value = v
                default: throw Invalid(description: "\(name): entry \(i + 1): value must be a string, number or boolean, not \(OptionValues.kind(v))")
                }
            }
            return rule
        }
    }

    static func idempotency(_ values: OptionValues) throws -> IdempotencyOptions? {
        var paths: [String] = []
        var ttl = 300
        if let (object, name) = try values.object("idempotencyOptions") {
            for (key, value) in object where value != .null {
                switch key {
                case "paths":
                    guard let list = value.arrayValue?.compactMap(\.stringValue), list.count == value.arrayValue?.count else {
                        throw Invalid(description: "\(name): paths must be an array of strings")
                    }
                    paths = list
                case "ttl":
                    guard let n = value.numberValue, n > 0, n.rounded() == n else {
                        throw Invalid(description: "\(name): ttl must be a whole number of seconds greater than 0")
                    }
                    ttl = Int(n)
                default:
                    throw Invalid(description: "\(name): unknown idempotency option '\(key)' (paths, ttl)")
                }
            }
        }
        if let (text, _) = values.part("idempotencyOptions", "paths") {
            if let list = try? JSONParser.parse(text).arrayValue?.compactMap(\.stringValue) {
                paths = list
            } else {
                paths = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
        }
        if let (text, name) = values.part("idempotencyOptions", "ttl") {
            ttl = try OptionValues.integer(text, name: name)
            guard ttl > 0 else { throw Invalid(description: "\(name) must be greater than 0 seconds") }
        }
        for (i, path) in paths.enumerated() {
            guard (try? Regex(path)) != nil else {
                throw Invalid(
                    description:
                        "PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS (idempotencyOptions): paths entry \(i + 1) is not a regular expression")
            }
        }
        return paths.isEmpty ? nil : IdempotencyOptions(paths: paths, ttl: ttl)
    }
}
