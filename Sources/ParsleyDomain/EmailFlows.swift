import Logging
public import ParsleyCore
public import ParsleyStorage

/// Email verification and password reset: random single-use tokens kept in the internal `_User` columns
/// (`_email_verify_token`, `_perishable_token`, `_perishable_token_expires_at`), mails through the configured
/// `EmailAdapter`, and the checks behind the `/apps/...` pages.
public struct EmailFlows: Sendable {
    let store: SQLStore
    let schemas: SchemaService
    let objects: ObjectService
    let sessions: SessionService
    let options: ParseServerOptions
    let hasher: PasswordHasher
    let logger = Logger(label: "parsley.email")
    /// Mails that requests do not wait for (verification at sign-up); sent by `sendQueuedMails`.
    let mails = MailQueue()
    /// Cloud code's `beforePasswordResetRequest` (may refuse the request).
    let beforePasswordReset: (@Sendable (_ user: [String: JSONValue], _ auth: Auth) async throws -> Void)?

    public init(
        store: SQLStore, schemas: SchemaService, objects: ObjectService, sessions: SessionService, options: ParseServerOptions,
        hasher: PasswordHasher, beforePasswordReset: (@Sendable (_ user: [String: JSONValue], _ auth: Auth) async throws -> Void)? = nil
    ) {
        self.beforePasswordReset = beforePasswordReset
        self.store = store
        self.schemas = schemas
        self.objects = objects
        self.sessions = sessions
        self.options = options
        self.hasher = hasher
    }

    var appName: String { options.appName ?? options.applicationId }

    /// Where links point: the request's mount URL (which is `publicServerURL` when set).
    func mountURL(_ request: RequestInfo = .current) -> String {
        request.mountURL ?? options.publicServerURL ?? "http://localhost\(options.mountPath)"
    }

    // MARK: Stored users

    /// The first user matching a predicate, with its internal fields.
    func storedUser(_ predicate: QueryNode) async throws -> [String: JSONValue]? {
        guard let schema = schemas.schema("_User") else { return nil }
        var spec = FindSpec(schema: schema, predicate: predicate, limit: 1, readPrincipals: nil, schemas: [:])
        spec.includeInternal = true
        return try await store.find(spec).first
    }

    /// A user by id, with its internal fields (nil when there is none).
    public func storedUser(id: String) async throws -> [String: JSONValue]? {
        try await storedUser(.field(FieldPath(field: "objectId"), .equals(.string(id))))
    }

    static func equals(_ field: String, _ value: String) -> QueryNode { .field(FieldPath(field: field), .equals(.string(value))) }

    func lowercasing(_ field: String, _ value: String) -> String { options.accounts.lowercasing(field, value) }
    func lowercase(_ fields: inout [String: JSONValue]) { options.accounts.lowercase(&fields) }

    /// Finds a user by `email` or `username`: the lower-cased value when stored ones are, or the value as sent (a user
    /// stored before the option was on). Names are unique ignoring case, so at most one user matches.
    func lookup(_ field: String, _ value: String) -> QueryNode {
        let stored = lowercasing(field, value)
        return stored == value ? Self.equals(field, value) : .or([Self.equals(field, stored), Self.equals(field, value)])
    }

    /// Sets columns of one user through the write pipeline (`updatedAt` changes too); with `guard`, only while that
    /// column still holds that value (which makes a token single-use even under concurrent requests). Returns
    /// whether the user changed.
    @discardableResult
    func updateUser(_ id: String, _ values: [String: JSONValue], guard condition: (String, String)? = nil) async throws -> Bool {
        do {
            _ = try await objects.update(
                "_User", objectId: id, [:], auth: .master,
                rules: .init(values: values, condition: condition.map { (field: $0.0, value: .string($0.1)) }, trusted: true))
            return true
        } catch let e as ParseError where e.code == .objectNotFound {
            return false
        }
    }

    // MARK: Verification at sign-up and email change

    /// A verification mail to send once the user's write committed.
    public struct PendingVerification: Sendable {
        var email: String
        var username: String
        var token: String
        var mountURL: String
    }

    /// A new verification token: 25 random characters, followed by its expiry when tokens expire (so the
    /// expiry needs no column of its own; the whole token must match the stored one, so it cannot be altered).
    func newVerifyToken() -> String {
        let random = ObjectID.make(length: 25)
        guard let validity = options.email.verifyTokenValidityDuration else { return random }
        return random + "-" + String(ParseDate.now.milliseconds + validity * 1000, radix: 36)
    }

    static func verifyTokenExpiry(_ token: String) -> ParseDate? {
        guard let dash = token.lastIndex(of: "-"), let ms = Int64(token[token.index(after: dash)...], radix: 36) else { return nil }
        return ParseDate(milliseconds: ms)
    }

    /// Sign-up and update hook: with `verifyUserEmails`, a new or changed email makes the user unverified and
    /// gets a fresh token (the master key may vouch with `emailVerified: true`). `current` is the stored user
    /// on update, nil at sign-up.
    func prepareVerification(
        _ fields: inout [String: JSONValue], values: inout [String: JSONValue], auth: Auth, current: [String: JSONValue]?
    ) -> PendingVerification? {
        guard options.email.verifyUserEmails, case .string(let email)? = fields["email"] else { return nil }
        if let current, current["email"]?.stringValue == email { return nil }
        if auth.isMaster, fields["emailVerified"] == .bool(true) { return nil }
        fields["emailVerified"] = .bool(false)
        let token = newVerifyToken()
        values["_email_verify_token"] = .string(token)
        let username = fields["username"]?.stringValue ?? current?["username"]?.stringValue ?? ""
        return PendingVerification(email: email, username: username, token: token, mountURL: mountURL())
    }

    /// Sends a prepared verification mail without making the request wait (as Parse Server does).
    func sendLater(_ pending: PendingVerification?) {
        guard let pending, options.email.sendUserEmailVerification else { return }
        mails.enqueue(verificationMessage(pending))
    }

    /// Sends queued mails until the task is cancelled (a background service of the server).
    public func sendQueuedMails() async {
        await mails.run { await deliver($0) }
    }

    func verificationMessage(_ p: PendingVerification) -> EmailMessage {
        let link = EmailTemplates.link(
            mountURL: p.mountURL, applicationId: options.applicationId, page: "verify_email", token: p.token, pages: options.pages)
        return options.email.templates.verification(to: p.email, username: p.username, appName: appName, link: link)
    }

    /// Sends through the adapter; a failure is logged, never shown to the client (Parse Server's behaviour).
    func deliver(_ message: EmailMessage) async {
        do {
            try await options.email.adapter.send(message)
        } catch {
            logger.error("sending email failed", metadata: ["to": .string(message.to), "error": .string("\(error)")])
        }
    }

    /// What sign-up does about the session when unverified users may not log in.
    enum SignUpSession { case create, skip, reject }

    func signUpSession(_ fields: [String: JSONValue]) -> SignUpSession {
        guard options.email.verifyUserEmails, options.email.preventLoginWithUnverifiedEmail || options.email.preventSignupWithUnverifiedEmail,
            fields["emailVerified"] != .bool(true)
        else { return .create }
        return options.email.preventSignupWithUnverifiedEmail ? .reject : .skip
    }

    // MARK: POST /requestPasswordReset and /verificationEmailRequest

    /// `POST /requestPasswordReset`: mails a reset link to the user with that email. An unknown email answers
    /// like a known one unless `passwordPolicy.resetPasswordSuccessOnInvalidEmail` is false (then 101).
    public func requestPasswordReset(_ request: PasswordResetRequest, mountURL: String, auth: Auth = .nobody) async throws {
        let email = request.email
        guard let user = try await storedUser(lookup("email", email)), let id = user["objectId"]?.stringValue else {
            if options.accounts.passwordPolicy?.resetPasswordSuccessOnInvalidEmail ?? true { return }
            throw ParseError(.objectNotFound, "A user with that email does not exist.")
        }
        if let before = beforePasswordReset { try await before(UserService.publicFields(user, forSelf: true), auth) }
        let policy = options.accounts.passwordPolicy
        let now = ParseDate.now
        var token = ObjectID.make(length: 25)
        if policy?.resetTokenReuseIfValid == true, let existing = user["_perishable_token"]?.stringValue, !Self.expired(user, now: now) {
            token = existing
        } else {
            var values: [String: JSONValue] = ["_perishable_token": .string(token), "_perishable_token_expires_at": .null]
            if let validity = policy?.resetTokenValidityDuration {
                values["_perishable_token_expires_at"] = [
                    "__type": "Date", "iso": .string(ParseDate(milliseconds: now.milliseconds + validity * 1000).iso),
                ]
            }
            try await updateUser(id, values)
        }
        let link = EmailTemplates.link(
            mountURL: mountURL, applicationId: options.applicationId, page: "request_password_reset", token: token, pages: options.pages)
        // To the address as stored (lower-cased with `convertEmailToLowercase`), which the request matched.
        let to = user["email"]?.stringValue ?? email
        await deliver(options.email.templates.passwordReset(to: to, username: user["username"]?.stringValue, appName: appName, link: link))
    }

    static func expired(_ user: [String: JSONValue], now: ParseDate) -> Bool {
        guard let iso = user["_perishable_token_expires_at"]?["iso"]?.stringValue, let expires = ParseDate(iso: iso) else { return false }
        return expires < now
    }

    /// `POST /verificationEmailRequest`: a new verification link. An unknown or already verified email answers
    /// like any other, so the endpoint does not tell which emails have accounts, unless
    /// `emailVerifySuccessOnInvalidEmail` is false. - Throws: then 205 unknown email, -1 already verified.
    public func requestVerificationEmail(_ request: VerificationEmailRequest, mountURL: String) async throws {
        let email = request.email
        let quiet = options.email.verifySuccessOnInvalidEmail
        guard let user = try await storedUser(lookup("email", email)) else {
            if quiet { return }
            throw ParseError(.init(rawValue: 205), "No user found with email \(email)")
        }
        if user["emailVerified"] == .bool(true) {
            if quiet { return }
            throw ParseError(.otherCause, "Email \(email) is already verified.")
        }
        try await resend(user, mountURL: mountURL)
    }

    /// `POST /apps/:appId/resend_verification_email` (the expired-link page's form): the user of the link's `token`
    /// (Parse Server 8), or of a `username` (7.x forms). Returns whether a mail went out (or would have, with
    /// `sendUserEmailVerification` off).
    public func resendVerification(token: String?, username: String?, mountURL: String) async throws -> Bool {
        let predicate: QueryNode
        if let token, !token.isEmpty {
            predicate = Self.equals("_email_verify_token", token)
        } else if let username, !username.isEmpty {
            predicate = lookup("username", username)
        } else {
            return false
        }
        guard let user = try await storedUser(predicate), user["email"]?.stringValue != nil, user["emailVerified"] != .bool(true)
        else { return false }
        return try await resend(user, mountURL: mountURL)
    }

    @discardableResult
    func resend(_ user: [String: JSONValue], mountURL: String) async throws -> Bool {
        guard options.email.verifyUserEmails, let id = user["objectId"]?.stringValue, let email = user["email"]?.stringValue else { return false }
        let token: String
        // `emailVerifyTokenReuseIfValid`: the token the user already has, while it is valid.
        if options.email.verifyTokenReuseIfValid, let existing = user["_email_verify_token"]?.stringValue,
            let expiry = Self.verifyTokenExpiry(existing), ParseDate.now < expiry
        {
            token = existing
        } else {
            token = newVerifyToken()
            try await updateUser(id, ["_email_verify_token": .string(token)])
        }
        // `sendUserEmailVerification: false`: the token is made, and the request answers as if a mail went out.
        guard options.email.sendUserEmailVerification else { return true }
        let pending = PendingVerification(email: email, username: user["username"]?.stringValue ?? "", token: token, mountURL: mountURL)
        await deliver(verificationMessage(pending))
        return true
    }

    // MARK: The links

    /// `GET /apps/:appId/verify_email`: marks the email verified and spends the token. False for an unknown,
    /// used or expired token.
    public func verifyEmail(token: String?, username: String?) async throws -> Bool {
        guard options.email.verifyUserEmails, let token, !token.isEmpty else { return false }
        var predicate = Self.equals("_email_verify_token", token)
        if let username, !username.isEmpty { predicate = .and([predicate, Self.equals("username", username)]) }
        guard let user = try await storedUser(predicate), let id = user["objectId"]?.stringValue else { return false }
        if let expiry = Self.verifyTokenExpiry(token), expiry < .now { return false }
        return try await updateUser(
            id, ["emailVerified": .bool(true), "_email_verify_token": .null], guard: ("_email_verify_token", token))
    }

    /// A password-reset link's state.
    public enum ResetLink: Sendable, Equatable {
        case valid(username: String)
        case invalid
        case expired
    }

    func resetUser(token: String?, username: String?) async throws -> ([String: JSONValue], ResetLink) {
        guard let token, !token.isEmpty else { return ([:], .invalid) }
        var predicate = Self.equals("_perishable_token", token)
        if let username, !username.isEmpty { predicate = .and([predicate, Self.equals("username", username)]) }
        guard let user = try await storedUser(predicate) else { return ([:], .invalid) }
        if Self.expired(user, now: .now) { return (user, .expired) }
        return (user, .valid(username: user["username"]?.stringValue ?? ""))
    }

    /// `GET /apps/:appId/request_password_reset`: whether the link still works.
    public func checkResetLink(token: String?, username: String?) async throws -> ResetLink {
        try await resetUser(token: token, username: username).1
    }

    /// `POST /apps/:appId/request_password_reset`: sets the new password (under the password policy), spends
    /// the token, revokes the user's sessions (unless `revokeSessionOnPasswordReset` is off) and, with
    /// `accountLockout.unlockOnPasswordReset`, unlocks the
    /// account. - Throws: 142 when the policy refuses the password (the link stays usable).
    public func resetPassword(token: String?, username: String?, newPassword: String) async throws -> ResetLink {
        let (user, state) = try await resetUser(token: token, username: username)
        guard case .valid = state, let id = user["objectId"]?.stringValue, let token else { return state }
        guard !newPassword.isEmpty else { throw ParseError(.init(rawValue: 201), "Missing password") }
        var values = try await PasswordPolicy.change(
            options.accounts.passwordPolicy, to: newPassword, username: user["username"]?.stringValue, user: user, hasher: hasher)
        if options.accounts.lockout?.unlockOnPasswordReset == true {
            values["_failed_login_count"] = .int(0)
            values["_account_lockout_expires_at"] = .null
        }
        guard try await updateUser(id, values, guard: ("_perishable_token", token)) else { return .invalid }
        if options.accounts.revokeSessionOnPasswordReset { try await sessions.revokeAll(userId: id) }
        return state
    }
}
