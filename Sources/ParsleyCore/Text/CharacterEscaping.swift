extension String {
    /// The string with each character found in `table` replaced by its entry (HTML entities, percent escapes), the
    /// others kept; the string itself when it holds none of them.
    public func escaping(_ table: [Character: String]) -> String {
        guard contains(where: { table[$0] != nil }) else { return self }
        var out = ""
        out.reserveCapacity(utf8.count)
        for ch in self {
            if let replacement = table[ch] { out += replacement } else { out.append(ch) }
        }
        return out
    }
}
