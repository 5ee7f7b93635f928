extension String {
    /// Whether `needle`'s UTF-8 bytes occur in this string's: a plain byte search (no Unicode canonical
    /// equivalence, unlike `contains`), for checks that run on every request (log redaction, keyword denylist).
    public func containsUTF8(_ needle: String) -> Bool {
        var haystack = self
        var needle = needle
        return haystack.withUTF8 { h in
            needle.withUTF8 { n in
                guard let first = n.first else { return true }
                guard n.count <= h.count else { return false }
                var i = 0
                while i <= h.count - n.count {
                    if h[i] == first {
                        var j = 1
                        while j < n.count, h[i + j] == n[j] { j += 1 }
                        if j == n.count { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }
}
