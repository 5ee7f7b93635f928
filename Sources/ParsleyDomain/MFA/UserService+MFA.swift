public import ParsleyCore

/// The second factor in the user flows (`auth.mfa`): enrolment at sign-up or through `PUT /users/:id`, the check at
/// every log-in (password or another provider's authData), and what a caller reads back of it.
extension UserService {
    /// The `mfa` provider, when `auth.mfa` turns it on; it sends SMS codes through the `sendSMS` cloud function.
    static func makeMFA(_ options: ParseServerOptions, hooks: LoginHooks) -> MFA? {
        guard let settings = try? MFASettings(options.accounts.auth) else { return nil }
        return MFA(settings: settings) { mobile, token in
            guard let send = hooks.sendMFASMS, let function = settings.sendSMS else {
                throw ParseError(.scriptFailed, "SMS could not be sent: no cloud code sends it")
            }
            try await send(function, mobile, token)
        }
    }

    static let missingSecondFactor = ParseError(.otherCause, "Missing additional authData mfa")

    /// Whether a found user must bring a second factor to log in.
    func needsSecondFactor(_ storedAuthData: JSONValue?) -> Bool { mfa?.isRequired(storedAuthData?["mfa"]) ?? false }

    /// Checks a log-in's `authData.mfa` against the user's, and stores what the check consumed (a TOTP time step, a
    /// recovery code, an SMS code) only if the user's `authData` is still what was read: of two log-ins racing with the
    /// same code, one wins. A wrong code counts as a failed log-in for the account lockout.
    func checkSecondFactor(userId: String, storedAuthData: JSONValue?, provided: JSONValue?, user: [String: JSONValue]) async throws {
        guard let mfa, let stored = storedAuthData?["mfa"], mfa.isRequired(stored) else { return }
        guard let provided, provided.objectValue != nil else { throw Self.missingSecondFactor }
        let outcome: MFA.Outcome
        do {
            outcome = try await mfa.logIn(provided, stored: stored)
            if let save = outcome.save { try await storeSecondFactor(save, userId: userId, expected: storedAuthData) }
        } catch let error as ParseError where error == MFA.invalidToken {
            if let lockout = options.accounts.lockout { try await attempts.recordFailure(userId, lockout) }
            throw error
        }
        if let failure = outcome.failure { throw failure }
        if options.accounts.lockout != nil, (user["_failed_login_count"]?.integerValue ?? 0) != 0 { try await attempts.reset(userId) }
    }

    /// Replaces `authData.mfa`, provided `authData` still holds `expected`; otherwise 141 `Invalid MFA token`.
    func storeSecondFactor(_ value: JSONValue, userId: String, expected: JSONValue?) async throws {
        var authData = expected?.objectValue ?? [:]
        authData["mfa"] = value
        var internalWrite = Auth.master
        internalWrite.runsTriggers = false
        do {
            _ = try await objects.update(
                "_User", objectId: userId, ["authData": .object(authData)], auth: internalWrite,
                rules: .init(condition: (field: "authData", value: expected), trusted: true))
        } catch let error as ParseError where error.code == .objectNotFound {
            throw MFA.invalidToken
        }
    }

    /// Enrolment or a change of `authData.mfa` (sign-up, `PUT /users/:id`): Parse Server's `validateSetUp` when the
    /// user has none, `validateUpdate` otherwise. 252 when `auth.mfa` is off.
    func changeSecondFactor(_ data: JSONValue, stored: JSONValue?, auth: Auth) async throws -> MFA.Outcome {
        guard let mfa else { throw ParseError(.init(rawValue: 252), "This authentication method is unsupported.") }
        if let stored, stored.objectValue != nil { return try await mfa.update(data, stored: stored, master: auth.isMaster) }
        return try await mfa.setUp(data)
    }

    /// What a caller other than the master key reads of a user's own `authData`: `mfa` as `{"status": ...}` only.
    static func hidingSecondFactor(_ user: [String: JSONValue], auth: Auth) -> [String: JSONValue] {
        guard !auth.isMaster else { return user }
        return Permissions.hidingSecondFactor(user)
    }

    // MARK: POST /challenge

    /// `POST /challenge` (Parse Server's `handleChallenge`): identifies the user by password or by one provider's
    /// authData, then runs each provider's `challenge` named in `challengeData`. An authData that does not identify
    /// exactly one user, or whose check fails, answers 101 `User not found.` whatever the reason.
    public func challenge(_ request: Challenge, auth: Auth) async throws -> [String: JSONValue] {
        var user: [String: JSONValue]?
        if let credentials = request.credentials { user = try await verify(credentials).object }
        guard let challengeData = request.challengeData else { throw ParseError(.otherCause, "Nothing to challenge.") }
        if let authData = request.authData {
            guard user == nil else {
                throw ParseError(.otherCause, "You cannot provide username/email and authData, only use one identification method.")
            }
            let named = authData.filter { $0.value["id"] != nil }
            guard named.count <= 1 else { throw ParseError(.otherCause, "You cannot provide more than one authData provider with an id.") }
            do {
                guard let (provider, data) = named.first, case .string(let id)? = data["id"],
                    let userId = try await userId(provider: provider, id: id)
                else { throw ParseError(.objectNotFound, "User not found.") }
                _ = try await providers.validate(provider, data, options: options)
                user = try await fetchSelf(userId)
            } catch {
                throw ParseError(.objectNotFound, "User not found.")
            }
        }
        var answers: [String: JSONValue] = [:]
        for (provider, data) in challengeData.sorted(by: { $0.key < $1.key }) {
            guard let handler = providers.providers[provider] else { continue }
            if let answer = try await handler.challenge(data, authData: request.authData?[provider], user: user) {
                answers[provider] = answer
            }
        }
        return ["challengeData": .object(answers)]
    }
}

extension Permissions {
    /// A user object with `authData.mfa` reduced to `{"status": "enabled" | "disabled"}` (Parse Server's mfa
    /// `afterFind`): the secret, recovery codes and pending SMS codes reach the master key only.
    static func hidingSecondFactor(_ user: [String: JSONValue]) -> [String: JSONValue] {
        guard case .object(var authData)? = user["authData"], let mfa = authData["mfa"], mfa.objectValue != nil else { return user }
        authData["mfa"] = MFA.view(mfa)
        var shown = user
        shown["authData"] = .object(authData)
        return shown
    }
}
