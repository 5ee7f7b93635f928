import ParsleyCore

/// Parse Server's `accountLockout`: after `threshold` failed log-ins in a row an account is locked for
/// `duration` minutes; a successful log-in resets the count.
public struct AccountLockout: Sendable {
    /// Minutes an account stays locked.
    public var duration: Int
    /// Failed log-ins that lock the account.
    public var threshold: Int
    /// A password reset through the emailed link unlocks the account.
    public var unlockOnPasswordReset: Bool

    public init(duration: Int, threshold: Int, unlockOnPasswordReset: Bool = false) {
        self.duration = duration
        self.threshold = threshold
        self.unlockOnPasswordReset = unlockOnPasswordReset
    }

    public var message: String {
        "Your account is locked due to multiple failed login attempts. Please try again after \(duration) minute(s)"
    }

    /// Locked: enough failures, and the lock has not expired yet.
    func isLocked(_ user: [String: JSONValue], now: ParseDate) -> Bool {
        guard let count = user["_failed_login_count"]?.integerValue, count >= threshold,
            let until = user["_account_lockout_expires_at"]?["iso"]?.stringValue.flatMap(ParseDate.init(iso:))
        else { return false }
        return until > now
    }
}

/// The checks of a password log-in after the user row was found, in Parse Server's order: lockout (which
/// also counts this attempt), the password, then email verification.
struct LoginAttempts: Sendable {
    let objects: ObjectService
    let options: ParseServerOptions

    /// - Throws: 101 locked or invalid credentials, 205 unverified email (with `preventLoginWithUnverifiedEmail`).
    /// `resetsFailures`: false while the user still owes a second factor (it resets them once given).
    func check(_ user: [String: JSONValue], passwordMatches: Bool, resetsFailures: Bool = true) async throws {
        if let lockout = options.accounts.lockout, let id = user["objectId"]?.stringValue {
            if lockout.isLocked(user, now: .now) { throw ParseError(.objectNotFound, lockout.message) }
            if passwordMatches {
                guard resetsFailures else { return try checkVerified(user) }
                if (user["_failed_login_count"]?.integerValue ?? 0) != 0 || !(user["_account_lockout_expires_at"]?.isNull ?? true) {
                    try await reset(id)
                }
            } else {
                try await recordFailure(id, lockout)
            }
        }
        guard passwordMatches else { throw ParseError(.objectNotFound, "Invalid username/password.") }
        try checkVerified(user)
    }

    func checkVerified(_ user: [String: JSONValue]) throws(ParseError) {
        if options.email.verifyUserEmails, options.email.preventLoginWithUnverifiedEmail, user["emailVerified"] != .bool(true) {
            throw ParseError(.init(rawValue: 205), "User email is not verified.")
        }
    }

    /// One more failure (counted atomically, through the write pipeline); reaching the threshold sets, and each
    /// further failure renews, the lock's expiry.
    func recordFailure(_ userId: String, _ lockout: AccountLockout) async throws {
        let counted = try await objects.update(
            "_User", objectId: userId, [:], auth: .master, rules: .init(increments: ["_failed_login_count": 1], trusted: true))
        guard let count = counted["_failed_login_count"]?.integerValue, count >= lockout.threshold else { return }
        let until = ParseDate(milliseconds: ParseDate.now.milliseconds + Int64(lockout.duration) * 60_000)
        _ = try await objects.update(
            "_User", objectId: userId, [:], auth: .master,
            rules: .init(values: ["_account_lockout_expires_at": ["__type": "Date", "iso": .string(until.iso)]], trusted: true))
    }

    /// Clears the failure count and any lock.
    func reset(_ userId: String) async throws {
        _ = try await objects.update(
            "_User", objectId: userId, [:], auth: .master,
            rules: .init(values: ["_failed_login_count": 0, "_account_lockout_expires_at": .null], trusted: true))
    }
}
