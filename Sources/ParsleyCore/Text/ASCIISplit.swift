extension String {
    /// The pieces between occurrences of an ASCII byte (`.`, `,`, `&`), split on the UTF-8 bytes: what
    /// `split(separator:)` gives for such a separator, without walking the text character by character (that walk was
    /// most of the cost of reading a field path or a `keys` list). An ASCII byte never occurs inside a multi-byte
    /// character, so every piece is whole text.
    public func splitASCII(_ separator: UInt8, maxSplits: Int = .max, omittingEmptySubsequences: Bool = true) -> [String] {
        guard utf8.contains(separator) else { return isEmpty && omittingEmptySubsequences ? [] : [self] }
        return utf8.split(separator: separator, maxSplits: maxSplits, omittingEmptySubsequences: omittingEmptySubsequences).map {
            String(Substring($0))
        }
    }

    /// The text before the first occurrence of an ASCII byte (all of it when there is none).
    public func prefixBeforeASCII(_ separator: UInt8) -> String {
        guard let index = utf8.firstIndex(of: separator) else { return self }
        return String(self[..<index])
    }
}
