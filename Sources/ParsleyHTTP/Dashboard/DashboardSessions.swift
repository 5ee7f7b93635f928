import Crypto
import Foundation
import ParsleyCore
import ParsleyDomain
import ParsleyStorage
import Synchronization

/// The dashboard's sign-ins: a random session id in an HTTP-only, same-site cookie, and a CSRF token the page keeps in
/// memory and sends as `X-Parsley-Dashboard-CSRF` with every API call. The cookie alone authorizes nothing, so another
/// site cannot use a signed-in browser. A session ends after `idleTimeout` without use, or at sign-out.
///
/// Kept in memory, by a hash of the cookie's value; on a database several nodes share (`records`), also in the
/// database: a node that has not seen a session reads it there first (`prefetch`), and a sign-out on any node ends it
/// on all of them, so a load balancer needs no pinning.
final class DashboardSessions: Sendable {
    struct Session: Sendable {
        var csrfToken: String
        var readOnly: Bool
        /// The user who signed in (an admin role's member), nil for a master key.
        var username: String?
        var lastUsed: ContinuousClock.Instant
        /// When this node last wrote `lastUsed` to the database.
        var lastRecorded: ContinuousClock.Instant
    }

    static let cookieName = "parsley_dashboard"
    private let sessions = Mutex<[String: Session]>([:])
    let records: DashboardSessionRecords?
    /// Failed sign-ins per client address in the current minute.
    private let failures = Mutex<[String: (count: Int, since: ContinuousClock.Instant)]>([:])
    let idleTimeout: Duration

    init(idleTimeout: Duration, records: DashboardSessionRecords? = nil) {
        self.idleTimeout = idleTimeout
        self.records = records
        records?.onEnded { [weak self] key in self?.forget(key) }
    }

    /// Drops a session another node ended.
    func forget(_ key: String) { sessions.withLock { _ = $0.removeValue(forKey: key) } }

    var idleMilliseconds: Int64 { Int64(idleTimeout.components.seconds) * 1000 }

    /// The key a session is kept under: a SHA-256 of the cookie's value.
    static func key(_ id: String) -> String { SHA256.hash(data: Array(id.utf8)).map { String(format: "%02x", $0) }.joined() }

    /// A new session (saved for every node first, when they share the database); returns its id (the cookie's value)
    /// and the session.
    func create(readOnly: Bool, username: String?) async throws -> (String, Session) {
        let id = Self.random()
        let session = Session(csrfToken: Self.random(), readOnly: readOnly, username: username, lastUsed: .now, lastRecorded: .now)
        try await records?.save(
            Self.key(id),
            StoredDashboardSession(
                csrfToken: session.csrfToken, readOnly: readOnly, username: username, lastUsed: ContinuousClockEpoch.millisecondsSince1970()))
        sessions.withLock { all in
            let now = ContinuousClock.now
            all = all.filter { now - $0.value.lastUsed < idleTimeout }
            all[Self.key(id)] = session
        }
        return (id, session)
    }

    /// Reads a session this node has not seen from the database (another node signed it in), so that the synchronous
    /// checks below find it. Nothing to do without shared records or a cookie.
    func prefetch(cookie header: String?) async {
        guard let records, let id = header.flatMap(Self.cookieValue), !id.isEmpty else { return }
        let key = Self.key(id)
        // A session this node knows: the other nodes learn of its use at most once a minute (the idle timeout is
        // counted in minutes).
        let known = sessions.withLock { all -> (known: Bool, record: Bool) in
            guard var s = all[key] else { return (false, false) }
            guard ContinuousClock.now - s.lastRecorded > .seconds(60) else { return (true, false) }
            s.lastRecorded = .now
            all[key] = s
            return (true, true)
        }
        if known.record { try? await records.touch(key, lastUsed: ContinuousClockEpoch.millisecondsSince1970()) }
        guard !known.known else { return }
        guard let stored = try? await records.load(key) else { return }
        let idle = ContinuousClockEpoch.millisecondsSince1970() - stored.lastUsed
        guard idle < idleMilliseconds else { return }
        let session = Session(
            csrfToken: stored.csrfToken, readOnly: stored.readOnly, username: stored.username, lastUsed: .now - .milliseconds(idle),
            lastRecorded: .now)
        sessions.withLock { $0[key] = $0[key] ?? session }
    }

    /// The live session of a cookie value (touching it), nil when unknown or expired.
    func session(_ id: String) -> Session? {
        let key = Self.key(id)
        return sessions.withLock { all in
            guard var s = all[key] else { return nil }
            guard ContinuousClock.now - s.lastUsed < idleTimeout else {
                all[key] = nil
                return nil
            }
            s.lastUsed = .now
            all[key] = s
            return s
        }
    }

    /// The session a request's cookie and CSRF header prove, if both are right.
    func verified(cookie: String?, csrf: String?) -> Session? {
        guard let id = cookie.flatMap(Self.cookieValue), let csrf, let s = session(id) else { return nil }
        return Self.constantTimeEqual(s.csrfToken, csrf) ? s : nil
    }

    /// Signs out, on every node.
    func end(_ id: String) async {
        let key = Self.key(id)
        sessions.withLock { _ = $0.removeValue(forKey: key) }
        try? await records?.end(key, idleMilliseconds: idleMilliseconds)
    }

    /// Whether `address` may try to sign in now: at most 10 failures a minute, counted by every node together when
    /// they share the database (this node's own count when the database cannot answer).
    func mayTry(_ address: String) async -> Bool {
        if let records, let shared = try? await records.failedSignIns(address) { return shared < 10 }
        return failures.withLock { all in
            guard let f = all[address] else { return true }
            if ContinuousClock.now - f.since > .seconds(60) {
                all[address] = nil
                return true
            }
            return f.count < 10
        }
    }

    func failed(_ address: String) async {
        failures.withLock { all in
            if all.count > 10_000 { all.removeAll() }
            let f = all[address]
            all[address] = f.map { ($0.count + 1, $0.since) } ?? (1, .now)
        }
        _ = try? await records?.addFailedSignIn(address)
    }

    /// `parsley_dashboard=<id>` from a Cookie header.
    static func cookieValue(_ header: String) -> String? {
        for part in header.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces)
            if pair.hasPrefix(cookieName + "=") { return String(pair.dropFirst(cookieName.count + 1)) }
        }
        return nil
    }

    static func random() -> String {
        var rng = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &rng)) }.joined()
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool { ConstantTime.equal(a, b) }
}
