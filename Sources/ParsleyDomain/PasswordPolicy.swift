public import ParsleyCore

/// Parse Server's `passwordPolicy`: what a new password must satisfy at sign-up, update and reset (142
/// otherwise), how many previous passwords it may not repeat, and how long a reset link lives.
public struct PasswordPolicy: Sendable {
    /// A regular expression the password must contain a match of (JavaScript `pattern.test(password)`).
    public var validatorPattern: String?
    /// The message of the 142 when the pattern does not match.
    public var validationError: String?
    /// The password may not contain the username.
    public var doNotAllowUsername: Bool
    /// The new password may not equal the current one nor the `maxPasswordHistory - 1` before it (at most 20).
    public var maxPasswordHistory: Int
    /// Seconds a password-reset link stays valid (nil: until used).
    public var resetTokenValidityDuration: Int64?
    /// A new reset request reuses a still-valid token instead of making another.
    public var resetTokenReuseIfValid: Bool
    /// `/requestPasswordReset` for an unknown email answers `{}` (else 101).
    public var resetPasswordSuccessOnInvalidEmail: Bool

    public init(
        validatorPattern: String? = nil, validationError: String? = nil, doNotAllowUsername: Bool = false, maxPasswordHistory: Int = 0,
        resetTokenValidityDuration: Int64? = nil, resetTokenReuseIfValid: Bool = false, resetPasswordSuccessOnInvalidEmail: Bool = true
    ) {
        self.validatorPattern = validatorPattern
        self.validationError = validationError
        self.doNotAllowUsername = doNotAllowUsername
        self.maxPasswordHistory = maxPasswordHistory
        self.resetTokenValidityDuration = resetTokenValidityDuration
        self.resetTokenReuseIfValid = resetTokenReuseIfValid
        self.resetPasswordSuccessOnInvalidEmail = resetPasswordSuccessOnInvalidEmail
    }

    public static let defaultMessage = "Password does not meet the Password Policy requirements."

    /// Whether a pattern compiles (for start-up validation).
    public static func isValidPattern(_ pattern: String) -> Bool {
        (try? Regex(pattern)) != nil
    }

    /// The pattern and username rules. - Throws: 142.
    public func validate(_ password: String, username: String?) throws(ParseError) {
        if let pattern = validatorPattern {
            guard let regex = try? Regex(pattern) else { throw ParseError(.validationError, validationError ?? Self.defaultMessage) }
            if !password.contains(regex) { throw ParseError(.validationError, validationError ?? Self.defaultMessage) }
        }
        if doNotAllowUsername, let username, !username.isEmpty, password.contains(username) {
            throw ParseError(.validationError, "Password cannot contain your username.")
        }
    }

    /// Rejects a password equal to the current one or to one of the remembered ones. - Throws: 142.
    func checkHistory(_ password: String, user: [String: JSONValue], hasher: PasswordHasher) async throws {
        guard maxPasswordHistory > 0 else { return }
        var hashes = Array(Self.history(user).prefix(maxPasswordHistory - 1))
        if case .string(let current)? = user["_hashed_password"] { hashes.append(current) }
        for hash in hashes where try await hasher.verify(password, hash: hash) {
            throw ParseError(.validationError, "New password should not be the same as last \(maxPasswordHistory) passwords.")
        }
    }

    /// The history after a change: the last `maxPasswordHistory - 1` hashes, the replaced one last.
    func nextHistory(user: [String: JSONValue]) -> [String]? {
        guard maxPasswordHistory > 0, case .string(let current)? = user["_hashed_password"] else { return nil }
        var old = Array(Self.history(user).prefix(maxPasswordHistory))
        while old.count > max(0, maxPasswordHistory - 2) { old.removeFirst() }
        old.append(current)
        return old
    }

    static func history(_ user: [String: JSONValue]) -> [String] {
        user["_password_history"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// The internal columns a password change writes, after the policy accepted the password: the hash, the
    /// history, the change date, and no pending reset token. `user` is the stored row (with internal fields),
    /// nil for a new user. - Throws: 142 when the policy refuses the password.
    static func change(
        _ policy: PasswordPolicy?, to password: String, username: String?, user: [String: JSONValue]?, hasher: PasswordHasher
    ) async throws -> [String: JSONValue] {
        try policy?.validate(password, username: username)
        if let policy, let user { try await policy.checkHistory(password, user: user, hasher: hasher) }
        var values: [String: JSONValue] = [
            "_hashed_password": .string(try await hasher.hash(password)),
            "_password_changed_at": ["__type": "Date", "iso": .string(ParseDate.now.iso)],
        ]
        guard let user else { return values }
        values["_perishable_token"] = .null
        values["_perishable_token_expires_at"] = .null
        if let history = policy?.nextHistory(user: user) { values["_password_history"] = .array(history.map { .string($0) }) }
        return values
    }
}
