public import ParsleyCore

/// Settings that change what the Parse API does (transport settings live with the executable).
public struct ParseServerOptions: Sendable {
    public var applicationId: String
    public var masterKey: String
    /// A master key that may read everything and change nothing (`readOnlyMasterKey`).
    public var readOnlyMasterKey: String? = nil
    /// Client keys; when any is set, requests must carry one of them (or the master key).
    public var restAPIKey: String?
    public var clientKey: String?
    public var javascriptKey: String?
    public var dotNetKey: String?
    public var mountPath: String
    /// Base for absolute URLs (`Location`, file URLs). Nil: derived from the request's Host header.
    public var publicServerURL: String?
    public var defaultLimit: Int
    public var maxLimit: Int?
    /// Counts of a whole class with the master key (no `where`, no permissions to check) answer the database's
    /// estimate once it reaches this many rows, as Parse Server does on PostgreSQL, instead of reading every row
    /// (`estimatedCountThreshold`; 0: always count).
    public var estimatedCountThreshold = 100_000
    public var allowClientClassCreation: Bool
    /// Parse Server 9's `databaseOptions.allowPublicExplain`: whether a find with `explain` is accepted without the
    /// master key (default false: 102 `Using the explain query parameter requires the master key`).
    public var allowPublicExplain = false
    /// Parse Server 9.10's `allowAggregationForReadOnlyMasterKey` (default true): false refuses `/aggregate` to the
    /// read-only master key with 119.
    public var allowAggregationForReadOnlyMasterKey = true
    /// Parse Server's `schema` option: class definitions applied at start (`DefinedSchemas`); with `lockSchemas`,
    /// `POST`/`PUT /schemas` answer 119.
    public var schema: DefinedSchemas? = nil
    /// Parse Server's `logLevels`: the levels of cloud code's trigger and function lines.
    public var cloudLogLevels = CloudLogLevels()
    public var maxBatchSize: Int
    public var maxRequestBytes: Int
    /// The app's name in mails and pages (nil: the application id).
    public var appName: String? = nil
    /// Committed writes become `ChangeEvent`s on `ParseAPI.changes` (Writes/ChangeFeed.swift). Off by default: it
    /// costs a read of the original and of the saved object per write; on when something consumes them
    /// (`PARSLEY_CHANGE_EVENTS=true`; LiveQuery and cloud code will turn it on).
    public var changeEvents = false
    /// Sent as `X-Parse-Webhook-Key` with every webhook call, so receivers can tell Parsley's calls (`webhookKey`).
    public var webhookKey: String? = nil
    /// A webhook that has not answered in this time fails its call (141).
    public var webhookTimeout: Duration = .seconds(10)
    /// How often each node looks for due scheduled jobs (`_JobSchedule`).
    public var schedulerInterval: Duration = .seconds(10)
    /// Users, sessions, passwords and log-in.
    public var accounts = AccountOptions()
    /// Verification and password-reset mails.
    public var email = EmailOptions()
    /// The pages the mailed links open (`customPages`, `pages`).
    public var pages = PagesOptions()
    /// Where file bytes live and who may upload.
    public var files = FileOptions()
    /// What requests may carry and from where.
    public var security = SecurityOptions()
    /// Push providers and the push queue's pace (Push/PushService.swift).
    public var push = PushOptions()
    /// LiveQuery over WebSocket (LiveQuery/): off unless classes are named (`liveQuery.classNames`).
    public var liveQuery = LiveQueryOptions()
    /// The embedded admin dashboard at `/dashboard`.
    public var dashboard = DashboardOptions()
    /// Fields hidden from clients in every class (`protectedFields`): class → `*`, `authenticated`, `role:…`,
    /// `userField:…` or a user id → fields, added to each class's own protected fields. Parse Server's default
    /// (`_User`'s `email` for everyone but the user) is always part of it.
    public var protectedFields: [String: [String: [String]]] = defaultProtectedFields
    /// Parse Server 9's `protectedFieldsOwnerExempt` (default true): a user reading their own `_User` sees all its
    /// fields; false applies `protectedFields` to it too.
    public var protectedFieldsOwnerExempt = true
    /// Parse Server 9's `protectedFieldsSaveResponseExempt` (default true): false leaves protected fields out of the
    /// answers to creates and updates too.
    public var protectedFieldsSaveResponseExempt = true
    /// Parse Server 9's `protectedFieldsTriggerExempt` (default false): cloud-code triggers see the object and the
    /// original as the caller may read them, without its protected fields; true shows them whole.
    public var protectedFieldsTriggerExempt = false
    /// Parse Server 9's `enableSanitizedErrorResponse` (default true since 8.5): permission and authentication
    /// refusals answer `Permission denied` (same code), the detailed message goes to the log; false shows it.
    public var enableSanitizedErrorResponse = true
    /// Parse Server 9.9's `query.aggregationRawValues` / `query.aggregationRawFieldNames`: the defaults of an
    /// aggregate's `rawValues` / `rawFieldNames` (a request's own value wins).
    public var aggregationRawValues = false
    public var aggregationRawFieldNames = false
    /// Clients may choose a new object's id by sending `objectId` (`allowCustomObjectId`).
    public var allowCustomObjectId = false
    /// Characters of a generated objectId (`objectIdSize`, 10).
    public var objectIdSize = 10
    /// Parse Server's GraphQL API is served at `graphQLPath` (`mountGraphQL`; off by default).
    public var mountGraphQL = false
    /// Where the GraphQL API answers: a path on the server's root, not under `mountPath` (`graphQLPath`).
    public var graphQLPath = "/graphql"
    /// Introspection and query-size limits for callers without the master key (`graphQLPublicIntrospection`,
    /// `requestComplexity.graphQLDepth`/`graphQLFields`).
    public var graphQLLimits = GraphQLLimits()
    /// `requestComplexity`'s REST keys (`includeDepth`, `includeCount`, `subqueryDepth`, `queryDepth`,
    /// `batchRequestLimit`) for callers without the master or maintenance key; all off by default, as in Parse Server 9.
    public var requestComplexity = RequestComplexity()
    public static let defaultProtectedFields: [String: [String: [String]]] = ["_User": ["*": ["email"]]]

    public init(
        applicationId: String, masterKey: String, restAPIKey: String? = nil, clientKey: String? = nil, javascriptKey: String? = nil,
        dotNetKey: String? = nil, mountPath: String = "/parse", publicServerURL: String? = nil, defaultLimit: Int = 100, maxLimit: Int? = nil,
        allowClientClassCreation: Bool = false, maxBatchSize: Int = 1000, maxRequestBytes: Int = 20 * 1024 * 1024
    ) {
        self.applicationId = applicationId
        self.masterKey = masterKey
        self.restAPIKey = restAPIKey
        self.clientKey = clientKey
        self.javascriptKey = javascriptKey
        self.dotNetKey = dotNetKey
        self.mountPath = mountPath
        self.publicServerURL = publicServerURL
        self.defaultLimit = defaultLimit
        self.maxLimit = maxLimit
        self.allowClientClassCreation = allowClientClassCreation
        self.maxBatchSize = maxBatchSize
        self.maxRequestBytes = maxRequestBytes
    }

    /// Whether any client key is configured (then one must be presented).
    public var requiresClientKey: Bool {
        [restAPIKey, clientKey, javascriptKey, dotNetKey].contains { $0 != nil }
    }
}

/// Users, sessions, passwords and log-in: Parse Server's options of the same names.
public struct AccountOptions: Sendable {
    /// Session lifetime in seconds (`sessionLength`, one year).
    public var sessionLength: Int64 = 31_536_000
    /// Sessions get an `expiresAt` (`expireInactiveSessions`); off: they never expire.
    public var expireInactiveSessions = true
    /// A session used when less than half of `sessionLength` is left is extended to a full `sessionLength` from
    /// now (`extendSessionOnUse`).
    public var extendSessionOnUse = false
    /// Changing or resetting a password revokes the user's other sessions (`revokeSessionOnPasswordReset`).
    public var revokeSessionOnPasswordReset = true
    /// bcrypt cost for password hashes (Parse Server uses 10).
    public var bcryptCost: UInt8 = 10
    /// New users get an ACL readable and writable by themselves only (`enforcePrivateUsers`).
    public var enforcePrivateUsers = true
    /// `authData.anonymous` sign-ups are accepted (`enableAnonymousUsers`).
    public var enableAnonymousUsers = true
    /// `email` (`convertEmailToLowercase`) and `username` (`convertUsernameToLowercase`) are lower-cased before a
    /// user is stored, and before one is looked up by them (log-in, password reset, verification requests).
    public var convertEmailToLowercase = false
    public var convertUsernameToLowercase = false
    /// Password rules (nil: any non-empty password).
    public var passwordPolicy: PasswordPolicy? = nil
    /// Locks an account after repeated failed log-ins (`accountLockout`; nil: never).
    public var lockout: AccountLockout? = nil
    /// Base URL of the GitHub API used to check `authData.github` tokens.
    public var githubAPIURL = "https://api.github.com"
    /// Parse Server's `auth` option: one object per provider (`{"apple": {"clientId": ...}, "anonymous": {"enabled":
    /// false}}`). The identity adapters build their providers from it (ParsleyAdapters' `AuthOption`); a provider it
    /// disables, or that nothing provides, answers 252.
    public var auth: [String: JSONValue] = [:]
    public init() {}
}

extension AccountOptions {
    /// A value of `_User`'s `email` or `username` as it is stored (`convertEmailToLowercase`, `convertUsernameToLowercase`).
    func lowercasing(_ field: String, _ value: String) -> String {
        switch field {
        case "email" where convertEmailToLowercase, "username" where convertUsernameToLowercase: return value.lowercased()
        default: return value
        }
    }

    /// Lower-cases a user's `email` and `username` before they are stored, as Parse Server's DatabaseController does
    /// for every write of `_User` (after cloud code's `beforeSave`).
    func lowercase(_ fields: inout [String: JSONValue]) {
        for field in ["email", "username"] {
            if case .string(let value)? = fields[field] { fields[field] = .string(lowercasing(field, value)) }
        }
    }
}

/// Verification and password-reset mails: Parse Server's options of the same names.
public struct EmailOptions: Sendable {
    /// Sends the mails; the default only logs them (`emailAdapter`).
    public var adapter: any EmailAdapter = LoggingEmailAdapter()
    /// Sign-up (and changing the email) sends a verification mail and sets `emailVerified` false.
    public var verifyUserEmails = false
    /// With `verifyUserEmails`: no session at sign-up, and log-in of an unverified user answers 205.
    public var preventLoginWithUnverifiedEmail = false
    /// With `verifyUserEmails`: sign-up of an unverified user answers 205 (the user is still created).
    public var preventSignupWithUnverifiedEmail = false
    /// Seconds a verification link stays valid (`emailVerifyTokenValidityDuration`; nil: until used).
    public var verifyTokenValidityDuration: Int64? = nil
    /// `/verificationEmailRequest` answers success for an unknown or already verified e-mail, so it cannot be
    /// used to learn which e-mails have accounts (`emailVerifySuccessOnInvalidEmail`).
    public var verifySuccessOnInvalidEmail = true
    /// Verification mails are sent (`sendUserEmailVerification`); false: tokens are still made and `emailVerified`
    /// still set false, but no mail goes out (at sign-up, email change or a verification request).
    public var sendUserEmailVerification = true
    /// A verification request re-sends the user's unexpired token instead of a new one (`emailVerifyTokenReuseIfValid`;
    /// needs `verifyTokenValidityDuration`).
    public var verifyTokenReuseIfValid = false
    /// The app's own wording of the verification and password-reset mails (`emailTemplates`); Parse Server's
    /// default texts otherwise.
    public var templates = EmailTemplateSet()
    public init() {}
}

/// Files (Files/FileService.swift); uploads are limited by `maxRequestBytes` (Parse Server's maxUploadSize).
public struct FileOptions: Sendable {
    /// Where file bytes live: a folder (default), the database, or an adapter of your own (`filesAdapter`).
    public var adapter: FilesAdapter = .filesystem
    /// During a move between stores (`parsley files migrate`): the old store, read for files `adapter` does not
    /// have yet (`FallbackFileStore`); nil: none.
    public var fallbackAdapter: FilesAdapter? = nil
    /// The folder of the filesystem adapter (nil: `parsley-files/<app id>` in the temporary folder).
    public var directory: String? = nil
    /// Who may upload (`fileUpload`).
    public var upload = FileUploadOptions()
    /// Uploads keep the client's name, without the random `<32 hex>_` prefix (`preserveFileName`); a later upload of
    /// the same name replaces the file, as in Parse Server.
    public var preserveFileName = false
    /// An upload whose client sends nothing for this long is abandoned (its partial file removed), so a
    /// stalled or vanished client never holds a request open.
    public var uploadStallTimeout: Duration = .seconds(30)
    /// Files in the folder or the database are encrypted at rest with AES-256-GCM under this key
    /// (`encryptionKey`), in the format of Parse Server's fs and GridFS adapters (`EncryptedFileStore`).
    public var encryptionKey: String? = nil
    public init() {}
}

/// What requests may carry and from where (Parse Server 7's options of the same names).
public struct SecurityOptions: Sendable {
    /// Keys (and key/value pairs) refused anywhere in a request body, a `where` or `/config`
    /// (`requestKeywordDenylist`): 400/105 `Prohibited keyword in request data`.
    public var requestKeywordDenylist: [KeywordRule] = KeywordRule.parseServerDefault {
        didSet { keywordDenylist = KeywordDenylist(requestKeywordDenylist) }
    }
    /// `requestKeywordDenylist`, compiled once.
    public private(set) var keywordDenylist = KeywordDenylist(KeywordRule.parseServerDefault)
    /// Addresses the master key is accepted from (`masterKeyIps`); nil: every address. A master key from elsewhere
    /// is answered 403 `unauthorized`, as Parse Server does.
    public var masterKeyIps: [IPRange]? = nil
    /// Addresses the read-only master key is accepted from (`readOnlyMasterKeyIps`, Parse Server 9.5); nil: those of
    /// `masterKeyIps`. From elsewhere it is ignored as the master key is.
    public var readOnlyMasterKeyIps: [IPRange]? = nil
    /// Parse Server's `maintenanceKey` (nil: none) and the addresses it is accepted from (`maintenanceKeyIps`,
    /// default `127.0.0.1` and `::1`; empty: nowhere).
    public var maintenanceKey: String? = nil
    public var maintenanceKeyIps: [IPRange] = ["127.0.0.1", "::1"].compactMap(IPRange.init)
    /// Which hops in front of the server may name the client (`X-Forwarded-For`) and its protocol
    /// (`X-Forwarded-Proto`) (`trustProxy`); the client's address feeds rate limits, `masterKeyIps` and the access log.
    public var trustProxy: TrustProxy = .none
    /// Origins CORS answers allow (`allowOrigin`): the request's `Origin` when listed, else the first entry.
    public var allowOrigin: [String] = ["*"]
    /// Request headers CORS answers allow besides Parse's own (`allowHeaders`).
    public var allowHeaders: [String] = []
    /// Retried requests with the same `X-Parse-Request-Id` are not applied twice (`idempotencyOptions`); nil: off.
    public var idempotency: IdempotencyOptions? = nil
    /// `security.enableCheck`: `GET /security` answers the security check report (409 otherwise).
    public var enableCheck = false
    /// `security.enableCheckLog`: the report's failures are also logged at start.
    public var enableCheckLog = false
    public init() {}
}

/// The embedded dashboard (`/dashboard`): on by default; signing in needs the master key (or the read-only one), or a
/// user of `adminRole`.
public struct DashboardOptions: Sendable {
    public var enabled = true
    /// Members of this role (directly or through inherited roles) may sign in with their username and password.
    public var adminRole: String? = nil
    /// A dashboard session ends after this long without a request.
    public var idleTimeout: Duration = .seconds(3600)
    public init() {}
}

/// Who is asking: the master key, a user (with the session that signed in), or nobody. Where the request came from and
/// what else it carried (mount URL, request id, address, headers, cloud context) is `RequestInfo`.
public struct Auth: Sendable {
    public var isMaster: Bool
    /// The read-only master key: reads as the master, writes nothing (119).
    public var isReadOnly = false
    /// Parse Server's maintenance key (`X-Parse-Maintenance-Key` from an address `maintenanceKeyIps` allows): the
    /// master's rights on object routes only (`isMaster` is set per route by the HTTP pipeline), never a session's
    /// user, and cloud code does not see it as the master.
    public var isMaintenance = false
    public var userId: String?
    public var roles: [String]
    public var installationId: String?
    /// The session token the request carried (already validated).
    public var sessionToken: String?
    /// Whether cloud code's triggers run for this caller's reads and writes (cloud code may opt out for its own).
    public var runsTriggers = true

    public init(isMaster: Bool, userId: String? = nil, roles: [String] = [], installationId: String? = nil, sessionToken: String? = nil) {
        self.isMaster = isMaster
        self.userId = userId
        self.roles = roles
        self.installationId = installationId
        self.sessionToken = sessionToken
    }

    public static let master = Auth(isMaster: true)
    public static let nobody = Auth(isMaster: false)

    /// ACL principals for reading and writing; nil for the master key (no filtering).
    public var principals: [String]? {
        if isMaster { return nil }
        var p = ["*"]
        if let userId { p.append(userId) }
        p += roles.map { "role:\($0)" }
        return p
    }
}

/// One entry of `requestKeywordDenylist`: a key, a value, or a key with a given value.
public struct KeywordRule: Sendable, Equatable {
    public var key: String?
    public var value: JSONValue?
    public init(key: String? = nil, value: JSONValue? = nil) {
        self.key = key
        self.value = value
    }

    /// Parse Server's default: `{_bsontype: "Code"}`, `{key: "constructor"}`, `{key: "__proto__"}`.
    public static let parseServerDefault: [KeywordRule] = [
        KeywordRule(key: "_bsontype", value: .string("Code")), KeywordRule(key: "constructor"), KeywordRule(key: "__proto__"),
    ]
}

/// `idempotencyOptions`: which paths (regular expressions over the path after the mount, e.g. `classes/.*`)
/// remember their `X-Parse-Request-Id`, and for how many seconds.
public struct IdempotencyOptions: Sendable, Equatable {
    public var paths: [String]
    public var ttl: Int
    public init(paths: [String] = [], ttl: Int = 300) {
        self.paths = paths
        self.ttl = ttl
    }
}
