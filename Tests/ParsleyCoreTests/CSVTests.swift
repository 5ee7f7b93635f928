import ParsleyCore
import Testing

/// CSV as the class export writes it and the import reads it: quoting, doubled quotes, line breaks inside fields,
/// `\r\n`, records split across chunks, and the line each record starts on.
@Suite("CSV")
struct CSVTests {
    static func read(_ text: String, chunk: Int = 1 << 20) -> (records: [(line: Int, fields: [String])], unterminated: Bool) {
        var reader = CSV.Reader()
        var out: [(line: Int, fields: [String])] = []
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            out += reader.feed(bytes[i..<min(bytes.count, i + chunk)])
            i += chunk
        }
        if let last = reader.finish() { out.append(last) }
        return (out, reader.unterminatedQuote)
    }

    @Test("fields that need it are quoted, and read back the same whatever the chunk size")
    func roundTrip() {
        let rows = [
            ["plain", "with, comma", "with \"quotes\"", "two\nlines", " edge spaces ", ""],
            ["crlf\r\ninside", "ünïcödé ✓", "\"", ",", "last"],
        ]
        let text = rows.map(CSV.record).joined(separator: "\n") + "\n"
        #expect(CSV.record(rows[0]) == #"plain,"with, comma","with ""quotes""","two"# + "\nlines\"," + #"" edge spaces ","#)
        for chunk in [1, 2, 3, 7, 1 << 20] {
            let (records, unterminated) = Self.read(text, chunk: chunk)
            #expect(records.map(\.fields) == rows, "chunk \(chunk)")
            #expect(records.map(\.line) == [1, 3], "records start on their lines (the first spans two)")
            #expect(!unterminated)
        }
    }

    @Test("\\r\\n ends a record, a last record without a line break is read, blank lines are skipped, an open quote is reported")
    func edges() {
        let (records, _) = Self.read("a,b\r\n\r\n1,2\r\n3,\"x\"")
        #expect(records.map(\.fields) == [["a", "b"], ["1", "2"], ["3", "x"]])
        #expect(records.map(\.line) == [1, 3, 4])
        #expect(Self.read("a\n\"open,\nstill").unterminated)
        #expect(Self.read("x,\"\"\n").records.map(\.fields) == [["x", ""]])
    }
}
