import NIOConcurrencyHelpers
public import ParsleyCore
public import ParsleyDomain

/// One entry of Parse Server's `rateLimit` option (`PARSE_SERVER_RATE_LIMIT`, a JSON array of these):
/// `{"requestPath":"/classes/*","requestTimeWindow":10000,"requestCount":100,"requestMethods":["POST"],
///   "errorResponseMessage":"Too many requests.","includeMasterKey":false,"zone":"ip"}`.
/// `requestPath` is relative to the mount; `*` matches anything (slashes too), `:name` one path segment.
public struct RateLimitRule: Sendable, Equatable {
    public enum Zone: String, Sendable { case ip, global, session, user }

    public var requestPath: String
    public var window: Duration
    public var count: Int
    public var methods: Set<String>?
    public var message: String
    public var includeMasterKey: Bool
    public var zone: Zone
    /// Also matches every path under `requestPath` (a trigger's `/classes/Post` covers `/classes/Post/<id>`, as
    /// Parse Server's `/classes/Post/:id?(.*)`).
    public var includesSubpaths = false

    public init(
        requestPath: String, window: Duration, count: Int, methods: Set<String>? = nil, message: String = "Too many requests.",
        includeMasterKey: Bool = false, zone: Zone = .ip
    ) {
        self.requestPath = requestPath.hasPrefix("/") ? requestPath : "/" + requestPath
        self.window = window
        self.count = count
        self.methods = methods
        self.message = message
        self.includeMasterKey = includeMasterKey
        self.zone = zone
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses Parse Server's JSON (an array, or one object); the error names what is wrong.
    public static func parse(_ json: JSONValue) throws -> [RateLimitRule] {
        let entries: [JSONValue]
        switch json {
        case .array(let a): entries = a
        case .object: entries = [json]
        default: throw Invalid(description: "rate limit must be a JSON array of objects")
        }
        return try entries.enumerated().map { i, entry in
            func fail(_ m: String) -> Invalid { Invalid(description: "rate limit entry \(i): \(m)") }
            guard case .object(let o) = entry else { throw fail("must be an object") }
            guard let path = o["requestPath"]?.stringValue, !path.isEmpty else { throw fail("requestPath must be a string") }
            guard let ms = o["requestTimeWindow"]?.integerValue, ms > 0 else {
                throw fail("requestTimeWindow must be a positive number of milliseconds")
            }
            guard let count = o["requestCount"]?.integerValue, count > 0 else { throw fail("requestCount must be a positive number") }
            var methods: Set<String>?
            switch o["requestMethods"] {
            case nil, .null?: methods = nil
            case .string(let m)?: methods = [m.uppercased()]
            case .array(let a)?:
                let names = a.compactMap { $0.stringValue?.uppercased() }
                guard names.count == a.count else { throw fail("requestMethods must be strings") }
                methods = Set(names)
            default: throw fail("requestMethods must be a string or an array of strings")
            }
            let zoneText = o["zone"]?.stringValue ?? "ip"
            guard let zone = Zone(rawValue: zoneText) else { throw fail("zone must be ip, global, session or user") }
            return RateLimitRule(
                requestPath: path, window: .milliseconds(ms), count: count, methods: methods,
                message: o["errorResponseMessage"]?.stringValue ?? "Too many requests.",
                includeMasterKey: o["includeMasterKey"]?.boolValue ?? false, zone: zone)
        }
    }

    /// Express-style match of `/classes/GameScore` against `/classes/*` or `/functions/:name`.
    public func matches(_ path: String) -> Bool {
        if includesSubpaths, path.hasPrefix(requestPath + "/") { return true }
        return Self.glob(Array(requestPath.utf8)[...], Array(path.utf8)[...])
            || (path.count > 1 && path.hasSuffix("/") && Self.glob(Array(requestPath.utf8)[...], Array(path.dropLast().utf8)[...]))
    }

    static func glob(_ p: ArraySlice<UInt8>, _ s: ArraySlice<UInt8>) -> Bool {
        guard let c = p.first else { return s.isEmpty }
        if c == UInt8(ascii: "*") {
            var rest = s
            while true {
                if glob(p.dropFirst(), rest) { return true }
                if rest.isEmpty { return false }
                rest = rest.dropFirst()
            }
        }
        if c == UInt8(ascii: ":") {
            // `:name`: the parameter's name runs to the next `/`; it matches one non-empty segment.
            let afterName = p.drop(while: { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "*") })
            let segmentEnd = s.firstIndex(of: UInt8(ascii: "/")) ?? s.endIndex
            guard segmentEnd > s.startIndex else { return false }
            return glob(afterName, s[segmentEnd...])
        }
        guard let d = s.first, d == c else { return false }
        return glob(p.dropFirst(), s.dropFirst())
    }
}

/// Who a request counts against: the master key (exempt unless a rule includes it), the client's address and its
/// session token. A batch sub-request counts against its batch's caller.
public struct RateLimitCaller: Sendable {
    public var isMaster: Bool
    public var ip: String?
    public var sessionToken: String?

    public init(isMaster: Bool, ip: String?, sessionToken: String?) {
        self.isMaster = isMaster
        self.ip = ip
        self.sessionToken = sessionToken
    }

    /// The caller of an authenticated request (a batch's, for its sub-requests), from the address it came from.
    public init(_ auth: Auth, request: RequestInfo = .current) {
        self.init(isMaster: auth.isMaster, ip: request.ip, sessionToken: auth.sessionToken)
    }
}

/// A rate limit rule refused the request: 429 with code 100 and the rule's message (`errorResponseMessage`).
public struct RateLimitExceeded: Error, Sendable {
    public let message: String
}

/// Fixed-window counters per rule and client (address, session token, user or everyone). Every request is checked
/// with the method it really has (after the JS SDK's `_method`) and every batch sub-request as if it came alone, so
/// a rule counts the same operation the same way on every path (`ParseTransport`, `BatchRouter`).
///
/// On a database several server processes share (PostgreSQL), the counters live in it (`SharedCounters`), so a
/// limit holds across nodes behind a load balancer without pinning (Parse Server needs Redis for this); on SQLite
/// they are kept in memory. If the database cannot count, the request is counted in memory instead of failing.
///
/// A node does not write the database for every request: it takes permits in blocks (`permitBlock`: 1% of the
/// limit, 1 to 1,000) by adding the block to the shared count, and spends them locally until the block or the
/// window runs out. The shared count never passes the limit with admitted requests, so the limit holds across
/// nodes exactly; a node may hold at most a block it will not use, so near the limit a client can be refused up to
/// one block per node early. Once the shared count has reached the limit, the node refuses locally until that
/// window ends.
public final class RateLimiter: Sendable {
    /// Adds to the count under a key in a window of some milliseconds, answering the window's count after the addition
    /// and when the window started (milliseconds since 1970).
    public struct SharedCounters: Sendable {
        public var add: @Sendable (_ key: String, _ amount: Int, _ windowMilliseconds: Int64) async throws -> (count: Int, windowStart: Int64)
        public var prune: @Sendable (_ olderThanMilliseconds: Int64) async throws -> Void
        public init(
            add: @escaping @Sendable (String, Int, Int64) async throws -> (count: Int, windowStart: Int64),
            prune: @escaping @Sendable (Int64) async throws -> Void
        ) {
            self.add = add
            self.prune = prune
        }
    }

    /// Permits of a shared window this node holds: `remaining` to spend until `windowEnd` (milliseconds since 1970);
    /// `exhausted` when the shared count has reached the limit in that window.
    private struct Lease {
        var remaining: Int
        var windowEnd: Int64
        var exhausted: Bool
    }

    /// How many permits a node takes at once for a limit of `count`.
    public static func permitBlock(_ count: Int) -> Int { min(1000, max(1, count / 100)) }

    let rules: [RateLimitRule]
    let shared: SharedCounters?
    /// The user id of a session token (the `user` zone); nil for an unknown token.
    let userOfSession: @Sendable (String) async -> String?
    private struct Window {
        var start: ContinuousClock.Instant
        var count: Int
    }
    private let windows = NIOLockedValueBox<[String: Window]>([:])
    private let leases = NIOLockedValueBox<[String: Lease]>([:])
    private let sweep = NIOLockedValueBox<ContinuousClock.Instant>(.now)

    init(rules: [RateLimitRule], shared: SharedCounters? = nil, userOfSession: @escaping @Sendable (String) async -> String?) {
        self.rules = rules
        self.shared = shared
        self.userOfSession = userOfSession
    }

    /// Counts the request against every rule it matches; throws `RateLimitExceeded` for the first one it exceeds.
    /// `path` is below the mount; `method` the effective one (`HEAD` counts as `GET`).
    func check(method: String, path segments: [String], caller: RateLimitCaller) async throws(RateLimitExceeded) {
        let path = "/" + segments.joined(separator: "/")
        let method = method == "HEAD" ? "GET" : method
        let ip = caller.ip ?? "unknown"
        // `/login` ignores any session token it is sent (ParseTransport), so it counts by address; `/challenge` (MFA and
        // provider challenges) is counted the same way.
        let token = segments == ["login"] || segments == ["challenge"] ? nil : caller.sessionToken
        let now = ContinuousClock.now
        await pruneIfDue(now)
        for (index, rule) in rules.enumerated() {
            guard rule.matches(path) else { continue }
            if let methods = rule.methods, !methods.contains(method) { continue }
            if caller.isMaster, !rule.includeMasterKey { continue }
            let who: String
            switch rule.zone {
            case .global: who = "*"
            case .ip: who = "ip:" + ip
            case .session: who = token.map { "session:" + $0 } ?? "ip:" + ip
            case .user:
                if let token, let user = await userOfSession(token) {
                    who = "user:" + user
                } else {
                    who = "ip:" + ip
                }
            }
            let key = "\(index)|\(rule.requestPath)|\(who)"
            if let shared, let admitted = await sharedPermit(shared, key: key, rule: rule) {
                if !admitted { throw RateLimitExceeded(message: rule.message) }
                continue
            }
            let allowed = windows.withLockedValue { w -> Bool in
                var entry = w[key] ?? Window(start: now, count: 0)
                if now - entry.start >= rule.window { entry = Window(start: now, count: 0) }
                entry.count += 1
                w[key] = entry
                return entry.count <= rule.count
            }
            if !allowed { throw RateLimitExceeded(message: rule.message) }
        }
    }

    /// Whether the shared count admits one more request under `key`: from this node's block of permits when it holds
    /// one, else by taking a new block. Nil when the database cannot answer (then the request is counted in memory).
    private func sharedPermit(_ shared: SharedCounters, key: String, rule: RateLimitRule) async -> Bool? {
        let now = ContinuousClockEpoch.millisecondsSince1970()
        let local = leases.withLockedValue { all -> Bool? in
            guard var lease = all[key], now < lease.windowEnd else { return nil }
            if lease.exhausted { return false }
            guard lease.remaining > 0 else { return nil }
            lease.remaining -= 1
            all[key] = lease
            return true
        }
        if let local { return local }
        let window = Int64(rule.window.components.seconds) * 1000 + rule.window.components.attoseconds / 1_000_000_000_000_000
        let block = Self.permitBlock(rule.count)
        guard let (count, start) = try? await shared.add(key, block, window) else { return nil }
        // Of the block just added, the permits still under the limit: this request takes one, the node keeps the rest.
        let granted = min(block, max(0, rule.count - (count - block)))
        leases.withLockedValue { all in
            var lease =
                all[key].flatMap { $0.windowEnd == start + window ? $0 : nil } ?? Lease(remaining: 0, windowEnd: start + window, exhausted: false)
            lease.remaining += max(0, granted - 1)
            lease.exhausted = granted == 0 || (lease.remaining == 0 && count >= rule.count)
            all[key] = lease
        }
        return granted > 0
    }

    /// Drops expired windows once a minute so the table does not grow with every client ever seen.
    private func pruneIfDue(_ now: ContinuousClock.Instant) async {
        let due = sweep.withLockedValue { last -> Bool in
            guard now - last > .seconds(60) else { return false }
            last = now
            return true
        }
        guard due else { return }
        let longest = rules.map(\.window).max() ?? .seconds(60)
        windows.withLockedValue { w in w = w.filter { now - $0.value.start < longest } }
        let wallNow = ContinuousClockEpoch.millisecondsSince1970()
        leases.withLockedValue { all in all = all.filter { $0.value.windowEnd > wallNow } }
        if let shared {
            // Once a minute, by the request that found it due.
            try? await shared.prune(Int64(longest.components.seconds) * 1000 + 1000)
        }
    }
}
