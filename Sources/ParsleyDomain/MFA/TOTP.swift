import Crypto
public import ParsleyCore

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP), as authenticator apps compute them from a base32
/// secret: `digits` digits, a new code every `period` seconds, HMAC with SHA-1 (the apps' default), SHA-256 or SHA-512.
public struct TOTP: Sendable, Equatable {
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha1 = "SHA1"
        case sha256 = "SHA256"
        case sha512 = "SHA512"
    }

    public var algorithm: Algorithm
    public var digits: Int
    public var period: Int

    public init(algorithm: Algorithm = .sha1, digits: Int = 6, period: Int = 30) {
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
    }

    /// The time step a moment falls in.
    public func counter(at date: ParseDate) -> Int64 {
        let step = Int64(period) * 1000
        return date.milliseconds >= 0 ? date.milliseconds / step : (date.milliseconds - step + 1) / step
    }

    /// The code for one time step (RFC 4226's dynamic truncation), zero-padded to `digits`.
    public func code(secret: [UInt8], counter: Int64) -> String {
        var message = [UInt8](repeating: 0, count: 8)
        for i in 0..<8 { message[7 - i] = UInt8(truncatingIfNeeded: UInt64(bitPattern: counter) >> (8 * UInt64(i))) }
        let key = SymmetricKey(data: secret)
        let mac: [UInt8]
        switch algorithm {
        case .sha1: mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: mac = Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha512: mac = Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
        }
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary =
            (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt64 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(UInt64(binary) % modulus)
        return String(repeating: "0", count: max(0, digits - value.count)) + value
    }

    /// The time step whose code `token` is, looking one step either side of `date` for clocks that drift (as the
    /// `otpauth` library Parse Server uses does); nil when none. Every candidate is compared in constant time.
    public func matchingCounter(_ token: String, secret: [UInt8], at date: ParseDate, window: Int64 = 1) -> Int64? {
        let now = counter(at: date)
        var found: Int64?
        for step in (now - window)...(now + window) where ConstantTime.equal(code(secret: secret, counter: step), token) {
            if found == nil { found = step }
        }
        return found
    }
}

/// Base32 (RFC 4648), the alphabet authenticator apps' secrets are written in: case-insensitive, `=` padding and
/// spaces ignored.
public enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The bytes, or nil when a character is outside the alphabet.
    public static func decode(_ text: String) -> [UInt8]? {
        var buffer: UInt32 = 0
        var bits = 0
        var out: [UInt8] = []
        for c in text.uppercased().utf8 where c != UInt8(ascii: "=") && c != UInt8(ascii: " ") {
            guard let index = alphabet.firstIndex(of: c) else { return nil }
            buffer = (buffer << 5) | UInt32(index)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out
    }

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
