public import ParsleyCore

/// Multi-factor log-in, by Parse Server's `mfa` auth adapter: what a user's `authData.mfa` holds and how each step
/// changes it. Pure rules over the stored value; `UserService+MFA` reads and writes it atomically.
///
/// Stored as Parse Server stores it, so a migrated database keeps working: TOTP `{"secret": <base32>, "recovery":
/// [<code>, <code>]}`, SMS `{"mobile": ...}` (with `token`/`expiry` while a log-in code is out) or, before the number
/// is confirmed, `{"pending": {<mobile>: {"token", "expiry"}}}`. Parsley adds `lastCounter`, the time step of the last
/// TOTP code used, so a code works once; a recovery code is removed when it is used (Parse Server kept both).
public struct MFA: Sendable {
    public let settings: MFASettings
    /// Sends an SMS code: `(mobile, token)`.
    let sendSMS: @Sendable (String, String) async throws -> Void
    let now: @Sendable () -> ParseDate

    public init(
        settings: MFASettings, sendSMS: @escaping @Sendable (String, String) async throws -> Void, now: @escaping @Sendable () -> ParseDate = { .now }
    ) {
        self.settings = settings
        self.sendSMS = sendSMS
        self.now = now
    }

    /// What a step stores and answers: `save` replaces `authData.mfa` (nil: unchanged); `response` goes to the client
    /// as `authDataResponse.mfa`; `failure` is thrown once `save` is stored (an SMS code was sent: enter it).
    public struct Outcome: Sendable {
        public var save: JSONValue?
        public var response: JSONValue?
        public var failure: ParseError?
    }

    static func invalid(_ message: String) -> ParseError { ParseError(.scriptFailed, message) }
    static let invalidToken = invalid("Invalid MFA token")

    /// Whether a log-in must bring `authData.mfa` (Parse Server's `additional` policy): TOTP set up, or a confirmed
    /// mobile number. A number still pending confirmation asks nothing.
    public func isRequired(_ stored: JSONValue?) -> Bool {
        (settings.totp && stored?["secret"]?.stringValue != nil) || (settings.sms && stored?["mobile"]?.stringValue != nil)
    }

    /// What anyone but the master key reads of `authData.mfa`.
    public static func view(_ stored: JSONValue) -> JSONValue {
        if stored.objectValue?.keys.elementsEqual(["status"]) == true { return stored }  // already a view
        let enabled = stored["secret"]?.stringValue != nil || stored["mobile"]?.stringValue != nil
        return ["status": .string(enabled ? "enabled" : "disabled")]
    }

    // MARK: Setting up

    /// Enrolment (`validateSetUp`): `{mobile}` sends a code to confirm (SMS), `{secret, token}` starts TOTP with two
    /// recovery codes, answered once as one comma-separated string.
    public func setUp(_ data: JSONValue) async throws -> Outcome {
        if settings.sms, case .string(let mobile)? = data["mobile"] {
            let (token, expiry) = try await sendCode(to: mobile)
            return Outcome(save: ["pending": .object([mobile: ["token": .string(token), "expiry": .string(expiry.iso)]])])
        }
        guard settings.totp else { throw Self.invalid("Invalid MFA data") }
        guard case .string(let secret)? = data["secret"], case .string(let token)? = data["token"], !token.isEmpty, secret.count >= 20,
            let key = Base32.decode(secret), !key.isEmpty
        else { throw Self.invalid("Invalid MFA data") }
        guard let counter = settings.generator.matchingCounter(token, secret: key, at: now()) else { throw Self.invalidToken }
        let recovery = [ObjectID.make(length: 30), ObjectID.make(length: 30)]
        return Outcome(
            save: ["secret": .string(secret), "recovery": .array(recovery.map(JSONValue.string)), "lastCounter": .int(counter)],
            response: ["recovery": .string(recovery.joined(separator: ", "))])
    }

    /// A change by the user itself (`validateUpdate`): confirming a pending number (`{mobile, token}`), or a new TOTP
    /// secret proven with a code (or recovery code) of the current one in `old`. The master key's data is stored as sent.
    public func update(_ data: JSONValue, stored: JSONValue, master: Bool) async throws -> Outcome {
        if master { return Outcome(save: data) }
        if settings.sms, case .string(let mobile)? = data["mobile"] {
            guard case .string(let token)? = data["token"] else { throw Self.invalid("MFA is already set up on this account") }
            guard let pending = stored["pending"]?[mobile] else { throw Self.invalid("This number is not pending") }
            guard Self.unexpiredMatch(token, pending, now: now()) else { throw Self.invalidToken }
            var next = stored.objectValue ?? [:]
            var waiting = next["pending"]?.objectValue ?? [:]
            waiting[mobile] = nil
            next["pending"] = .object(waiting)
            next["mobile"] = .string(mobile)
            return Outcome(save: .object(next))
        }
        guard settings.totp else { throw Self.invalid("Invalid MFA data") }
        _ = try await logIn(["token": data["old"] ?? .null], stored: stored)
        return try await setUp(data)
    }

    // MARK: Logging in

    /// A log-in's second factor (`validateLogin`). SMS: `"request"` sends a code and answers 141 `Please enter the
    /// token`; the code then works once, before it expires. TOTP: the current code (once) or a recovery code (once).
    public func logIn(_ provided: JSONValue, stored: JSONValue) async throws -> Outcome {
        let token = provided["token"]
        if settings.sms, case .string(let mobile)? = stored["mobile"] {
            var next = stored.objectValue ?? [:]
            if token == .string("request") {
                let (code, expiry) = try await sendCode(to: mobile)
                next["token"] = .string(code)
                next["expiry"] = .string(expiry.iso)
                return Outcome(save: .object(next), failure: Self.invalid("Please enter the token"))
            }
            guard case .string(let given)? = token, Self.unexpiredMatch(given, stored, now: now()) else { throw Self.invalidToken }
            next["token"] = nil
            next["expiry"] = nil
            return Outcome(save: .object(next))
        }
        guard settings.totp else { return Outcome() }
        guard case .string(let given)? = token else { throw Self.invalidToken }
        guard case .string(let secret)? = stored["secret"] else { return Outcome() }
        var next = stored.objectValue ?? [:]
        let recovery = stored["recovery"]?.arrayValue?.compactMap(\.stringValue) ?? []
        // Every recovery code is compared, so the time does not tell which one matched.
        let matches = recovery.map { ConstantTime.equal($0, given) }
        if let used = matches.firstIndex(of: true) {
            next["recovery"] = .array(recovery.enumerated().filter { $0.offset != used }.map { .string($0.element) })
            return Outcome(save: .object(next))
        }
        guard let key = Base32.decode(secret), let counter = settings.generator.matchingCounter(given, secret: key, at: now()) else {
            throw Self.invalidToken
        }
        if let last = stored["lastCounter"]?.integerValue, counter <= last { throw Self.invalidToken }
        next["lastCounter"] = .int(counter)
        return Outcome(save: .object(next))
    }

    // MARK: SMS codes

    /// A random code of `digits` digits, sent to `mobile`, valid for one `period`.
    func sendCode(to mobile: String) async throws -> (token: String, expiry: ParseDate) {
        guard Self.isPhoneNumber(mobile) else { throw Self.invalid("Invalid mobile number.") }
        var rng = SystemRandomNumberGenerator()
        let token = String((0..<settings.generator.digits).map { _ in Character(String(rng.next(upperBound: UInt32(10)))) })
        try await sendSMS(mobile, token)
        return (token, ParseDate(milliseconds: now().milliseconds + Int64(settings.generator.period) * 1000))
    }

    /// Parse Server's pattern: an optional `+`, an optional bracketed country code of up to three digits, then digits,
    /// spaces, dashes, dots and slashes.
    static func isPhoneNumber(_ text: String) -> Bool {
        var rest = Substring(text)
        while rest.first == "+" { rest = rest.dropFirst() }
        let hasBracket = rest.first == "("
        if hasBracket { rest = rest.dropFirst() }
        let country = rest.prefix(3).prefix { $0.isASCII && $0.isNumber }
        guard !country.isEmpty else { return false }
        rest = rest.dropFirst(country.count)
        if rest.first == ")" { rest = rest.dropFirst() }
        return rest.allSatisfy { ($0.isASCII && $0.isNumber) || " -./".contains($0) }
    }

    /// `holder.token` equals `given` (in constant time) and `holder.expiry` has not passed.
    static func unexpiredMatch(_ given: String, _ holder: JSONValue, now: ParseDate) -> Bool {
        guard case .string(let saved)? = holder["token"], let expiry = Self.date(holder["expiry"]) else { return false }
        return ConstantTime.equal(saved, given) && now <= expiry
    }

    /// An ISO string or a Parse Date (`{"__type": "Date", "iso": ...}`), as a migrated database may hold it.
    static func date(_ value: JSONValue?) -> ParseDate? {
        switch value {
        case .string(let iso)?: return ParseDate(iso: iso)
        case let v?: return v["iso"]?.stringValue.flatMap { ParseDate(iso: $0) }
        case nil: return nil
        }
    }
}
