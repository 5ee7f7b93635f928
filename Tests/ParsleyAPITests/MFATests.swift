import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyIdentityFakes
import Synchronization
import Testing

/// Multi-factor log-in (`auth.mfa`, Parse Server's mfa adapter) through the real server: TOTP enrolment with recovery
/// codes, `/login` needing the code, codes and recovery codes working once (also when log-ins race), SMS codes sent
/// by a cloud function, what a user reads back of its own `authData.mfa`, and `/challenge`.
@Suite("MFA: TOTP, recovery codes, SMS, /challenge")
struct MFATests {
    /// A base32 secret of 32 characters (20 bytes), as authenticator apps make them.
    static let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
    static let totp = TOTP()

    /// The code for the time step `offset` steps from now.
    static func code(_ offset: Int64 = 0, secret: String = secret) -> String {
        totp.code(secret: Base32.decode(secret) ?? [], counter: totp.counter(at: .now) + offset)
    }

    static func with(
        _ backend: Backend, mfa: JSONValue = ["enabled": true, "options": ["TOTP"]], configure: (inout ParseServerOptions) -> Void = { _ in },
        cloud: CloudCode = CloudCode(), _ body: @escaping @Sendable (ParseClient) async throws -> Void
    ) async throws {
        var options = TestServer.options { $0.accounts.auth = ["mfa": mfa] }
        configure(&options)
        try await TestServer.with(backend: backend, options, cloud: cloud, body)
    }

    /// Signs up `name` and enrols TOTP; answers the user and its two recovery codes.
    static func enrolled(_ p: ParseClient, _ name: String) async throws -> (id: String, token: String, recovery: [String]) {
        let user = try await p.signUp(name)
        let enrol = try await p.asUser(
            user.token, .put, "/users/\(user.id)", ["authData": ["mfa": ["secret": .string(secret), "token": .string(code())]]])
        guard enrol.status == 200, let codes = enrol["authDataResponse"]?["mfa"]?["recovery"]?.stringValue else {
            throw Failure("enrolment failed: \(enrol.status) \(enrol.json)")
        }
        let recovery = codes.split(separator: ", ").map(String.init)
        // The tests index the two codes: fewer is a failure, not a crash.
        guard recovery.count >= 2 else { throw Failure("enrolment answered \(recovery.count) recovery code(s): \(enrol.json)") }
        return (user.id, user.token, recovery)
    }

    static func logIn(_ p: ParseClient, _ name: String, mfa: JSONValue?) async throws -> Reply {
        var body: [String: JSONValue] = ["username": .string(name), "password": "secret-pw"]
        if let mfa { body["authData"] = ["mfa": mfa] }
        return try await p.request(.post, "/login", .object(body), master: false)
    }

    @Test("TOTP: enrol answers two recovery codes; /login then needs the code (-1 without, 141 wrong); a code works once", arguments: Backend.all)
    func totpLifecycle(_ backend: Backend) async throws {
        try await Self.with(backend) { p in
            let alice = try await Self.enrolled(p, "alice")
            #expect(alice.recovery.count == 2 && alice.recovery.allSatisfy { $0.count == 30 })

            let missing = try await Self.logIn(p, "alice", mfa: nil)
            #expect(missing.status == 400 && missing.code == -1)
            #expect(missing["error"]?.stringValue == "Missing additional authData mfa")
            #expect(missing["sessionToken"] == nil)
            let wrong = try await Self.logIn(p, "alice", mfa: ["token": "000000"])
            #expect(wrong.code == 141 && wrong["error"]?.stringValue == "Invalid MFA token")
            let notText = try await Self.logIn(p, "alice", mfa: ["token": 123456])
            #expect(notText.code == 141)
            // A wrong password is refused first, as without MFA (no hint that the account has MFA).
            let badPassword = try await p.request(
                .post, "/login", ["username": "alice", "password": "nope", "authData": ["mfa": ["token": .string(Self.code(1))]]], master: false)
            #expect(badPassword.code == 101)

            let next = Self.code(1)
            let ok = try await Self.logIn(p, "alice", mfa: ["token": .string(next)])
            #expect(ok.status == 200, "\(ok.json)")
            #expect(ok["sessionToken"]?.stringValue?.isEmpty == false)
            // The user reads the status only, never the secret or the recovery codes.
            #expect(ok["authData"]?["mfa"] == ["status": "enabled"])
            // The same code again, or an older one: refused (each time step works once).
            #expect(try await Self.logIn(p, "alice", mfa: ["token": .string(next)]).code == 141)
            #expect(try await Self.logIn(p, "alice", mfa: ["token": .string(Self.code(0))]).code == 141)

            // Without MFA, a user logs in as before; a user with MFA cannot skip it by sending other authData.
            _ = try await p.signUp("bob")
            #expect(try await Self.logIn(p, "bob", mfa: nil).status == 200)
            #expect(try await Self.logIn(p, "alice", mfa: .null).code == -1)
        }
    }

    @Test("Recovery codes: each works once, also when two log-ins race with the same code", arguments: Backend.all)
    func recoveryCodes(_ backend: Backend) async throws {
        try await Self.with(backend) { p in
            let alice = try await Self.enrolled(p, "alice")
            let first = alice.recovery[0]
            // Eight log-ins at once with the same recovery code: exactly one gets a session.
            let outcomes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { try await Self.logIn(p, "alice", mfa: ["token": .string(first)]).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == 200 }.count == 1, "\(outcomes)")
            #expect(try await Self.logIn(p, "alice", mfa: ["token": .string(first)]).code == 141)
            #expect(try await Self.logIn(p, "alice", mfa: ["token": .string(alice.recovery[1])]).status == 200)
            #expect(try await Self.logIn(p, "alice", mfa: ["token": .string(alice.recovery[1])]).code == 141)
            // The master key sees what is left: no recovery code.
            let stored = try await p.request(.get, "/users/\(alice.id)")
            #expect(stored["authData"]?["mfa"]?["recovery"] == .array([]))
            #expect(stored["authData"]?["mfa"]?["secret"] == .string(Self.secret))
        }
    }

    @Test("The secret never reaches the user: /users/me, get, find, include and cloud code's request.user read the status", arguments: Backend.all)
    func secretStaysServerSide(_ backend: Backend) async throws {
        var cloud = CloudCode()
        cloud.define("myAuthData") { req in req.user?["authData"] ?? .null }
        try await Self.with(backend, cloud: cloud) { p in
            let alice = try await Self.enrolled(p, "alice")
            let status: JSONValue = ["status": "enabled"]
            #expect(try await p.asUser(alice.token, .get, "/users/me")["authData"]?["mfa"] == status)
            #expect(try await p.asUser(alice.token, .get, "/users/\(alice.id)")["authData"]?["mfa"] == status)
            #expect(try await p.asUser(alice.token, .get, "/classes/_User/\(alice.id)")["authData"]?["mfa"] == status)
            let found = try await p.asUser(alice.token, .get, "/users?where=%7B%22objectId%22%3A%22\(alice.id)%22%7D")
            #expect(found.results.first?["authData"]?["mfa"] == status)
            let note = try await p.create("Note", ["owner": ["__type": "Pointer", "className": "_User", "objectId": .string(alice.id)]])
            #expect(note.status == 201)
            let notes = try await p.asUser(alice.token, .get, "/classes/Note?include=owner")
            #expect(notes.results.first?["owner"]?["authData"]?["mfa"] == status, "\(notes.json)")
            #expect(try await p.asUser(alice.token, .post, "/functions/myAuthData")["result"]?["mfa"] == status)
            // A body that tries to plant a secret is checked as an enrolment (141), not stored.
            let planted = try await p.asUser(
                alice.token, .put, "/users/\(alice.id)", ["authData": ["mfa": ["secret": "AAAAAAAAAAAAAAAAAAAAAAAA", "recovery": ["x"]]]])
            #expect(planted.code == 141)
            let body = String(describing: try await p.asUser(alice.token, .get, "/users/me").json)
            #expect(!body.contains(Self.secret) && !body.contains(alice.recovery[0]))
        }
    }

    @Test("Enrolment and changes: a short secret or a wrong code is 141; a new secret needs a code of the old one", arguments: Backend.all)
    func enrolmentRules(_ backend: Backend) async throws {
        try await Self.with(backend) { p in
            let bob = try await p.signUp("bob")
            func enrol(_ data: JSONValue) async throws -> Reply {
                try await p.asUser(bob.token, .put, "/users/\(bob.id)", ["authData": ["mfa": data]])
            }
            let short = try await enrol(["secret": "JBSWY3DPEHPK3PXP", "token": .string(Self.code(0, secret: "JBSWY3DPEHPK3PXP"))])
            #expect(short.code == 141 && short["error"]?.stringValue == "Invalid MFA data")
            #expect(try await enrol(["secret": .string(Self.secret), "token": "000000"]).code == 141)
            #expect(try await enrol(["secret": "not base32 at all, 1890!!", "token": "000000"]).code == 141)
            #expect(try await enrol(["secret": .string(Self.secret)]).code == 141)
            // Nothing was stored: bob still logs in without a code.
            #expect(try await Self.logIn(p, "bob", mfa: nil).status == 200)

            let alice = try await Self.enrolled(p, "alice")
            let other = "KRSXG5CTMVRXEZLUKN2XAZLSKNSWG4TFOQ"
            let noOld = try await p.asUser(
                alice.token, .put, "/users/\(alice.id)",
                ["authData": ["mfa": ["secret": .string(other), "token": .string(Self.code(0, secret: other))]]])
            #expect(noOld.code == 141)
            let changed = try await p.asUser(
                alice.token, .put, "/users/\(alice.id)",
                ["authData": ["mfa": ["secret": .string(other), "token": .string(Self.code(0, secret: other)), "old": .string(alice.recovery[0])]]])
            #expect(changed.status == 200, "\(changed.json)")
            #expect(changed["authDataResponse"]?["mfa"]?["recovery"]?.stringValue?.count == 62)
            #expect(try await Self.logIn(p, "alice", mfa: ["token": .string(Self.code(1, secret: other))]).status == 200)
            // Another user cannot change alice's factor; the master key can remove it.
            #expect(try await p.asUser(bob.token, .put, "/users/\(alice.id)", ["authData": ["mfa": .null]]).code == 206)
            #expect(try await p.request(.put, "/users/\(alice.id)", ["authData": ["mfa": .null]]).status == 200)
            #expect(try await Self.logIn(p, "alice", mfa: nil).status == 200)
        }
    }

    @Test("Sign-up with a second factor; an authData log-in of a user with MFA needs the code too; off: 252", arguments: Backend.all)
    func signUpAndAnonymous(_ backend: Backend) async throws {
        try await Self.with(backend) { p in
            let signUp = try await p.request(
                .post, "/users",
                [
                    "username": "carol", "password": "secret-pw",
                    "authData": ["mfa": ["secret": .string(Self.secret), "token": .string(Self.code())]],
                ],
                master: false)
            #expect(signUp.status == 201, "\(signUp.json)")
            #expect(signUp["authDataResponse"]?["mfa"]?["recovery"]?.stringValue?.contains(", ") == true)
            #expect(try await Self.logIn(p, "carol", mfa: nil).code == -1)

            // An anonymous user who enrols must bring the code when logging in with its anonymous id again.
            let anon = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "anon-1"]]], master: false)
            let anonId = try #require(anon["objectId"]?.stringValue), anonToken = try #require(anon["sessionToken"]?.stringValue)
            let enrol = try await p.asUser(
                anonToken, .put, "/users/\(anonId)", ["authData": ["mfa": ["secret": .string(Self.secret), "token": .string(Self.code())]]])
            #expect(enrol.status == 200, "\(enrol.json)")
            let again = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "anon-1"]]], master: false)
            #expect(again.code == -1 && again["sessionToken"] == nil)
            let withCode = try await p.request(
                .post, "/users", ["authData": ["anonymous": ["id": "anon-1"], "mfa": ["token": .string(Self.code(1))]]], master: false)
            #expect(withCode.status == 200 && withCode["objectId"]?.stringValue == anonId, "\(withCode.json)")
            #expect(withCode["authData"]?["mfa"] == ["status": "enabled"])
        }
        // MFA off: enrolling answers 252 and stores nothing.
        try await TestServer.with(backend: backend) { p in
            let dave = try await p.signUp("dave")
            let enrol = try await p.asUser(
                dave.token, .put, "/users/\(dave.id)", ["authData": ["mfa": ["secret": .string(Self.secret), "token": .string(Self.code())]]])
            #expect(enrol.code == 252)
        }
    }

    @Test("Wrong codes count towards the account lockout, even after the right password", arguments: Backend.all)
    func lockout(_ backend: Backend) async throws {
        try await Self.with(backend, configure: { $0.accounts.lockout = AccountLockout(duration: 5, threshold: 3) }) { p in
            _ = try await Self.enrolled(p, "alice")
            for _ in 0..<3 { #expect(try await Self.logIn(p, "alice", mfa: ["token": "000000"]).code == 141) }
            let locked = try await Self.logIn(p, "alice", mfa: ["token": .string(Self.code(1))])
            #expect(locked.code == 101, "\(locked.json)")
        }
    }

    /// The codes the `sendCode` cloud function was asked to send, by number.
    final class Outbox: Sendable {
        let sent = Mutex<[(mobile: String, token: String)]>([])
        func last(_ mobile: String) -> String? { sent.withLock { $0.last { $0.mobile == mobile }?.token } }
    }

    @Test("SMS: enrol a number, confirm it with the texted code, log in with `request` then the code (once)", arguments: Backend.all)
    func sms(_ backend: Backend) async throws {
        let outbox = Outbox()
        var cloud = CloudCode()
        cloud.define("sendCode") { req in
            guard req.master, let mobile = req.param("mobile", as: String.self), let token = req.param("token", as: String.self) else {
                throw ParseError(.scriptFailed, "bad call")
            }
            outbox.sent.withLock { $0.append((mobile, token)) }
            return "sent"
        }
        let mfa: JSONValue = ["enabled": true, "options": ["SMS"], "sendSMS": "sendCode", "digits": 8]
        try await Self.with(backend, mfa: mfa, cloud: cloud) { p in
            let erin = try await p.signUp("erin")
            let number = "+1 555 0100"
            #expect(try await p.asUser(erin.token, .put, "/users/\(erin.id)", ["authData": ["mfa": ["mobile": "not a number"]]]).code == 141)
            let enrol = try await p.asUser(erin.token, .put, "/users/\(erin.id)", ["authData": ["mfa": ["mobile": .string(number)]]])
            #expect(enrol.status == 200, "\(enrol.json)")
            let setupCode = try #require(outbox.last(number))
            #expect(setupCode.count == 8)
            // Pending: log-in needs nothing yet, and the user reads "disabled".
            let before = try await Self.logIn(p, "erin", mfa: nil)
            #expect(before.status == 200 && before["authData"]?["mfa"] == ["status": "disabled"])
            let wrongConfirm = try await p.asUser(
                erin.token, .put, "/users/\(erin.id)", ["authData": ["mfa": ["mobile": .string(number), "token": "00000000"]]])
            #expect(wrongConfirm.code == 141)
            let confirm = try await p.asUser(
                erin.token, .put, "/users/\(erin.id)", ["authData": ["mfa": ["mobile": .string(number), "token": .string(setupCode)]]])
            #expect(confirm.status == 200, "\(confirm.json)")

            #expect(try await Self.logIn(p, "erin", mfa: nil).code == -1)
            let request = try await Self.logIn(p, "erin", mfa: ["token": "request"])
            #expect(request.code == 141 && request["error"]?.stringValue == "Please enter the token")
            let loginCode = try #require(outbox.last(number))
            #expect(loginCode != setupCode || outbox.sent.withLock { $0.count } == 2)
            #expect(try await Self.logIn(p, "erin", mfa: ["token": "12345678"]).code == 141)
            #expect(try await Self.logIn(p, "erin", mfa: ["token": .string(loginCode)]).status == 200)
            #expect(try await Self.logIn(p, "erin", mfa: ["token": .string(loginCode)]).code == 141)
        }
    }

    @Test("/challenge: 101 `User not found.` for a bad token whether or not the user exists; Parse Server's -1 answers", arguments: Backend.all)
    func challenge(_ backend: Backend) async throws {
        try await FakeIdentityProvider.with(maxAge: 3600) { fake in
            var options = TestServer.options()
            options.accounts.auth = IdentitySignInTests.auth(fake)
            options.accounts.auth["mfa"] = ["enabled": true, "options": ["TOTP"]]
            try await TestServer.with(backend: backend, options) { p in try await Self.challenge(p, fake) }
        }
    }

    static func challenge(_ p: ParseClient, _ fake: FakeIdentityProvider) async throws {
        do {
            _ = try await Self.enrolled(p, "alice")
            let anon = try await p.request(.post, "/users", ["authData": ["anonymous": ["id": "anon-9"]]], master: false)
            #expect(anon.status == 201)
            let apple = try await p.request(.post, "/users", ["authData": IdentitySignInTests.appleData(fake, "001.apple")], master: false)
            #expect(apple.status == 201)
            func challenge(_ body: JSONValue) async throws -> Reply { try await p.request(.post, "/challenge", body, master: false) }
            let ok = try await challenge(["username": "alice", "password": "secret-pw", "challengeData": ["mfa": ["token": "x"]]])
            #expect(ok.status == 200 && ok["challengeData"] == .object([:]), "\(ok.json)")
            #expect(try await challenge(["username": "alice", "password": "wrong", "challengeData": [:]]).code == 101)
            let noPassword = try await challenge(["username": "alice", "challengeData": [:]])
            #expect(noPassword.code == -1 && noPassword["error"]?.stringValue == "You provided username or email, you need to also provide password.")
            #expect(try await challenge(["username": "alice", "password": "secret-pw"])["error"]?.stringValue == "Nothing to challenge.")
            #expect(try await challenge(["challengeData": "x"])["error"]?.stringValue == "challengeData should be an object.")
            let both = try await challenge(
                ["username": "alice", "password": "secret-pw", "authData": ["anonymous": ["id": "anon-9"]], "challengeData": [:]])
            #expect(both.code == -1)
            let twoIds = try await challenge(["authData": ["anonymous": ["id": "a"], "github": ["id": "b"]], "challengeData": [:]])
            #expect(twoIds["error"]?.stringValue == "You cannot provide more than one authData provider with an id.")
            // A known id with a bad proof, and an unknown id: the same answer.
            let unknown = try await challenge(["authData": ["anonymous": ["id": "nobody"]], "challengeData": ["mfa": [:]]])
            let forged = fake.mint(sub: "001.apple", aud: "another.app", iss: IdentitySignInTests.apple)
            let badProof = try await challenge(["authData": ["apple": ["id": "001.apple", "token": .string(forged)]], "challengeData": ["mfa": [:]]])
            for reply in [unknown, badProof] {
                #expect(reply.status == 404 && reply.code == 101 && reply["error"]?.stringValue == "User not found.", "\(reply.json)")
            }
            #expect(try await challenge(["authData": ["anonymous": ["id": "anon-9"]], "challengeData": ["mfa": [:]]]).status == 200)
            #expect(try await challenge(["authData": IdentitySignInTests.appleData(fake, "001.apple"), "challengeData": ["mfa": [:]]]).status == 200)
        }
    }

    @Test("A bad auth.mfa stops the start with Parse Server's words")
    func badOptions() throws {
        func problem(_ mfa: JSONValue) -> String? {
            do {
                _ = try MFASettings(["mfa": mfa])
                return nil
            } catch { return error.reason }
        }
        #expect(problem(["options": "TOTP"]) == "mfa.options must be an array")
        #expect(problem(["options": ["EMAIL"]]) == "mfa.options must include SMS or TOTP")
        #expect(problem(["options": ["TOTP"], "digits": 3]) == "mfa.digits must be between 4 and 10")
        #expect(problem(["options": ["TOTP"], "digits": "6"]) == "mfa.digits must be a number")
        #expect(problem(["options": ["TOTP"], "period": 5]) == "mfa.period must be greater than 10")
        #expect(problem(["options": ["TOTP"], "algorithm": "MD5"]) == "mfa.algorithm must be one of SHA1, SHA256, SHA512")
        #expect(problem(["options": ["SMS"]])?.hasPrefix("mfa.sendSMS") == true)
        #expect(problem(["options": ["TOTP"], "digits": 8, "period": 60, "algorithm": "SHA256"]) == nil)
        #expect(try MFASettings(["mfa": ["enabled": false, "options": "nonsense"]]) == nil)
    }

    /// RFC 6238 appendix B: the SHA-1, SHA-256 and SHA-512 test vectors (8 digits, 30 s).
    @Test("TOTP matches RFC 6238's test vectors")
    func rfc6238() {
        let seeds: [TOTP.Algorithm: String] = [
            .sha1: "12345678901234567890", .sha256: "12345678901234567890123456789012",
            .sha512: "1234567890123456789012345678901234567890123456789012345678901234",
        ]
        let vectors: [(Int64, String, String, String)] = [
            (59, "94287082", "46119246", "90693936"), (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_234_567_890, "89005924", "91819424", "93441116"), (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        for (time, sha1, sha256, sha512) in vectors {
            for (algorithm, expected) in [(TOTP.Algorithm.sha1, sha1), (.sha256, sha256), (.sha512, sha512)] {
                let totp = TOTP(algorithm: algorithm, digits: 8, period: 30)
                let seed = Array((seeds[algorithm] ?? "").utf8)
                #expect(totp.code(secret: seed, counter: totp.counter(at: ParseDate(milliseconds: time * 1000))) == expected)
            }
        }
        #expect(Base32.decode(Base32.encode(Array("12345678901234567890".utf8))) == Array("12345678901234567890".utf8))
        #expect(Base32.decode("GEZDGNBVGY3TQOJQ") == Array("1234567890".utf8))
        #expect(Base32.decode("not base32!") == nil)
    }
}
