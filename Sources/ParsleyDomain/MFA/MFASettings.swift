public import ParsleyCore

/// `auth.mfa`, Parse Server's multi-factor adapter: `{"enabled": true, "options": ["TOTP", "SMS"], "digits": 6,
/// "period": 30, "algorithm": "SHA1", "sendSMS": "<cloud function>"}`.
///
/// Parse Server's `sendSMS` is a JavaScript function; here it names a cloud function (Swift or a webhook) that is
/// called with the master key and `{"mobile": ..., "token": ...}` and sends the text.
public struct MFASettings: Sendable, Equatable {
    public var totp: Bool
    public var sms: Bool
    public var generator: TOTP
    /// The cloud function that sends a code by SMS.
    public var sendSMS: String?

    /// Reads `auth.mfa`; nil when it is absent or `enabled: false`. - Throws: Parse Server's words for a bad option.
    public init?(_ auth: [String: JSONValue]) throws(Invalid) {
        guard let entry = auth["mfa"], entry["enabled"] != .bool(false), entry["enabled"] != .string("false") else { return nil }
        guard case .array(let options)? = entry["options"] else { throw Invalid("mfa.options must be an array") }
        totp = options.contains(.string("TOTP"))
        sms = options.contains(.string("SMS"))
        guard totp || sms else { throw Invalid("mfa.options must include SMS or TOTP") }
        let digits = try Self.number(entry["digits"], "digits") ?? 6
        let period = try Self.number(entry["period"], "period") ?? 30
        guard (4...10).contains(digits) else { throw Invalid("mfa.digits must be between 4 and 10") }
        guard period >= 10 else { throw Invalid("mfa.period must be greater than 10") }
        var algorithm = TOTP.Algorithm.sha1
        if let name = entry["algorithm"] {
            guard let text = name.stringValue, let known = TOTP.Algorithm(rawValue: String(text.uppercased().filter { $0 != "-" }))
            else { throw Invalid("mfa.algorithm must be one of SHA1, SHA256, SHA512") }
            algorithm = known
        }
        generator = TOTP(algorithm: algorithm, digits: digits, period: period)
        sendSMS = entry["sendSMS"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if sms, sendSMS == nil {
            throw Invalid("mfa.sendSMS must name the cloud function that sends the code when using SMS OTPs")
        }
    }

    static func number(_ value: JSONValue?, _ name: String) throws(Invalid) -> Int? {
        switch value {
        case nil, .null?: return nil
        case .int(let n)?: return Int(n)
        case .double(let d)? where d == d.rounded(.down) && abs(d) < 1e9: return Int(d)
        default: throw Invalid("mfa.\(name) must be a number")
        }
    }

    public struct Invalid: Error, Equatable {
        public let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
