import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Parse Server's session options through the real server: `expireInactiveSessions`, `extendSessionOnUse`,
/// `revokeSessionOnPasswordReset`.
@Suite("Options: expireInactiveSessions, extendSessionOnUse, revokeSessionOnPasswordReset")
struct SessionOptionsTests {
    static func expiresAt(_ p: ParseClient, _ token: String) async throws -> ParseDate? {
        let me = try await p.asUser(token, .get, "/sessions/me")
        return me["expiresAt"]?["iso"]?.stringValue.flatMap(ParseDate.init(iso:))
    }

    @Test("expireInactiveSessions false: sessions have no expiresAt and outlive sessionLength", arguments: Backend.all)
    func neverExpire(_ backend: Backend) async throws {
        let options = EmailTests.options(MailBox()) {
            $0.accounts.sessionLength = 1
            $0.accounts.expireInactiveSessions = false
        }
        try await TestServer.with(backend: backend, options) { p in
            let (_, token) = try await p.signUp("ann")
            let created = try await p.asUser(token, .post, "/sessions", [:])
            #expect(created.status == 201)
            #expect(created["expiresAt"] == nil, "\(created.json)")
            #expect(try await Self.expiresAt(p, token) == nil)
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try await p.asUser(token, .get, "/users/me").status == 200)
        }
        // The default: expired after sessionLength.
        let expiring = EmailTests.options(MailBox()) { $0.accounts.sessionLength = 1 }
        try await TestServer.with(backend: backend, expiring) { p in
            let (_, token) = try await p.signUp("ann")
            #expect(try await Self.expiresAt(p, token) != nil)
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try await p.asUser(token, .get, "/users/me").code == 209)
        }
    }

    @Test("extendSessionOnUse: a session used past half its length lasts a full sessionLength from then", arguments: Backend.all)
    func extendOnUse(_ backend: Backend) async throws {
        let options = EmailTests.options(MailBox()) {
            $0.accounts.sessionLength = 10
            $0.accounts.extendSessionOnUse = true
        }
        // (Lengths of seconds with wide margins: on a busy two-core machine a request can take a second or more.)
        try await TestServer.with(backend: backend, options) { p in
            let (_, token) = try await p.signUp("ann")
            let first = try #require(try await Self.expiresAt(p, token))
            // Used before half the length: not extended.
            #expect(try await Self.expiresAt(p, token) == first)
            try await Task.sleep(for: .milliseconds(5600))
            // Past half: this use extends it.
            #expect(try await p.asUser(token, .get, "/users/me").status == 200)
            let extended = try #require(try await Self.expiresAt(p, token))
            #expect(extended.milliseconds >= first.milliseconds + 4000, "\(first.iso) -> \(extended.iso)")
            // Past the first expiry, still valid.
            try await Task.sleep(for: .milliseconds(max(0, first.milliseconds - ParseDate.now.milliseconds) + 500))
            #expect(ParseDate.now.milliseconds > first.milliseconds)
            #expect(try await p.asUser(token, .get, "/users/me").status == 200)
        }
        // Without the option the same use does not extend it.
        let plain = EmailTests.options(MailBox()) { $0.accounts.sessionLength = 10 }
        try await TestServer.with(backend: backend, plain) { p in
            let (_, token) = try await p.signUp("ann")
            let first = try #require(try await Self.expiresAt(p, token))
            try await Task.sleep(for: .milliseconds(5600))
            #expect(try await Self.expiresAt(p, token) == first)
        }
    }

    @Test("revokeSessionOnPasswordReset false: a password reset and a password change keep the user's sessions", arguments: Backend.all)
    func keepSessionsOnReset(_ backend: Backend) async throws {
        let mail = MailBox()
        let keeping = EmailTests.options(mail) { $0.accounts.revokeSessionOnPasswordReset = false }
        try await TestServer.with(backend: backend, keeping) { p in
            let (id, session) = try await p.signUp("carol", "old-password", extra: ["email": "carol@example.com"])
            let other = try await p.logIn("carol", "old-password")
            let otherToken = try #require(other["sessionToken"]?.stringValue)
            #expect(try await p.request(.post, "/requestPasswordReset", ["email": "carol@example.com"], master: false).status == 200)
            let token = try #require(linkParameter(try await mail.link(0), "token"))
            let done = try await p.postForm(
                "/apps/test-app/request_password_reset", [("new_password", "new-password"), ("token", token), ("username", "carol")])
            #expect(done.status == 200)
            #expect(try await p.logIn("carol", "new-password").status == 200)
            #expect(try await p.asUser(session, .get, "/users/me").status == 200)
            // A change through PUT /users keeps the other sessions too.
            #expect(try await p.asUser(session, .put, "/users/\(id)", ["password": "third-password"]).status == 200)
            #expect(try await p.asUser(otherToken, .get, "/users/me").status == 200)
        }
        // The default revokes them.
        try await TestServer.with(backend: backend, EmailTests.options(MailBox())) { p in
            let (id, session) = try await p.signUp("carol", "old-password")
            let other = try #require(try await p.logIn("carol", "old-password")["sessionToken"]?.stringValue)
            #expect(try await p.asUser(session, .put, "/users/\(id)", ["password": "third-password"]).status == 200)
            #expect(try await p.asUser(other, .get, "/users/me").code == 209)
            #expect(try await p.asUser(session, .get, "/users/me").status == 200)
        }
    }
}
