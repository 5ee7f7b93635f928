/// Comma-separated values as RFC 4180 writes them: a field holding a comma, a quote, a line break or edge spaces is
/// quoted, its quotes doubled; records end with `\n` (a `\r\n` read is taken as one).
public enum CSV {
    /// One record's text (without the line break).
    public static func record(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",")
    }

    static func field(_ text: String) -> String {
        let needsQuotes =
            text.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }
            || text.first == " " || text.last == " "
        guard needsQuotes else { return text }
        var out = "\""
        for c in text {
            if c == "\"" { out.append("\"") }
            out.append(c)
        }
        return out + "\""
    }

    /// Splits bytes into records as they arrive (a quoted field may hold line breaks, so records and lines differ).
    public struct Reader: Sendable {
        private var field: [UInt8] = []
        private var fields: [String] = []
        private var inQuotes = false
        /// The quote just read inside a quoted field may be the first of a doubled one.
        private var quotePending = false
        private var sawAnything = false
        /// The line the record being read started on (1-based), and the line now.
        public private(set) var recordLine = 1
        private var line = 1

        public init() {}

        /// Feeds `bytes`; answers the records they completed, each with the line it started on.
        public mutating func feed(_ bytes: some Sequence<UInt8>) -> [(line: Int, fields: [String])] {
            var out: [(line: Int, fields: [String])] = []
            for byte in bytes {
                if inQuotes {
                    if quotePending {
                        quotePending = false
                        if byte == UInt8(ascii: "\"") {
                            field.append(byte)
                            continue
                        }
                        inQuotes = false  // the quote closed the field; this byte is read below
                    } else if byte == UInt8(ascii: "\"") {
                        quotePending = true
                        continue
                    } else {
                        if byte == 10 { line += 1 }
                        field.append(byte)
                        continue
                    }
                }
                switch byte {
                case UInt8(ascii: "\""):
                    if field.isEmpty { inQuotes = true } else { field.append(byte) }
                    sawAnything = true
                case UInt8(ascii: ","):
                    endField()
                    sawAnything = true
                case 13:
                    break
                case 10:
                    if let record = endRecord() { out.append(record) }
                    line += 1
                    recordLine = line
                default:
                    field.append(byte)
                    sawAnything = true
                }
            }
            return out
        }

        /// The last record when the input does not end with a line break; nil otherwise.
        public mutating func finish() -> (line: Int, fields: [String])? {
            if quotePending {
                quotePending = false
                inQuotes = false
            }
            return endRecord()
        }

        /// Whether the input ended inside a quoted field (the last record is then incomplete).
        public var unterminatedQuote: Bool { inQuotes && !quotePending }

        private mutating func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
        }

        private mutating func endRecord() -> (line: Int, fields: [String])? {
            defer { sawAnything = false }
            guard sawAnything || !field.isEmpty || !fields.isEmpty else { return nil }
            endField()
            let record = (line: recordLine, fields: fields)
            fields = []
            return record
        }
    }
}
