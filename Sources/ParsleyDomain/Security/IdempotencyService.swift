import ParsleyCore
import ParsleyStorage

/// Parse Server's `idempotencyOptions`: a create or update (POST/PUT) on a configured path carries an
/// `X-Parse-Request-Id` (ParseSwift and the JS SDK send one and retry with it); the first request with an id is
/// remembered in `_Idempotency {reqId, expire}` for `ttl` seconds, and a retry with the same id answers 400/159
/// `Duplicate request` instead of being applied twice. A unique index on `reqId` decides between concurrent
/// retries, also across server processes on one PostgreSQL database.
public struct IdempotencyService: Sendable {
    public static let className = "_Idempotency"
    let settings: IdempotencyOptions
    let paths: [Pattern]
    let objects: ObjectService
    let queries: QueryService

    struct Pattern: @unchecked Sendable {  // an immutable compiled Regex, only read
        let regex: Regex<AnyRegexOutput>
    }

    /// Nil when idempotency is off. - Throws: 1 for a path that is not a regular expression (checked at start).
    public init?(options: ParseServerOptions, objects: ObjectService, queries: QueryService) throws {
        guard let settings = options.security.idempotency else { return nil }
        self.settings = settings
        // As Parse Server: each path matches from the start of the request path (below the mount, no leading '/').
        self.paths = try settings.paths.map { Pattern(regex: try Regex($0.hasPrefix("^") ? $0 : "^" + $0)) }
        self.objects = objects
        self.queries = queries
    }

    /// Creates `_Idempotency` with its unique index on `reqId`.
    public func bootstrap() async throws {
        _ = try await objects.schemas.ensure(Self.className, fields: ["reqId": .string, "expire": .date], auth: .master, allowClassCreation: true)
        try await objects.store.database.write { [store = objects.store] db in
            try await store.writer(db).createIndex(Self.className, name: "reqId", fields: [("reqId", false)], unique: true)
        }
    }

    /// Whether a request is subject to idempotency: POST or PUT on a configured path, with a request id.
    public func applies(method: String, path: [String], requestId: String?) -> Bool {
        guard let requestId, !requestId.isEmpty, method == "POST" || method == "PUT" else { return false }
        let joined = path.joined(separator: "/")
        return paths.contains { joined.prefixMatch(of: $0.regex) != nil }
    }

    /// Remembers `requestId`; throws 159 when it was seen within the last `ttl` seconds.
    public func claim(_ requestId: String) async throws {
        let now = ParseDate.now
        let expire = ParseDate(milliseconds: now.milliseconds + Int64(settings.ttl) * 1000)
        // An expired record of the same id no longer counts.
        var find = FindOptions()
        find.whereValue = ["reqId": .string(requestId), "expire": ["$lt": ["__type": "Date", "iso": .string(now.iso)]]]
        for old in try await queries.find(Self.className, find, auth: .master).results {
            if let id = old["objectId"]?.stringValue { try? await objects.delete(Self.className, objectId: id, auth: .master) }
        }
        do {
            _ = try await objects.create(
                Self.className, ["reqId": .string(requestId), "expire": ["__type": "Date", "iso": .string(expire.iso)]], auth: .master)
        } catch StoreError.uniqueViolation {
            throw ParseError(.duplicateRequest, "Duplicate request")
        }
    }
}
