#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One entry of `masterKeyIps`: an address (`127.0.0.1`, `::1`) or a range in CIDR notation (`10.0.0.0/8`,
/// `::/0`). IPv4 addresses are compared as IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`), so a client reached
/// over a dual-stack socket matches its IPv4 entry.
public struct IPRange: Sendable, Equatable, CustomStringConvertible {
    let bytes: [UInt8]
    let prefixLength: Int
    public let description: String

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let (bytes, isV4) = Self.parse(String(parts[0])) else { return nil }
        var length = 128
        if parts.count == 2 {
            guard let n = Int(parts[1]), n >= 0, n <= (isV4 ? 32 : 128) else { return nil }
            length = isV4 ? 96 + n : n
        }
        self.bytes = bytes
        self.prefixLength = length
        self.description = text
    }

    /// Whether `address` (as the socket reports it) lies in the range.
    public func contains(_ address: String) -> Bool {
        guard let (candidate, _) = Self.parse(address) else { return false }
        var remaining = prefixLength
        for i in 0..<16 where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if candidate[i] & mask != bytes[i] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// 16 bytes (IPv4 mapped into IPv6) and whether it was written as IPv4.
    static func parse(_ text: String) -> ([UInt8], Bool)? {
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return (withUnsafeBytes(of: &v6) { Array($0) }, false)
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + withUnsafeBytes(of: &v4) { Array($0) }, true)
        }
        return nil
    }

    /// Whether any of `ranges` holds `address`.
    public static func allows(_ ranges: [IPRange], _ address: String?) -> Bool {
        guard let address else { return false }
        return ranges.contains { $0.contains(address) }
    }
}
