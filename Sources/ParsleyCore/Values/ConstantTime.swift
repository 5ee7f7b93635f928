/// Comparisons of secrets whose time does not depend on where they first differ.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes; the time depends on the length only.
    public static func equal(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in x.indices { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}
