import ParsleyCore
import Testing

@Suite("JSON")
struct JSONTests {
    @Test("integers stay integers, doubles stay doubles")
    func numbers() throws {
        #expect(try JSONParser.parse("42") == .int(42))
        #expect(try JSONParser.parse("-0") == .int(0))
        #expect(try JSONParser.parse("4.5") == .double(4.5))
        #expect(try JSONParser.parse("1e3") == .double(1000))
        #expect(try JSONParser.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(JSONWriter.string(.double(3.0)) == "3")
        #expect(JSONWriter.string(.double(0.1)) == "0.1")
        #expect(JSONWriter.string(.int(-7)) == "-7")
    }

    @Test("strings: escapes, surrogate pairs, and invalid input")
    func strings() throws {
        #expect(try JSONParser.parse(#""a\"b\\c\n\u00e9\ud83d\ude00""#) == .string("a\"b\\c\né😀"))
        #expect(JSONWriter.string(.string("a\"\n\u{01}")) == #""a\"\n\u0001""#)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(#""\ud83d""#) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("\"a\u{01}\"") }
    }

    @Test("file URLs are written into every File value, at any depth, and nowhere else")
    func fileURLs() throws {
        let value = try JSONParser.parse(
            #"{"results":[{"pic":{"__type":"File","name":"a b.jpg"},"n":1},{"list":[{"__type":"File","name":"c","url":"old"}],"#
                + #""meta":{"__type":"Pointer","className":"X","objectId":"y"}}],"f":{"__type":"File"}}"#)
        let written = String(decoding: JSONWriter.bytes(value) { "http://h/files/app/" + $0 }, as: UTF8.self)
        #expect(
            written
                == #"{"f":{"__type":"File"},"results":[{"n":1,"pic":{"__type":"File","name":"a b.jpg","url":"http://h/files/app/a b.jpg"}},"#
                + #"{"list":[{"__type":"File","name":"c","url":"http://h/files/app/c"}],"meta":{"__type":"Pointer","className":"X","objectId":"y"}}]}"#
        )
        #expect(String(decoding: JSONWriter.bytes(.int(3)) { _ in "x" }, as: UTF8.self) == "3")
    }

    @Test("strings are escaped exactly where a byte needs it, wherever in an eight-byte word it falls")
    func escapeScan() throws {
        for length in 1...19 {
            for position in 0..<length {
                for byte: UInt8 in [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0xC3] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    if byte == 0xC3 { bytes[position] = 0x41 }  // stays valid UTF-8
                    let text = String(decoding: bytes, as: UTF8.self)
                    let written = JSONWriter.string(.string(text))
                    // (The parser refuses NUL in strings, so that one is only counted.)
                    if byte != 0 { #expect(try JSONParser.parse(written) == .string(text), "\(bytes)") }
                    let extra = byte == 0x22 || byte == 0x5C ? 1 : byte < 0x20 ? 5 : 0
                    #expect(written.utf8.count == length + 2 + extra, "\(bytes)")
                }
            }
        }
        #expect(JSONWriter.string(.string("é\u{1}\"")) == #""é\u0001\"""#)
    }

    @Test("splitASCII cuts where split(separator:) cuts, on every short text of letters, dots and accents")
    func asciiSplit() {
        let alphabet: [String] = ["a", ".", "é", "e\u{301}"]
        var texts: [String] = [""]
        for _ in 0..<4 { texts += texts.flatMap { t in alphabet.map { t + $0 } } }
        for text in Set(texts) {
            for omitting in [true, false] {
                for maxSplits in [1, Int.max] {
                    let expected = text.split(separator: ".", maxSplits: maxSplits, omittingEmptySubsequences: omitting).map(String.init)
                    #expect(text.splitASCII(UInt8(ascii: "."), maxSplits: maxSplits, omittingEmptySubsequences: omitting) == expected, "\(text)")
                }
            }
            let head = text.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init) ?? text
            #expect(text.prefixBeforeASCII(UInt8(ascii: ".")) == head)
        }
    }

    @Test("malformed documents and deep nesting are rejected")
    func malformed() {
        for text in ["", "{", "[1,]", "{\"a\":}", "tru", "01", "1.", "{\"a\" 1}", "[1] x", "NaN"] {
            #expect(throws: JSONParser.Failure.self, "\(text)") { try JSONParser.parse(text) }
        }
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        #expect((try? JSONParser.parse(ok)) != nil)
    }

    @Test("objects serialise with sorted keys (canonical form)")
    func canonical() throws {
        let v = try JSONParser.parse(#"{"b":1,"a":{"d":[true,null],"c":"x"}}"#)
        #expect(JSONWriter.string(v) == #"{"a":{"c":"x","d":[true,null]},"b":1}"#)
    }
}

@Suite("Dates")
struct DateTests {
    @Test("ISO dates parse leniently and print with milliseconds and Z")
    func iso() throws {
        let d = try #require(ParseDate(iso: "2022-01-01T12:23:45.678Z"))
        #expect(d.iso == "2022-01-01T12:23:45.678Z")
        #expect(ParseDate(iso: "2022-01-01T12:23:45Z")?.iso == "2022-01-01T12:23:45.000Z")
        #expect(ParseDate(iso: "2022-01-01")?.iso == "2022-01-01T00:00:00.000Z")
        #expect(ParseDate(iso: "2022-01-01T14:23:45.678123+02:00")?.iso == "2022-01-01T12:23:45.678Z")
        #expect(ParseDate(iso: "1969-12-31T23:59:59.999Z")?.milliseconds == -1)
        #expect(ParseDate(iso: "2024-02-29T00:00:00.000Z")?.iso == "2024-02-29T00:00:00.000Z")
        #expect(ParseDate(iso: "not a date") == nil)
        #expect(ParseDate(iso: "2022-13-01") == nil)
    }

    @Test("$relativeTime grammar")
    func relative() {
        let now = ParseDate(milliseconds: 1_000_000_000_000)
        let inTwoDays: Int64 = 1_000_000_000_000 + 2 * 86_400_000
        let earlier: Int64 = 1_000_000_000_000 - (3 * 3600 + 300) * 1000
        #expect(RelativeTime.resolve("in 2 days", now: now) == ParseDate(milliseconds: inTwoDays))
        #expect(RelativeTime.resolve("3 hours 5 mins ago", now: now) == ParseDate(milliseconds: earlier))
        #expect(RelativeTime.resolve("now", now: now) == now)
        #expect(RelativeTime.resolve("2 days", now: now) == nil)
        #expect(RelativeTime.resolve("in two days", now: now) == nil)
    }
}
