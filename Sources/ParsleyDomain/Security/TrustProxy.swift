/// Parse Server's `trustProxy` (Express's `trust proxy` setting): which hops in front of the server may tell who
/// the client is (`X-Forwarded-For`) and whether it came over HTTPS (`X-Forwarded-Proto`). Without it the client
/// is the TCP peer, and forwarded headers are not believed.
///
/// The addresses are walked as Express does: the TCP peer first, then `X-Forwarded-For` from right to left. While
/// the address in hand is trusted, the one before it (the next entry to the left) becomes the client; the first
/// untrusted address ends the walk.
public enum TrustProxy: Sendable, Equatable {
    /// Forwarded headers are ignored (Parse Server's default).
    case none
    /// Every hop is trusted: the client is the leftmost `X-Forwarded-For` entry.
    case all
    /// The nearest `n` hops are trusted (the TCP peer is the first).
    case hops(Int)
    /// Hops whose address lies in one of these ranges are trusted.
    case addresses([IPRange])

    /// Express's named ranges, usable in a list (`"loopback, 10.0.0.0/8"`).
    public static let namedRanges: [String: [String]] = [
        "loopback": ["127.0.0.1/8", "::1/128"],
        "linklocal": ["169.254.0.0/16", "fe80::/10"],
        "uniquelocal": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
    ]

    /// The list form: addresses, CIDR ranges and the named ranges; nil when an entry is none of them.
    public static func list(_ entries: [String]) -> TrustProxy? {
        var ranges: [IPRange] = []
        for entry in entries {
            if let named = namedRanges[entry.lowercased()] {
                ranges += named.compactMap(IPRange.init)
            } else if let range = IPRange(entry) {
                ranges.append(range)
            } else {
                return nil
            }
        }
        return ranges.isEmpty ? TrustProxy.none : .addresses(ranges)
    }

    /// Whether the hop at `address`, `index` hops from the server (the TCP peer is 0), may speak for the one before it.
    func trusts(_ address: String, hop index: Int) -> Bool {
        switch self {
        case .none: return false
        case .all: return true
        case .hops(let n): return index < n
        case .addresses(let ranges): return IPRange.allows(ranges, address)
        }
    }

    /// The client's address: `peer` when it is not trusted, else the walk through `forwardedFor` (the values of
    /// every `X-Forwarded-For` header, in order).
    public func clientAddress(peer: String?, forwardedFor: [String]) -> String? {
        guard let peer, self != .none else { return peer }
        let forwarded = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: " \t") }.filter { !$0.isEmpty }
        let chain = [peer] + forwarded.reversed()
        var client = peer
        for (index, address) in chain.enumerated() where index + 1 < chain.count {
            guard trusts(address, hop: index) else { break }
            client = chain[index + 1]
        }
        return client
    }

    /// Whether `X-Forwarded-Proto` of a request from `peer` is believed (the peer itself is trusted).
    public func trustsForwardedProtocol(peer: String?) -> Bool {
        guard let peer else { return false }
        return trusts(peer, hop: 0)
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
