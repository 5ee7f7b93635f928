import Foundation
import ParsleyCore

/// One setting of `parsley serve`: its config-file key, its environment variables and its flags, and what
/// Parsley does with it. Every reader (config file, environment, flags) finds settings through `OptionTable`,
/// and `docs/parse-server-options.md` lists the same rows (a test compares the two).
struct OptionSpec: Sendable {
    enum Origin: Sendable { case parseServer, parsley }
    /// `flag` values of a `bool` may be left out (`--enforcePrivateUsers` means true).
    enum Kind: Sendable { case value, bool }
    enum Status: String, Sendable { case supported, ignored, refused }

    /// Parse Server's option key (or Parsley's own camel-case name): the config-file key and the `--key` flag.
    let key: String
    /// Environment variables, most specific first; the first is the documented one (Parse Server's).
    let env: [String]
    let kind: Kind
    let status: Status
    let origin: Origin
    /// For ignored and refused options the reason (part of the warning or error); for supported ones a note.
    let note: String
    /// More config-file keys meaning the same (`applicationId` for `appId`).
    var aliases: [String] = []
    /// Environment variables of parts of a JSON-valued option (`passwordPolicy.validatorPattern`), read by the
    /// option's own parser: part → variables.
    var parts: [(String, [String])] = []
    /// Values that already describe what Parsley does: an ignored or refused option set to one of them starts
    /// without a warning (`allowCustomObjectId: false`, `masterKeyIps: ["0.0.0.0/0", "::0"]`).
    var harmless: @Sendable (JSONValue) -> Bool = { _ in false }

    /// `--appId` (Parse Server's flag) and `--app-id` (Parsley's spelling of the same).
    var flags: [String] {
        let kebab = "--" + Self.kebab(key)
        return kebab == "--" + key ? ["--" + key] : ["--" + key, kebab]
    }

    /// `restAPIKey` → `rest-api-key`, `databaseURI` → `database-uri`, `graphQLPath` → `graph-ql-path`.
    static func kebab(_ name: String) -> String {
        let chars = Array(name)
        var out = ""
        for (i, c) in chars.enumerated() {
            if c.isUppercase, i > 0 {
                let previousLower = chars[i - 1].isLowercase || chars[i - 1].isNumber
                let nextLower = i + 1 < chars.count && chars[i + 1].isLowercase
                if previousLower || (chars[i - 1].isUppercase && nextLower) { out.append("-") }
            }
            out.append(Character(c.lowercased()))
        }
        return out
    }

    /// The variable an error message names (with the key when they differ in more than spelling).
    var shownName: String { "\(env.first ?? key) (\(key))" }
}

/// Values that match Parsley's behaviour, for `OptionSpec.harmless`.
enum Harmless {
    static func isFalse(_ v: JSONValue) -> Bool { v == .bool(false) || v == .string("false") || v == .int(0) || v == .string("0") }
    static func isTrue(_ v: JSONValue) -> Bool { v == .bool(true) || v == .string("true") || v == .int(1) || v == .string("1") }
    static func isEmpty(_ v: JSONValue) -> Bool {
        switch v {
        case .null: return true
        case .string(let s): return s.isEmpty
        case .array(let a): return a.isEmpty
        case .object(let o): return o.isEmpty
        default: return false
        }
    }
    static func number(_ n: Int) -> @Sendable (JSONValue) -> Bool {
        { v in v.integerValue == n || v.stringValue == String(n) }
    }
    /// A list (JSON array or comma-separated text) of strings equal to one of `allowed` (as sets).
    static func list(_ allowed: [Set<String>]) -> @Sendable (JSONValue) -> Bool {
        { v in
            let items: [String]
            switch v {
            case .array(let a): items = a.compactMap(\.stringValue)
            case .string(let s): items = s.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            default: return false
            }
            return allowed.contains(Set(items))
        }
    }
}

enum OptionTable {
    static func supported(
        _ key: String, _ env: [String], _ kind: OptionSpec.Kind = .value, _ origin: OptionSpec.Origin = .parseServer, _ note: String = "",
        aliases: [String] = [], parts: [(String, [String])] = []
    ) -> OptionSpec {
        OptionSpec(key: key, env: env, kind: kind, status: .supported, origin: origin, note: note, aliases: aliases, parts: parts)
    }

    static func ignored(
        _ key: String, _ env: String, _ kind: OptionSpec.Kind = .value, _ reason: String,
        harmless: @escaping @Sendable (JSONValue) -> Bool = { _ in false }
    ) -> OptionSpec {
        OptionSpec(key: key, env: [env], kind: kind, status: .ignored, origin: .parseServer, note: reason, harmless: harmless)
    }

    static func refused(
        _ key: String, _ env: String, _ kind: OptionSpec.Kind = .value, _ reason: String,
        harmless: @escaping @Sendable (JSONValue) -> Bool = { _ in false }
    ) -> OptionSpec {
        OptionSpec(key: key, env: [env], kind: kind, status: .refused, origin: .parseServer, note: reason, harmless: harmless)
    }

    static let noCloudCode = "Parsley runs no JavaScript Cloud Code (cloud code is Swift, `ParsleyServer`, or webhooks)"

    /// Parse Server 7's options (`src/Options/Definitions.js` of parse-server 7.3.0, plus
    /// `emailVerifySuccessOnInvalidEmail` from later releases), then Parsley's own settings.
    static let all: [OptionSpec] = [
        supported(
            "accountLockout", ["PARSE_SERVER_ACCOUNT_LOCKOUT"], .value, .parseServer, "JSON `{duration, threshold, unlockOnPasswordReset}`",
            parts: [
                ("duration", ["PARSE_SERVER_ACCOUNT_LOCKOUT_DURATION"]), ("threshold", ["PARSE_SERVER_ACCOUNT_LOCKOUT_THRESHOLD"]),
                ("unlockOnPasswordReset", ["PARSE_SERVER_ACCOUNT_LOCKOUT_UNLOCK_ON_PASSWORD_RESET"]),
            ]),
        supported(
            "allowAggregationForReadOnlyMasterKey", ["PARSE_SERVER_ALLOW_AGGREGATION_FOR_READ_ONLY_MASTER_KEY"], .bool, .parseServer,
            "default `true`; `false`: `/aggregate` with the read-only master key is 119 `read-only masterKey isn't allowed to perform the aggregate operation.`"
        ),
        supported("allowClientClassCreation", ["PARSE_SERVER_ALLOW_CLIENT_CLASS_CREATION"], .bool),
        supported(
            "allowCustomObjectId", ["PARSE_SERVER_ALLOW_CUSTOM_OBJECT_ID"], .bool, .parseServer,
            "a create's (and a sign-up's) `objectId` is the new object's; empty or null: 104 `objectId must not be empty, null or "
                + "undefined`; one already taken: 137; default `false` (an `objectId` in a create is 105)"),
        ignored(
            "allowExpiredAuthDataToken", "PARSE_SERVER_ALLOW_EXPIRED_AUTH_DATA_TOKEN", .bool,
            "authData tokens are checked at every log-in (Parse Server's `false`)", harmless: Harmless.isFalse),
        supported(
            "allowHeaders", ["PARSE_SERVER_ALLOW_HEADERS"], .value, .parseServer,
            "JSON array or comma list of request headers CORS answers allow besides Parse's own (preflight too)"),
        supported(
            "allowOrigin", ["PARSE_SERVER_ALLOW_ORIGIN"], .value, .parseServer,
            "an origin or a list (JSON array or comma list): `Access-Control-Allow-Origin` is the request's `Origin` when listed, "
                + "else the first entry (preflight too); default `*`"),
        ignored("analyticsAdapter", "PARSE_SERVER_ANALYTICS_ADAPTER", .value, "`/events/*` are accepted and not stored"),
        supported("appId", ["PARSE_SERVER_APPLICATION_ID", "APP_ID"], .value, .parseServer, "default `parsley`", aliases: ["applicationId"]),
        supported("appName", ["PARSE_SERVER_APP_NAME", "APP_NAME"], .value, .parseServer, "default: the application id"),
        supported(
            "auth", ["PARSE_SERVER_AUTH_PROVIDERS"], .value, .parseServer,
            "JSON (or a path to a JSON file), one object per provider: `apple`, `google` (`clientId` required), `facebook` "
                + "(Graph API access tokens: `appIds`, `appSecret`, `graphURL`; Limited Login tokens: `clientId`), `github`, `anonymous`, "
                + "any name with `\"oidc\": true` (`issuer`, `clientId`, `jwksURL`), any name with `\"oauth2\": true` "
                + "(`tokenIntrospectionEndpointUrl`, `useridField`, `appidField`, `appIds`, `authorizationHeader`); `enabled: false` turns "
                + "one off (252); `jwksURL` replaces a provider's published keys"),
        ignored("cacheAdapter", "PARSE_SERVER_CACHE_ADAPTER", .value, "schemas, sessions and roles are cached in memory by Parsley itself"),
        ignored("cacheMaxSize", "PARSE_SERVER_CACHE_MAX_SIZE", .value, "Parsley sizes its own caches", harmless: Harmless.number(10000)),
        ignored("cacheTTL", "PARSE_SERVER_CACHE_TTL", .value, "Parsley's caches are invalidated on change", harmless: Harmless.number(5000)),
        supported("clientKey", ["PARSE_SERVER_CLIENT_KEY"]),
        ignored("cloud", "PARSE_SERVER_CLOUD", .value, "\(noCloudCode): the JavaScript file is not loaded"),
        ignored(
            "cluster", "PARSE_SERVER_CLUSTER", .value, "one process per server; run several behind a load balancer (on PostgreSQL)",
            harmless: Harmless.isFalse),
        supported(
            "collectionPrefix", ["PARSE_SERVER_COLLECTION_PREFIX"], .value, .parseServer,
            "before every table and index name (classes, `_SCHEMA`, join tables, Parsley's own tables), on SQLite and PostgreSQL, and in "
                + "PostgreSQL's notification channel: apps with different prefixes share one database without seeing each other's data; "
                + "letters, digits and `_`, at most 20"),
        supported(
            "convertEmailToLowercase", ["PARSE_SERVER_CONVERT_EMAIL_TO_LOWERCASE"], .bool, .parseServer,
            "sign-up and user updates store `email` lower-cased; log-in, `/requestPasswordReset` and `/verificationEmailRequest` "
                + "find it lower-cased too; default `false`"),
        supported(
            "convertUsernameToLowercase", ["PARSE_SERVER_CONVERT_USERNAME_TO_LOWERCASE"], .bool, .parseServer,
            "sign-up and user updates store `username` lower-cased; log-in finds it lower-cased too; default `false`"),
        supported(
            "customPages", ["PARSE_SERVER_CUSTOM_PAGES"], .value, .parseServer,
            "JSON of URLs: the verification and password-reset links redirect (302) to the app's own pages with Parse Server's "
                + "query parameters; `parseFrameURL` wraps the mailed links; a page left out is Parsley's own",
            parts: ServerSettings.customPageParts.map { ($0.0, [$0.1]) }),
        refused(
            "databaseAdapter", "PARSE_SERVER_DATABASE_ADAPTER", .value,
            "adapter modules cannot be loaded; only databaseURI (sqlite: or postgres://) chooses the database, and starting on another one would put the data elsewhere"
        ),
        supported(
            "databaseOptions", ["PARSE_SERVER_DATABASE_OPTIONS"], .value, .parseServer,
            "JSON; `allowPublicExplain` (default `false`, as in Parse Server 9): a find or aggregate with `explain` without the master "
                + "key is 102 `Using the explain query parameter requires the master key` unless `true` (Parsley answers the results, not a "
                + "query plan); other keys are database driver options, ignored with a warning (Parsley's are PARSLEY_DATABASE_POOL_SIZE "
                + "and PARSLEY_STATEMENT_TIMEOUT_MS)",
            parts: [("allowPublicExplain", ["PARSE_SERVER_DATABASE_ALLOW_PUBLIC_EXPLAIN"])]),
        supported(
            "databaseURI", ["PARSE_SERVER_DATABASE_URI", "DATABASE_URI"], .value, .parseServer,
            "`sqlite:<path>` (default `sqlite:<data>/parsley.sqlite`) or `postgres://`; `mongodb://` stops the start"),
        supported("defaultLimit", ["PARSE_SERVER_DEFAULT_LIMIT"]),
        ignored(
            "directAccess", "PARSE_SERVER_DIRECT_ACCESS", .bool, "Swift cloud code always calls the services directly, never over HTTP",
            harmless: Harmless.isTrue),
        supported("dotNetKey", ["PARSE_SERVER_DOT_NET_KEY"]),
        ignored(
            "emailAdapter", "PARSE_SERVER_EMAIL_ADAPTER", .value,
            "adapter modules cannot be loaded; mails go through PARSLEY_SMTP_HOST, or are only logged without it"),
        supported(
            "emailVerifySuccessOnInvalidEmail", ["PARSE_SERVER_EMAIL_VERIFY_SUCCESS_ON_INVALID_EMAIL"], .bool, .parseServer,
            "default `true`; newer than 7.3.0 (parse-server pull request 10172)"),
        supported(
            "emailVerifyTokenReuseIfValid", ["PARSE_SERVER_EMAIL_VERIFY_TOKEN_REUSE_IF_VALID"], .bool, .parseServer,
            "a verification request re-sends the user's unexpired token; needs `emailVerifyTokenValidityDuration`; default `false`"),
        supported("emailVerifyTokenValidityDuration", ["PARSE_SERVER_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION"]),
        supported("enableAnonymousUsers", ["PARSE_SERVER_ENABLE_ANON_USERS"], .bool, .parseServer, "default `true`"),
        ignored(
            "enableCollationCaseComparison", "PARSE_SERVER_ENABLE_COLLATION_CASE_COMPARISON", .bool, "a MongoDB setting",
            harmless: Harmless.isFalse),
        ignored(
            "enableExpressErrorHandler", "PARSE_SERVER_ENABLE_EXPRESS_ERROR_HANDLER", .bool, "Parsley does not run on Express",
            harmless: Harmless.isFalse),
        ignored(
            "enableInsecureAuthAdapters", "PARSE_SERVER_ENABLE_INSECURE_AUTH_ADAPTERS", .bool,
            "Parsley has no insecure auth adapters: every provider checks its token with the provider (Parse Server 9's `false`)",
            harmless: Harmless.isFalse),
        ignored(
            "enableProductPurchaseLegacyApi", "PARSE_SERVER_ENABLE_PRODUCT_PURCHASE_LEGACY_API", .bool,
            "there is no legacy product-purchase API (`/validate_purchase`, `_Product`), as with Parse Server 9's `false`",
            harmless: Harmless.isFalse),
        supported(
            "enableSanitizedErrorResponse", ["PARSE_SERVER_ENABLE_SANITIZED_ERROR_RESPONSE"], .bool, .parseServer,
            "default `true` (Parse Server 8.5+): permission and authentication refusals (class-level permissions, master-only "
                + "classes and routes, protected fields in a query, `/users/me` without a session) answer `Permission denied` "
                + "with the same code and status, the detailed message goes to the log; `false` answers the detailed message"),
        ignored("encodeParseObjectInCloudFunction", "PARSE_SERVER_ENCODE_PARSE_OBJECT_IN_CLOUD_FUNCTION", .bool, noCloudCode),
        supported(
            "encryptionKey", ["PARSE_SERVER_ENCRYPTION_KEY"], .value, .parseServer,
            "files in the folder or the database are encrypted with AES-256-GCM in the format of Parse Server's fs and GridFS adapters "
                + "(also `filesAdapter.options.encryptionKey` of `@parse/fs-files-adapter`); with the S3 adapter the start stops; "
                + "`parsley files rotate-key` changes the key (README: Files encrypted at rest)"),
        supported(
            "enforcePrivateUsers", ["PARSE_SERVER_ENFORCE_PRIVATE_USERS"], .bool, .parseServer,
            "default `true` (Parse Server 7's): new users get an ACL of their own only"),
        supported(
            "expireInactiveSessions", ["PARSE_SERVER_EXPIRE_INACTIVE_SESSIONS"], .bool, .parseServer,
            "default `true`: sessions expire after sessionLength; `false`: new sessions have no `expiresAt` and never expire"),
        supported(
            "extendSessionOnUse", ["PARSE_SERVER_EXTEND_SESSION_ON_USE"], .bool, .parseServer,
            "a session used when less than half of sessionLength is left expires a full sessionLength from then; default `false`"),
        ignored("fileKey", "PARSE_SERVER_FILE_KEY", .value, "file URLs need no key"),
        OptionSpec(
            key: "filesAdapter", env: ["PARSE_SERVER_FILES_ADAPTER", "PARSLEY_FILES_ADAPTER"], kind: .value, status: .supported,
            origin: .parseServer,
            note:
                "`fs` (default; also `@parse/fs-files-adapter`), `database` (also `GridFSBucketAdapter`) or `@parse/s3-files-adapter` with its options "
                + "and `S3_*`/`AWS_*` variables (README: Files in S3); any other adapter stops the start"),
        supported(
            "fileUpload", ["PARSE_SERVER_FILE_UPLOAD_OPTIONS"], .value, .parseServer,
            "JSON `{enableForPublic, enableForAnonymousUser, enableForAuthenticatedUser, fileExtensions, allowedFileUrlDomains}`; "
                + "`allowedFileUrlDomains` (Parse Server 9, default `[\"*\"]`): the hosts a saved File value's `url` may name "
                + "(`*.example.com` for subdomains, `[]` none), else 130 `File URL domain '<host>' is not allowed.`",
            parts: [
                ("enableForPublic", ["PARSE_SERVER_FILE_UPLOAD_ENABLE_FOR_PUBLIC"]),
                ("enableForAnonymousUser", ["PARSE_SERVER_FILE_UPLOAD_ENABLE_FOR_ANONYMOUS_USER"]),
                ("enableForAuthenticatedUser", ["PARSE_SERVER_FILE_UPLOAD_ENABLE_FOR_AUTHENTICATED_USER"]),
                ("fileExtensions", ["PARSE_SERVER_FILE_UPLOAD_FILE_EXTENSIONS"]),
                ("allowedFileUrlDomains", ["PARSE_SERVER_FILE_UPLOAD_ALLOWED_FILE_URL_DOMAINS"]),
            ]),
        supported(
            "graphQLPath", ["PARSE_SERVER_GRAPHQL_PATH"], .value, .parseServer,
            "where the GraphQL API answers with `mountGraphQL`: a path on the server's root, not under `mountPath`; default `/graphql`"),
        supported(
            "graphQLPublicIntrospection", ["PARSE_SERVER_GRAPHQL_PUBLIC_INTROSPECTION"], .bool, .parseServer,
            "lets callers without the master key introspect the GraphQL schema and see \"did you mean\" hints; default `false`"),
        ignored(
            "graphQLSchema", "PARSE_SERVER_GRAPH_QLSCHEMA", .value,
            "a custom schema's resolvers are JavaScript; the generated schema is served (cloud functions through `callCloudCode`)"),
        supported("host", ["PARSE_SERVER_HOST"], .value, .parseServer, "default `0.0.0.0`"),
        supported(
            "idempotencyOptions", ["PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS"], .value, .parseServer, "JSON `{paths, ttl}`; off without paths",
            parts: [("paths", ["PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_PATHS"]), ("ttl", ["PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_TTL"])]),
        supported("javascriptKey", ["PARSE_SERVER_JAVASCRIPT_KEY"]),
        supported("jsonLogs", ["JSON_LOGS"], .bool, .parseServer, "`true`: logFormat `json` unless logFormat is set"),
        supported(
            "liveQuery", ["PARSE_SERVER_LIVE_QUERY"], .value, .parseServer,
            "JSON `{classNames}` (names or anchored regular expressions); WebSocket on the API port, any path",
            parts: [("classNames", ["PARSE_SERVER_LIVEQUERY_CLASSNAMES"])]),
        supported(
            "liveQueryServerOptions", ["PARSE_SERVER_LIVE_QUERY_SERVER_OPTIONS"], .value, .parseServer,
            "JSON: `websocketTimeout` (ms between pings); the keys are the app's own, other entries are ignored"),
        ignored("loggerAdapter", "PARSE_SERVER_LOGGER_ADAPTER", .value, "logs go to standard output (PARSLEY_LOG_FORMAT)"),
        supported(
            "logLevel", ["PARSE_SERVER_LOG_LEVEL", "LOG_LEVEL"], .value, .parseServer,
            "Parse Server's levels (`error`, `warn`, `info`, `verbose`, `debug`, `silly`) or `trace`…`critical`; default `info`"),
        supported(
            "logLevels", ["PARSE_SERVER_LOG_LEVELS"], .value, .parseServer,
            "JSON `{triggerAfter, triggerBeforeSuccess, triggerBeforeError, cloudFunctionSuccess, cloudFunctionError}`: the level of cloud "
                + "code's (Swift or webhook) trigger and function lines, `silent` for none; defaults `info`, `info`, `error`, `info`, `error`",
            parts: [
                ("triggerAfter", ["PARSE_SERVER_LOG_LEVELS_TRIGGER_AFTER"]),
                ("triggerBeforeSuccess", ["PARSE_SERVER_LOG_LEVELS_TRIGGER_BEFORE_SUCCESS"]),
                ("triggerBeforeError", ["PARSE_SERVER_LOG_LEVELS_TRIGGER_BEFORE_ERROR"]),
                ("cloudFunctionSuccess", ["PARSE_SERVER_LOG_LEVELS_CLOUD_FUNCTION_SUCCESS"]),
                ("cloudFunctionError", ["PARSE_SERVER_LOG_LEVELS_CLOUD_FUNCTION_ERROR"]),
            ]),
        ignored("logsFolder", "PARSE_SERVER_LOGS_FOLDER", .value, "logs go to standard output, not to files"),
        supported(
            "maintenanceKey", ["PARSE_SERVER_MAINTENANCE_KEY"], .value, .parseServer,
            "sent as `X-Parse-Maintenance-Key`: the master key's rights on `/classes`, `/users`, `/sessions`, `/installations`, `/roles` "
                + "(and in a batch), none elsewhere (master-only routes are 403); must differ from the master key"),
        supported(
            "maintenanceKeyIps", ["PARSE_SERVER_MAINTENANCE_KEY_IPS"], .value, .parseServer,
            "addresses and CIDR ranges (JSON array or comma list) the maintenance key is accepted from; from elsewhere it is ignored "
                + "(logged); default `127.0.0.1, ::1`; `[]`: nowhere"),
        supported(
            "masterKey", ["PARSE_SERVER_MASTER_KEY", "MASTER_KEY"], .value, .parseServer,
            "at least 8 characters; generated into `<data>/master.key` when absent"),
        supported(
            "masterKeyIps", ["PARSE_SERVER_MASTER_KEY_IPS"], .value, .parseServer,
            "addresses and CIDR ranges (JSON array or comma list); a master key from elsewhere is 403; default: every address (Parse Server 7: `127.0.0.1, ::1`)"
        ),
        ignored(
            "masterKeyTtl", "PARSE_SERVER_MASTER_KEY_TTL", .value,
            "the master key is a fixed string, never a function whose answer would be cached"),
        supported("maxLimit", ["PARSE_SERVER_MAX_LIMIT"]),
        ignored("maxLogFiles", "PARSE_SERVER_MAX_LOG_FILES", .value, "logs go to standard output, not to files"),
        supported(
            "maxUploadSize", ["PARSE_SERVER_MAX_UPLOAD_SIZE"], .value, .parseServer,
            "default `20mb`; limits every request body; the master key may give one raw upload its own limit with the header "
                + "`X-Parse-Upload-Max-Size` (Parse Server 9.5's per-file `maxUploadSize`)"),
        refused(
            "middleware", "PARSE_SERVER_MIDDLEWARE", .value,
            "Express middleware cannot run; requests it guards would go unguarded"),
        supported(
            "mountGraphQL", ["PARSE_SERVER_MOUNT_GRAPHQL"], .bool, .parseServer,
            "serves Parse Server's GraphQL API at `graphQLPath`, with subscriptions over WebSocket (README: GraphQL); default `false`"),
        supported("mountPath", ["PARSE_SERVER_MOUNT_PATH"], .value, .parseServer, "default `/parse`"),
        ignored(
            "mountPlayground", "PARSE_SERVER_MOUNT_PLAYGROUND", .bool,
            "the playground writes the master key into a public page; the dashboard has a GraphQL page", harmless: Harmless.isFalse),
        supported("objectIdSize", ["PARSE_SERVER_OBJECT_ID_SIZE"], .value, .parseServer, "characters of generated objectIds, 6 to 64; default 10"),
        supported(
            "pages", ["PARSE_SERVER_PAGES"], .value, .parseServer,
            "JSON; with `enableRouter`: Parse Server's pages router (`pagesEndpoint`, `pagesPath` with `{{placeholders}}`, "
                + "`placeholders`, `customUrls`, `forceRedirect`); `enableLocalization` and `customRoutes` are ignored with a warning",
            parts: ServerSettings.pagesParts.map { ($0.0, [$0.1]) }),
        supported(
            "passwordPolicy", ["PARSE_SERVER_PASSWORD_POLICY"], .value, .parseServer,
            "JSON; `maxPasswordAge` and `validatorCallback` are not implemented and stop the start",
            parts: [
                ("validatorPattern", ["PARSE_SERVER_PASSWORD_POLICY_VALIDATOR_PATTERN", "PARSE_SERVER_PASSWORD_POLICY_PATTERN"]),
                ("validationError", ["PARSE_SERVER_PASSWORD_POLICY_VALIDATION_ERROR"]),
                ("doNotAllowUsername", ["PARSE_SERVER_PASSWORD_POLICY_DO_NOT_ALLOW_USERNAME"]),
                ("maxPasswordHistory", ["PARSE_SERVER_PASSWORD_POLICY_MAX_PASSWORD_HISTORY"]),
                ("resetTokenValidityDuration", ["PARSE_SERVER_PASSWORD_POLICY_RESET_TOKEN_VALIDITY_DURATION"]),
                ("resetTokenReuseIfValid", ["PARSE_SERVER_PASSWORD_POLICY_RESET_TOKEN_REUSE_IF_VALID"]),
                ("resetPasswordSuccessOnInvalidEmail", ["PARSE_SERVER_PASSWORD_POLICY_RESET_PASSWORD_SUCCESS_ON_INVALID_EMAIL"]),
                ("maxPasswordAge", ["PARSE_SERVER_PASSWORD_POLICY_MAX_PASSWORD_AGE"]),
                ("validatorCallback", ["PARSE_SERVER_PASSWORD_POLICY_VALIDATOR_CALLBACK"]),
            ]),
        ignored(
            "playgroundPath", "PARSE_SERVER_PLAYGROUND_PATH", .value, "there is no playground (see mountPlayground)",
            harmless: { $0.stringValue == "/playground" }),
        supported("port", ["PORT", "PARSE_SERVER_PORT"], .value, .parseServer, "default `1337`; `0` lets the system choose"),
        supported(
            "preserveFileName", ["PARSE_SERVER_PRESERVE_FILE_NAME"], .bool, .parseServer,
            "uploads keep the client's name without the `<32 hex>_` prefix; the same name again replaces the file; default `false`"),
        supported("preventLoginWithUnverifiedEmail", ["PARSE_SERVER_PREVENT_LOGIN_WITH_UNVERIFIED_EMAIL"], .bool),
        supported("preventSignupWithUnverifiedEmail", ["PARSE_SERVER_PREVENT_SIGNUP_WITH_UNVERIFIED_EMAIL"], .bool),
        supported(
            "protectedFields", ["PARSE_SERVER_PROTECTED_FIELDS"], .value, .parseServer,
            "JSON `{class: {entity: [fields]}}` (entities as in a class's protectedFields: `*`, `authenticated`, `role:…`, "
                + "`userField:…`, a user id), added to each class's own protected fields on every read (get, find, include, "
                + "LiveQuery, aggregate, cloud code); Parse Server's default `{\"_User\": {\"*\": [\"email\"]}}` is always kept"),
        supported(
            "protectedFieldsOwnerExempt", ["PARSE_SERVER_PROTECTED_FIELDS_OWNER_EXEMPT"], .bool, .parseServer,
            "default `true`: a user reading their own `_User` sees all its fields; `false`: `protectedFields` apply to it too, "
                + "and an entity `protectedFields` sets itself no longer gets the default `email` added (Parse Server 9)"),
        supported(
            "protectedFieldsSaveResponseExempt", ["PARSE_SERVER_PROTECTED_FIELDS_SAVE_RESPONSE_EXEMPT"], .bool, .parseServer,
            "default `true`; `false`: the answers to creates and updates leave out the fields the caller may not read (Parse Server 9)"),
        supported(
            "protectedFieldsTriggerExempt", ["PARSE_SERVER_PROTECTED_FIELDS_TRIGGER_EXEMPT"], .bool, .parseServer,
            "default `false` (Parse Server 9): `beforeSave`, `afterSave`, `beforeDelete`, `afterDelete` (Swift and webhooks) "
                + "see `object` and `original` without the fields the caller may not read (fields the write itself sets stay); "
                + "`true`: triggers see the whole object"),
        supported(
            "publicServerURL", ["PARSE_PUBLIC_SERVER_URL", "PARSE_SERVER_PUBLIC_SERVER_URL"], .value, .parseServer,
            "default: from the request's Host"),
        supported(
            "push", ["PARSE_SERVER_PUSH"], .value, .parseServer,
            "JSON (or a path to a JSON file): `ios` (token auth `{key, keyId, teamId}`, `topic`, `production`; an array for several apps) and `android` (`firebaseServiceAccount`: FCM HTTP v1)"
        ),
        supported("rateLimit", ["PARSE_SERVER_RATE_LIMIT"], .value, .parseServer, "JSON array of rules"),
        supported(
            "query", ["PARSE_SERVER_QUERY"], .value, .parseServer,
            "JSON `{aggregationRawValues, aggregationRawFieldNames}` (Parse Server 9.9): the defaults of an aggregate's `rawValues` "
                + "and `rawFieldNames`; both `false`"),
        supported(
            "readOnlyMasterKey", ["PARSE_SERVER_READ_ONLY_MASTER_KEY"], .value, .parseServer,
            "reads as the master key; every write is 119 `read-only masterKey isn't allowed to perform the <op> operation.`"),
        supported(
            "readOnlyMasterKeyIps", ["PARSE_SERVER_READ_ONLY_MASTER_KEY_IPS"], .value, .parseServer,
            "addresses and CIDR ranges (JSON array or comma list) the read-only master key is accepted from; from elsewhere it is "
                + "ignored as the master key is; default: those of `masterKeyIps`"),
        supported(
            "requestComplexity", ["PARSE_SERVER_REQUEST_COMPLEXITY"], .value, .parseServer,
            "JSON; limits for callers without the master or maintenance key, -1 for no limit: `graphQLDepth` and "
                + "`graphQLFields` (GraphQL operations; Parsley's defaults 20 and 500), `includeDepth`, `includeCount`, "
                + "`subqueryDepth`, `queryDepth` (finds and counts, 102) and `batchRequestLimit` (sub-requests of a /batch, 107); "
                + "the REST keys default to -1 as in Parse Server 9",
            parts: [
                ("graphQLDepth", ["PARSE_SERVER_REQUEST_COMPLEXITY_GRAPHQL_DEPTH"]),
                ("graphQLFields", ["PARSE_SERVER_REQUEST_COMPLEXITY_GRAPHQL_FIELDS"]),
                ("includeDepth", ["PARSE_SERVER_REQUEST_COMPLEXITY_INCLUDE_DEPTH"]),
                ("includeCount", ["PARSE_SERVER_REQUEST_COMPLEXITY_INCLUDE_COUNT"]),
                ("subqueryDepth", ["PARSE_SERVER_REQUEST_COMPLEXITY_SUBQUERY_DEPTH"]),
                ("queryDepth", ["PARSE_SERVER_REQUEST_COMPLEXITY_QUERY_DEPTH"]),
                ("batchRequestLimit", ["PARSE_SERVER_REQUEST_COMPLEXITY_BATCH_REQUEST_LIMIT"]),
            ]),
        supported(
            "requestKeywordDenylist", ["PARSE_SERVER_REQUEST_KEYWORD_DENYLIST"], .value, .parseServer,
            "JSON array of `{key, value}`; default Parse Server's"),
        ignored(
            "requestContextMiddleware", "PARSE_SERVER_REQUEST_CONTEXT_MIDDLEWARE", .value,
            "an Express middleware function; Parsley runs no JavaScript (a request's context comes from `X-Parse-Cloud-Context`)"),
        supported("restAPIKey", ["PARSE_SERVER_REST_API_KEY"]),
        supported(
            "revokeSessionOnPasswordReset", ["PARSE_SERVER_REVOKE_SESSION_ON_PASSWORD_RESET"], .bool, .parseServer,
            "default `true`: a password reset or change revokes the user's sessions (a change keeps the caller's); `false` keeps them"),
        ignored(
            "scheduledPush", "PARSE_SERVER_SCHEDULED_PUSH", .bool,
            "pushes with a `push_time` are always sent when due (Parse Server only stores them)",
            harmless: Harmless.isTrue),
        supported(
            "schema", ["PARSE_SERVER_SCHEMA"], .value, .parseServer,
            "JSON (or a path to a JSON file) `{definitions, strict, deleteExtraFields, recreateModifiedFields, lockSchemas}`, applied at start "
                + "as Parse Server's DefinedSchemas (in one transaction; nodes starting at once retry); `strict` warns, `lockSchemas` makes "
                + "`POST`/`PUT /schemas` 119; `beforeMigration`/`afterMigration` are ignored with a warning"),
        supported(
            "security", ["PARSE_SERVER_SECURITY"], .value, .parseServer,
            "JSON `{enableCheck, enableCheckLog}`: `GET /security` answers the check report; failures logged at start"),
        supported(
            "sendUserEmailVerification", ["PARSE_SERVER_SEND_USER_EMAIL_VERIFICATION"], .bool, .parseServer,
            "`false`: with verifyUserEmails, tokens are made and `emailVerified` set false, but no verification mail is sent; "
                + "default `true` (a boolean only)"),
        ignored("serverCloseComplete", "PARSE_SERVER_SERVER_CLOSE_COMPLETE", .value, "a JavaScript callback"),
        ignored(
            "serverURL", "PARSE_SERVER_URL", .value, "cloud code calls the services directly; links use publicServerURL",
            harmless: { $0.stringValue?.hasPrefix("http://") == true || $0.stringValue?.hasPrefix("https://") == true }),
        supported("sessionLength", ["PARSE_SERVER_SESSION_LENGTH"], .value, .parseServer, "seconds, default one year"),
        ignored("silent", "SILENT", .bool, "use logLevel", harmless: Harmless.isFalse),
        ignored(
            "startLiveQueryServer", "PARSE_SERVER_START_LIVE_QUERY_SERVER", .bool,
            "LiveQuery always runs on the API port when liveQuery names classes (a separate LiveQuery server is not started)",
            harmless: Harmless.isTrue),
        supported(
            "trustProxy", ["PARSE_SERVER_TRUST_PROXY"], .value, .parseServer,
            "Express's `trust proxy`: `true`, a number of hops, or addresses and CIDR ranges (also `loopback`, `linklocal`, "
                + "`uniquelocal`); the client address (rate limits, `masterKeyIps`, `req.ip`, access log) comes from `X-Forwarded-For` "
                + "and `https` from `X-Forwarded-Proto` of trusted hops; default: the TCP peer"),
        supported(
            "userSensitiveFields", ["PARSE_SERVER_USER_SENSITIVE_FIELDS"], .value, .parseServer,
            "deprecated (as in Parse Server): JSON array or comma list of `_User` fields, added to protectedFields' `_User` `*`"),
        supported("verbose", ["VERBOSE"], .bool, .parseServer, "`true`: logLevel `debug` unless logLevel is set"),
        ignored(
            "verifyServerUrl", "PARSE_SERVER_VERIFY_SERVER_URL", .bool,
            "Parsley never calls its own serverURL, so there is nothing to verify at start", harmless: Harmless.isFalse),
        supported("verifyUserEmails", ["PARSE_SERVER_VERIFY_USER_EMAILS"], .bool),
        supported("webhookKey", ["PARSE_SERVER_WEBHOOK_KEY"], .value, .parseServer, "sent as `X-Parse-Webhook-Key` with every webhook call"),

        // Parsley's own settings.
        supported("batchLimit", ["PARSE_SERVER_BATCH_LIMIT"], .value, .parsley, "most requests in one /batch, default 1000"),
        supported("dataDir", ["PARSLEY_DATA_DIR"], .value, .parsley, "default `./parsley-data`"),
        supported(
            "databasePoolSize", ["PARSLEY_DATABASE_POOL_SIZE"], .value, .parsley,
            "PostgreSQL connections per process at most (opened as needed, closed after 60 s unused), default 20"),
        supported("statementTimeoutMs", ["PARSLEY_STATEMENT_TIMEOUT_MS"], .value, .parsley, "default 15000"),
        supported("postgresPreparedStatements", ["PARSLEY_POSTGRES_PREPARED_STATEMENTS"], .bool, .parsley, "default `true`"),
        supported("postgresPointReadConcurrency", ["PARSLEY_POSTGRES_POINT_READ_CONCURRENCY"], .value, .parsley, "default 2; 0 never coalesces"),
        supported("filesDir", ["PARSLEY_FILES_DIR"], .value, .parsley, "default `<data>/files`"),
        supported(
            "filesFallbackAdapter", ["PARSLEY_FILES_FALLBACK_ADAPTER"], .value, .parsley,
            "`fs` or `database`: while files move to another adapter (`parsley files migrate`), reads of files not yet copied come from this one"),
        supported(
            "estimatedCountThreshold", ["PARSLEY_ESTIMATED_COUNT_THRESHOLD"], .value, .parsley,
            "a master-key count of a whole class answers the database's estimate from this many rows; default 100000, 0 always counts"),
        supported("changeEvents", ["PARSLEY_CHANGE_EVENTS"], .bool, .parsley, "committed writes as change events, default `false`"),
        supported("dashboard", ["PARSLEY_DASHBOARD"], .bool, .parsley, "the embedded dashboard at `/dashboard`, default `true`"),
        supported(
            "dashboardAdminRole", ["PARSLEY_DASHBOARD_ADMIN_ROLE"], .value, .parsley,
            "members of this role may sign in to the dashboard with their password; default none"),
        supported("uploadStallTimeout", ["PARSLEY_UPLOAD_STALL_TIMEOUT"], .value, .parsley, "seconds, default 30"),
        supported("logFormat", ["PARSLEY_LOG_FORMAT"], .value, .parsley, "`text` (default), `logfmt` or `json`"),
        supported("logBuffer", ["PARSLEY_LOG_BUFFER"], .value, .parsley, "recent log lines kept for `/scriptlog`, default 1000"),
        supported("metricsPort", ["PARSLEY_METRICS_PORT"], .value, .parsley, "default off"),
        supported("metricsHost", ["PARSLEY_METRICS_HOST"], .value, .parsley, "default `127.0.0.1`"),
        supported("shutdownTimeout", ["PARSLEY_SHUTDOWN_TIMEOUT"], .value, .parsley, "seconds, default 30"),
        supported("webhookTimeout", ["PARSLEY_WEBHOOK_TIMEOUT_MS"], .value, .parsley, "milliseconds a webhook may take, default 10000"),
        supported(
            "schedulerInterval", ["PARSLEY_SCHEDULER_INTERVAL_MS"], .value, .parsley,
            "milliseconds between looks for due scheduled jobs, default 10000"),
        supported("smtpHost", ["PARSLEY_SMTP_HOST"], .value, .parsley, "default none: mails are logged"),
        supported("smtpPort", ["PARSLEY_SMTP_PORT"], .value, .parsley, "default 25"),
        supported("smtpUsername", ["PARSLEY_SMTP_USERNAME"], .value, .parsley),
        supported("smtpPassword", ["PARSLEY_SMTP_PASSWORD"], .value, .parsley),
        supported("smtpAuth", ["PARSLEY_SMTP_AUTH"], .value, .parsley, "`automatic` (default), `plain` or `login`"),
        supported("smtpFrom", ["PARSLEY_SMTP_FROM"], .value, .parsley, "required with smtpHost"),
        supported("smtpHeloName", ["PARSLEY_SMTP_HELO_NAME"], .value, .parsley, "default `localhost`"),
        supported(
            "smtpSecurity", ["PARSLEY_SMTP_SECURITY"], .value, .parsley,
            "`starttls` (default: upgrade when offered; credentials are never sent unencrypted), `tls` (implicit TLS, port 465) or `none`"),
        supported("smtpCAFile", ["PARSLEY_SMTP_CA_FILE"], .value, .parsley, "PEM certificates trusted besides the system's roots"),
        supported(
            "emailTemplates", ["PARSLEY_EMAIL_TEMPLATES"], .value, .parsley,
            "a folder of `verification_email` and `password_reset_email` templates (`.subject.txt`, `.txt`, `.html`)"),
    ]

    static let byKey: [String: OptionSpec] = {
        var map: [String: OptionSpec] = [:]
        for spec in all {
            precondition(map[spec.key] == nil, "option \(spec.key) twice")
            map[spec.key] = spec
            for alias in spec.aliases { map[alias] = spec }
        }
        return map
    }()

    static let byFlag: [String: OptionSpec] = {
        var map: [String: OptionSpec] = [:]
        for spec in all {
            for flag in spec.flags {
                precondition(map[flag] == nil, "flag \(flag) twice")
                map[flag] = spec
            }
        }
        return map
    }()

    static func spec(_ key: String) -> OptionSpec {
        guard let spec = byKey[key] else { preconditionFailure("no option \(key) in OptionTable") }
        return spec
    }

    /// The settings part of `parsley serve --help`.
    static var helpText: String {
        var lines = [
            "Every setting is a flag, an environment variable or a key of the --config file (flags win over the "
                + "environment, which wins over the file). Parse Server's names work (--appId, PARSE_SERVER_APPLICATION_ID, "
                + "\"appId\" in the file), and so do kebab-case flags (--app-id). A boolean flag alone means true. "
                + "docs/parse-server-options.md has every Parse Server option and whether Parsley supports, ignores or refuses it.",
            "",
        ]
        for spec in all where spec.status == .supported {
            lines.append("  \(spec.flags.joined(separator: ", "))  (\(spec.env.joined(separator: ", ")))")
        }
        return lines.joined(separator: "\n")
    }
}
