public import ParsleyCore
public import ParsleyStorage

/// `_User` rules: sign-up, log-in, the current user, updates and deletes by the user itself, passwords as
/// bcrypt hashes that never leave the server, case-insensitive unique usernames and emails (unique indexes),
/// and `authData` (anonymous users, linking, unlinking).
public struct UserService: Sendable {
    /// Cloud code's log-in triggers.
    let loginHooks: LoginHooks
    let store: SQLStore
    let schemas: SchemaService
    let objects: ObjectService
    let queries: QueryService
    let sessions: SessionService
    let options: ParseServerOptions
    let hasher: PasswordHasher
    let providers: AuthProviders
    /// Verification and password-reset mails (EmailFlows.swift); lockout and verified-email log-in checks.
    public let emails: EmailFlows
    let attempts: LoginAttempts
    /// `auth.mfa`'s second factor (UserService+MFA.swift); nil when it is off.
    let mfa: MFA?

    public init(
        store: SQLStore, schemas: SchemaService, objects: ObjectService, queries: QueryService, sessions: SessionService,
        options: ParseServerOptions, providers: AuthProviders = AuthProviders(), loginHooks: LoginHooks = LoginHooks()
    ) {
        self.loginHooks = loginHooks
        self.store = store
        self.schemas = schemas
        self.objects = objects
        self.queries = queries
        self.sessions = sessions
        self.options = options
        self.hasher = PasswordHasher(cost: options.accounts.bcryptCost)
        self.providers = providers
        self.emails = EmailFlows(
            store: store, schemas: schemas, objects: objects, sessions: sessions, options: options, hasher: hasher,
            beforePasswordReset: loginHooks.beforePasswordResetRequest)
        self.attempts = LoginAttempts(objects: objects, options: options)
        self.mfa = Self.makeMFA(options, hooks: loginHooks)
    }

    /// Creates `_User` with its unique case-insensitive indexes.
    public func bootstrap() async throws {
        _ = try await schemas.ensure("_User", fields: [:], auth: .master, allowClassCreation: true)
        try await store.createUserIndexes()
    }

    public struct Created: Sendable {
        public var status: Int
        public var body: [String: JSONValue]
        public var objectId: String
    }

    // MARK: Sign-up

    /// `POST /users`: sign-up, or log-in/sign-up with `authData` (`SignUp`, decoded at the edge).
    public func signUp(_ signUp: SignUp, auth: Auth) async throws -> Created {
        var fields = signUp.fields
        let (username, password): (String, String)
        switch signUp.credentials {
        case .authData(let authData): return try await authDataLogIn(authData, rest: fields, auth: auth)
        case .password(let name, let secret): (username, password) = (emails.lowercasing("username", name), secret)
        }
        emails.lowercase(&fields)
        try checkUserFields(fields, auth: auth)
        // A sign-up may enrol a second factor at once (`authData: {"mfa": {"secret", "token"}}`).
        var authDataResponse: JSONValue?
        if case .object(var authData)? = fields["authData"], let data = authData["mfa"], !data.isNull {
            let outcome = try await changeSecondFactor(data, stored: nil, auth: auth)
            authData["mfa"] = outcome.save ?? data
            fields["authData"] = .object(authData)
            authDataResponse = outcome.response.map { ["mfa": $0] }
        }
        // The sign-up's own objectId with `allowCustomObjectId` (else a new one; an objectId sent without the option stays
        // in the body and is refused as in any create).
        let id = try objects.newObjectId(.object(fields)).0
        if options.allowCustomObjectId { fields["objectId"] = nil }
        var internalValues = try await PasswordPolicy.change(
            options.accounts.passwordPolicy, to: password, username: username, user: nil, hasher: hasher)
        Self.grantSelf(&fields, id)
        let verification = emails.prepareVerification(&fields, values: &internalValues, auth: auth, current: nil)
        let created = try await mapDuplicates { [fields, internalValues] in
            try await objects.create(
                "_User", CreateObject(fields), auth: auth,
                rules: .init(objectId: id, values: internalValues, defaultACL: defaultACL(id), trusted: true))
        }
        emails.sendLater(verification)
        var response = created
        switch emails.signUpSession(fields) {
        case .create:
            let session = try await sessions.create(userId: id, installationId: auth.installationId, action: "signup", authProvider: "password")
            response["sessionToken"] = .string(session.token)
        case .skip: break
        case .reject: throw ParseError(.init(rawValue: 205), "User email is not verified.")
        }
        if let authDataResponse { response["authDataResponse"] = authDataResponse }
        return Created(status: 201, body: response, objectId: id)
    }

    /// A new user always reads and writes itself: an ACL sent at sign-up (`{"*":{"read":true}}` from apps whose
    /// users find each other) gets the user's own entry, as Parse Server adds it.
    static func grantSelf(_ fields: inout [String: JSONValue], _ id: String) {
        guard case .object(var acl)? = fields["ACL"] else { return }
        acl[id] = ["read": true, "write": true]
        fields["ACL"] = .object(acl)
    }

    func defaultACL(_ id: String) -> ACL {
        options.accounts.enforcePrivateUsers ? ACL(readers: [id], writers: [id]) : ACL(readers: ["*", id], writers: [id])
    }

    /// Email format, and fields only the master key may set.
    func checkUserFields(_ fields: [String: JSONValue], auth: Auth) throws(ParseError) {
        if let email = fields["email"], !email.isNull {
            guard case .string(let e) = email, Self.isEmail(e) else { throw ParseError(.init(rawValue: 125), "Email address format is invalid.") }
        }
        if fields["emailVerified"] != nil, !auth.isMaster {
            throw ParseError(.operationForbidden, "Clients aren't allowed to manually update email verification.")
        }
        if let u = fields["username"], !u.isNull {
            guard case .string(let s) = u, !s.isEmpty else { throw ParseError(.init(rawValue: 200), "bad or missing username") }
        }
    }

    static func isEmail(_ s: String) -> Bool {
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && !s.contains(" ")
    }

    /// Unique-index violations become Parse's 203 (email), 202 (username) or 137 (any other unique index).
    func mapDuplicates<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch StoreError.uniqueViolation(let index) {
            switch index {
            case SystemIndex.userEmail: throw ParseError(.init(rawValue: 203), "Account already exists for this email address.")
            case SystemIndex.userUsername: throw ParseError(.init(rawValue: 202), "Account already exists for this username.")
            default: throw ParseError(.duplicateValue, "A duplicate value for a field with unique values was provided")
            }
        }
    }

    // MARK: authData

    func authDataLogIn(_ authData: [String: JSONValue], rest: [String: JSONValue], auth: Auth) async throws -> Created {
        var ids: [(provider: String, id: String)] = []
        // `mfa` is an additional factor, not a way to find a user: checked below.
        for (provider, data) in authData.sorted(by: { $0.key < $1.key }) where !data.isNull && provider != "mfa" {
            let id = try await providers.validate(provider, data, options: options)
            ids.append((provider, id))
        }
        guard let first = ids.first else { throw ParseError(.init(rawValue: 252), "This authentication method is unsupported.") }
        if let existing = try await userId(provider: first.provider, id: first.id) {
            let stored = try await fetchSelf(existing)
            try await checkSecondFactor(userId: existing, storedAuthData: stored["authData"], provided: authData["mfa"], user: stored)
            try await storeChangedAuthData(authData, of: existing)
            let session = try await sessions.create(
                userId: existing, installationId: auth.installationId, action: "login", authProvider: first.provider)
            var user = Self.hidingSecondFactor(try await fetchSelf(existing), auth: auth)
            user["sessionToken"] = .string(session.token)
            return Created(status: 200, body: user, objectId: existing)
        }
        var fields = rest
        var authDataResponse: JSONValue?
        if let data = authData["mfa"], !data.isNull {
            let outcome = try await changeSecondFactor(data, stored: nil, auth: auth)
            var withFactor = authData
            withFactor["mfa"] = outcome.save ?? data
            fields["authData"] = .object(withFactor)
            authDataResponse = outcome.response.map { ["mfa": $0] }
        }
        emails.lowercase(&fields)
        try checkUserFields(fields, auth: auth)
        fields["password"] = nil
        let generated = fields["username"] == nil
        if generated { fields["username"] = .string(ObjectID.make(length: 25)) }
        let id = try objects.newObjectId(.object(fields)).0
        if options.allowCustomObjectId { fields["objectId"] = nil }
        Self.grantSelf(&fields, id)
        let created = try await mapDuplicates { [fields] in
            try await objects.create(
                "_User", CreateObject(fields), auth: auth, rules: .init(objectId: id, defaultACL: defaultACL(id), trusted: true))
        }
        let session = try await sessions.create(userId: id, installationId: auth.installationId, action: "signup", authProvider: first.provider)
        var response = created
        response["sessionToken"] = .string(session.token)
        if generated { response["username"] = fields["username"] }
        if let authDataResponse { response["authDataResponse"] = authDataResponse }
        return Created(status: 201, body: response, objectId: id)
    }

    /// A log-in with provider data that differs from the stored (a new identity token) stores it, as Parse Server does
    /// (`hasMutatedAuthData`; not for `anonymous`). The data was validated just before.
    func storeChangedAuthData(_ authData: [String: JSONValue], of id: String) async throws {
        let stored = try await fetchSelf(id)["authData"]?.objectValue ?? [:]
        var merged = stored
        for (provider, data) in authData where provider != "anonymous" && provider != "mfa" && !data.isNull && stored[provider] != data {
            merged[provider] = data
        }
        guard merged != stored else { return }
        var internalWrite = Auth.master
        internalWrite.runsTriggers = false
        _ = try await objects.update(
            "_User", objectId: id, ["authData": .object(merged)], auth: internalWrite, rules: .init(trusted: true))
    }

    /// The user linked to a provider id.
    func userId(provider: String, id: String) async throws -> String? {
        guard let schema = schemas.schema("_User"), Naming.isIdentifier(provider) else { return nil }
        let spec = FindSpec(
            schema: schema, predicate: .field(FieldPath(field: "authData", subpath: [provider, "id"]), .equals(.string(id))), limit: 1, keys: [],
            readPrincipals: nil, schemas: [:])
        return try await store.find(spec).first?["objectId"]?.stringValue
    }

    // MARK: Log-in

    /// `GET|POST /login`.
    public func logIn(_ request: LogIn, auth: Auth) async throws -> [String: JSONValue] {
        let user = try await verify(request.credentials, deferLockoutReset: true)
        // A user with MFA brings the code too (-1 `Missing additional authData mfa` without it).
        try await checkSecondFactor(userId: user.id, storedAuthData: user.object["authData"], provided: request.authData?["mfa"], user: user.row)
        // Cloud code's beforeLogin may refuse, after the credentials were checked and before a session exists.
        if let before = loginHooks.beforeLogin { try await before(user.object, auth) }
        let session = try await sessions.create(userId: user.id, installationId: auth.installationId, action: "login", authProvider: "password")
        var body = Self.hidingSecondFactor(user.object, auth: auth)
        body["sessionToken"] = .string(session.token)
        if let after = loginHooks.afterLogin {
            var signedIn = auth
            signedIn.userId = user.id
            signedIn.sessionToken = session.token
            await after(user.object, signedIn)
        }
        return body
    }

    /// `GET|POST /verifyPassword`: the user, without a session.
    public func verifyPassword(_ request: VerifyPassword) async throws -> [String: JSONValue] {
        Permissions.hidingSecondFactor(try await verify(request.credentials).object)
    }

    /// The user these credentials name. `deferLockoutReset`: a right password does not yet clear the failed log-ins
    /// of a user who still owes a second factor (a wrong code counts as a failure too).
    func verify(_ credentials: PasswordCredentials, deferLockoutReset: Bool = false) async throws
        -> (id: String, object: [String: JSONValue], row: [String: JSONValue])
    {
        let password = credentials.password
        guard let schema = schemas.schema("_User") else {
            try await hasher.verifyAgainstNothing(password)
            throw ParseError(.objectNotFound, "Invalid username/password.")
        }
        let predicate = credentials.username.map { emails.lookup("username", $0) } ?? emails.lookup("email", credentials.email ?? "")
        var spec = FindSpec(schema: schema, predicate: predicate, limit: 1, readPrincipals: nil, schemas: [:])
        spec.includeInternal = true
        // An unknown user, or one without a password, costs the same bcrypt time as a wrong password (no account oracle).
        guard let row = try await store.find(spec).first, let id = row["objectId"]?.stringValue else {
            try await hasher.verifyAgainstNothing(password)
            throw ParseError(.objectNotFound, "Invalid username/password.")
        }
        var matches = false
        if case .string(let hash)? = row["_hashed_password"] {
            matches = try await hasher.verify(password, hash: hash)
        } else {
            try await hasher.verifyAgainstNothing(password)
        }
        // Account lockout (counting this attempt), the password, then email verification.
        try await attempts.check(row, passwordMatches: matches, resetsFailures: !(deferLockoutReset && needsSecondFactor(row["authData"])))
        return (id, Self.publicFields(row, forSelf: true), row)
    }

    /// `POST /loginAs` (master key): a new session for any user.
    public func logInAs(_ request: LogInAs, auth: Auth) async throws -> [String: JSONValue] {
        let userId = request.userId
        guard let user = try? await fetchSelf(userId) else { throw ParseError(.objectNotFound, "user not found") }
        let session = try await sessions.create(userId: userId, installationId: auth.installationId, action: "login", authProvider: "masterkey")
        var body = user
        body["sessionToken"] = .string(session.token)
        return body
    }

    // MARK: The current user and user objects

    /// A user as the user itself sees it.
    func fetchSelf(_ id: String) async throws -> [String: JSONValue] {
        var find = FindOptions()
        find.whereValue = ["objectId": .string(id)]
        find.limit = 1
        guard let user = try await queries.find("_User", find, auth: .master).results.first else { throw ParseError.objectNotFound() }
        return Self.publicFields(user, forSelf: true)
    }

    /// Drops what a caller may not see: internal fields always; `authData` unless it is the user or master.
    static func publicFields(_ user: [String: JSONValue], forSelf: Bool) -> [String: JSONValue] {
        var u = user.filter { !$0.key.hasPrefix("_") }
        u["password"] = nil
        u["sessionToken"] = nil
        if !forSelf { u["authData"] = nil }
        return u
    }

    /// `GET /users/me`.
    public func me(auth: Auth) async throws -> [String: JSONValue] {
        guard let userId = auth.userId, let token = auth.sessionToken else {
            throw ParseError.sanitized(.invalidSessionToken, "Invalid session token")
        }
        var user = Self.hidingSecondFactor(try await fetchSelf(userId), auth: auth)
        if !schemas.protectedFieldsOwnerExempt {
            // `protectedFieldsOwnerExempt: false`: the user's own protected fields are hidden from them too.
            let clp = Permissions(store: store, schemas: schemas).classLevelPermissions("_User")
            for field in clp.protectedFields(userId: userId, roles: auth.roles) { user[field] = nil }
        }
        user["sessionToken"] = .string(token)
        return user
    }

    /// A user object for the caller: its own session token when it is the caller.
    public func shape(_ user: [String: JSONValue], auth: Auth) -> [String: JSONValue] {
        let isSelf = user["objectId"]?.stringValue == auth.userId && auth.userId != nil
        var u = Self.hidingSecondFactor(Self.publicFields(user, forSelf: isSelf || auth.isMaster), auth: auth)
        if isSelf, let token = auth.sessionToken { u["sessionToken"] = .string(token) }
        return u
    }

    /// `PUT /users/:id`: only the user itself or the master key.
    public func update(_ id: String, _ changes: UpdateObject, auth: Auth) async throws -> [String: JSONValue] {
        var fields = changes.fields
        emails.lowercase(&fields)
        if !auth.isMaster {
            guard let caller = auth.userId else { throw ParseError(.init(rawValue: 206), "Cannot modify user \(id).") }
            guard caller == id else { throw ParseError(.init(rawValue: 206), "Insufficient auth.") }
        }
        try checkUserFields(fields, auth: auth)
        var internalValues: [String: JSONValue] = [:]
        var passwordChanged = false
        // The stored user, for the password policy (username, history) and for noticing a changed email.
        let current =
            fields["password"] != nil || (options.email.verifyUserEmails && fields["email"] != nil) ? try await emails.storedUser(id: id) : nil
        if let password = fields.removeValue(forKey: "password") {
            guard case .string(let p) = password, !p.isEmpty else { throw ParseError(.init(rawValue: 201), "password is required") }
            let username = fields["username"]?.stringValue ?? current?["username"]?.stringValue
            internalValues = try await PasswordPolicy.change(
                options.accounts.passwordPolicy, to: p, username: username, user: current, hasher: hasher)
            passwordChanged = true
        }
        let verification = current == nil ? nil : emails.prepareVerification(&fields, values: &internalValues, auth: auth, current: current)
        var authDataResponse: [String: JSONValue] = [:]
        if case .object(let linking)? = fields["authData"] {
            fields["authData"] = .object(try await linkedAuthData(id, linking, auth: auth, responses: &authDataResponse))
        }
        var response = try await mapDuplicates { [fields, internalValues] in
            try await objects.update("_User", objectId: id, UpdateObject(fields), auth: auth, rules: .init(values: internalValues, trusted: true))
        }
        emails.sendLater(verification)
        if !authDataResponse.isEmpty { response["authDataResponse"] = .object(authDataResponse) }
        if passwordChanged, options.accounts.revokeSessionOnPasswordReset {
            try await sessions.revokeAll(userId: id, except: auth.userId == id ? auth.sessionToken : nil)
            if auth.userId == id, let token = auth.sessionToken { response["sessionToken"] = .string(token) }
        }
        return response
    }

    /// Merges new provider data into a user's `authData` (a null provider unlinks it). Each provider's data is
    /// checked before its id is looked up, so ids cannot be probed with bad tokens. A provider's refusal (101) answers
    /// 206 `Insufficient auth.` to anyone but the master key, as Parse Server's rest.js does on `_User` updates.
    /// `mfa` is enrolled or changed by its own rules (`changeSecondFactor`); what it answers goes to `responses`.
    func linkedAuthData(
        _ id: String, _ changes: [String: JSONValue], auth: Auth, responses: inout [String: JSONValue]
    ) async throws -> [String: JSONValue] {
        var current = try await fetchSelf(id)["authData"]?.objectValue ?? [:]
        for (provider, data) in changes.sorted(by: { $0.key < $1.key }) {
            if data.isNull {
                current[provider] = nil
                continue
            }
            if provider == "mfa" {
                let outcome = try await changeSecondFactor(data, stored: current["mfa"], auth: auth)
                current["mfa"] = outcome.save ?? data
                if let response = outcome.response { responses["mfa"] = response }
                continue
            }
            let providerId: String
            do {
                providerId = try await providers.validate(provider, data, options: options)
            } catch let error as ParseError where error.code == .objectNotFound && !auth.isMaster {
                throw ParseError(.init(rawValue: 206), "Insufficient auth.")
            }
            if let other = try await userId(provider: provider, id: providerId), other != id {
                throw ParseError(.init(rawValue: 208), "this auth is already used")
            }
            current[provider] = data
        }
        return current
    }

    /// `DELETE /users/:id`: only the user itself or the master key; its sessions go with it.
    public func delete(_ id: String, auth: Auth) async throws {
        if !auth.isMaster, auth.userId == nil { throw ParseError(.init(rawValue: 206), "Insufficient auth to delete user") }
        try await objects.delete("_User", objectId: id, auth: auth, trusted: true)
        try await sessions.revokeAll(userId: id)
    }

    /// `POST /logout`.
    public func logOut(auth: Auth) async throws {
        guard let token = auth.sessionToken else { throw ParseError(.invalidSessionToken, "Invalid session token") }
        try await sessions.revoke(token: token)
        if let after = loginHooks.afterLogout {
            var session: [String: JSONValue] = ["sessionToken": .string(token)]
            if let userId = auth.userId { session["user"] = ["__type": "Pointer", "className": "_User", "objectId": .string(userId)] }
            await after(session, auth)
        }
    }
}

/// Cloud code around log-in and log-out (`CloudRuntime.loginHooks`): `beforeLogin` may refuse a log-in whose
/// credentials are right; `afterLogin` and `afterLogout` only observe (their failures are logged).
public struct LoginHooks: Sendable {
    public var beforeLogin: (@Sendable (_ user: [String: JSONValue], _ auth: Auth) async throws -> Void)?
    public var afterLogin: (@Sendable (_ user: [String: JSONValue], _ auth: Auth) async -> Void)?
    public var afterLogout: (@Sendable (_ session: [String: JSONValue], _ auth: Auth) async -> Void)?
    /// Sends an MFA code by SMS: `(cloud function, mobile, token)`, the function named by `auth.mfa.sendSMS`.
    public var sendMFASMS: (@Sendable (_ function: String, _ mobile: String, _ token: String) async throws -> Void)?
    /// Runs before a password-reset mail is sent for a known user; may refuse.
    public var beforePasswordResetRequest: (@Sendable (_ user: [String: JSONValue], _ auth: Auth) async throws -> Void)?
    public init() {}
}
