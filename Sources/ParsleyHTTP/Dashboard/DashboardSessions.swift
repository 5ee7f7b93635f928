import Crypto
import Foundation
import ParsleyCore
import Synchronization

/// The dashboard's sign-ins: a random session id in an HTTP-only, same-site cookie, and a CSRF token the page keeps in
/// memory and sends as `X-Parsley-Dashboard-CSRF` with every API call. The cookie alone authorizes nothing, so another
/// site cannot use a signed-in browser. Kept in memory per server process; a session ends after `idleTimeout` without
/// use, or at sign-out.
final class DashboardSessions: Sendable {
    struct Session: Sendable {
        var csrfToken: String
        var readOnly: Bool
        /// The user who signed in (an admin role's member), nil for a master key.
        var username: String?
        var lastUsed: ContinuousClock.Instant
    }

    static let cookieName = "parsley_dashboard"
    private let sessions = Mutex<[String: Session]>([:])
    /// Failed sign-ins per client address in the current minute.
    private let failures = Mutex<[String: (count: Int, since: ContinuousClock.Instant)]>([:])
    let idleTimeout: Duration

    init(idleTimeout: Duration) { self.idleTimeout = idleTimeout }

    /// A new session; returns its id (the cookie's value) and the session.
    func create(readOnly: Bool, username: String?) -> (String, Session) {
        let id = Self.random()
        let session = Session(csrfToken: Self.random(), readOnly: readOnly, username: username, lastUsed: .now)
        sessions.withLock { all in
            let now = ContinuousClock.now
            all = all.filter { now - $0.value.lastUsed < idleTimeout }
            all[id] = session
        }
        return (id, session)
    }

    /// The live session of a cookie value (touching it), nil when unknown or expired.
    func session(_ id: String) -> Session? {
        sessions.withLock { all in
            guard var s = all[id] else { return nil }
            guard ContinuousClock.now - s.lastUsed < idleTimeout else {
                all[id] = nil
                return nil
            }
            s.lastUsed = .now
            all[id] = s
            return s
        }
    }

    /// The session a request's cookie and CSRF header prove, if both are right.
    func verified(cookie: String?, csrf: String?) -> Session? {
        guard let id = cookie.flatMap(Self.cookieValue), let csrf, let s = session(id) else { return nil }
        return Self.constantTimeEqual(s.csrfToken, csrf) ? s : nil
    }

    func end(_ id: String) { sessions.withLock { _ = $0.removeValue(forKey: id) } }

    /// Whether `address` may try to sign in now (at most 10 failures a minute).
    func mayTry(_ address: String) -> Bool {
        failures.withLock { all in
            guard let f = all[address] else { return true }
            if ContinuousClock.now - f.since > .seconds(60) {
                all[address] = nil
                return true
            }
            return f.count < 10
        }
    }

    func failed(_ address: String) {
        failures.withLock { all in
            if all.count > 10_000 { all.removeAll() }
            let f = all[address]
            all[address] = f.map { ($0.count + 1, $0.since) } ?? (1, .now)
        }
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
