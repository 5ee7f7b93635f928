import ParsleyCore
import Testing

/// Inputs the fuzz targets of Fuzz/ found, kept as tests (each is also in the target's seed corpus, named in the test).
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// Fuzz/Corpus/FuzzWrite/regression-batch-mixed-classes.json
    @Test("a relation Batch whose ops name different classes is refused (111), like one op naming two")
    func relationBatchOfTwoClasses() throws {
        let body = try JSONParser.parse(
            #"{"likes":{"__op":"Batch","ops":[{"__op":"AddRelation","objects":[{"__type":"Pointer","className":"XUser","objectId":"a1"}]},"#
                + #"{"__op":"RemoveRelation","objects":[{"__type":"Pointer","className":"_User","objectId":"b2"}]}]}}"#
        )
        #expect(throws: ParseError(.incorrectType, "Relation objects must all be of the same class")) {
            try WriteParser(isCreate: false).parse(body)
        }
        let sameClass = try JSONParser.parse(
            #"{"likes":{"__op":"Batch","ops":[{"__op":"AddRelation","objects":[{"__type":"Pointer","className":"_User","objectId":"a1"}]},"#
                + #"{"__op":"RemoveRelation","objects":[{"__type":"Pointer","className":"_User","objectId":"b2"}]}]}}"#
        )
        let patch = try WriteParser(isCreate: false).parse(sameClass)
        #expect(
            patch.operation(for: "likes")
                == .relation(add: [Pointer(className: "_User", objectId: "a1")], remove: [Pointer(className: "_User", objectId: "b2")]))
    }

    /// Fuzz/Corpus/FuzzFileNames/regression-leading-semicolon
    @Test("the base type of a Content-Type starting with ';' is empty, not its first parameter")
    func contentTypeWithoutType() {
        #expect(FileNames.baseType(";") == "")
        #expect(FileNames.baseType("; charset=utf-8") == "")
        #expect(FileNames.baseType(";image/png") == "")
        #expect(FileNames.fileExtension(forType: ";image/png") == nil)
        #expect(FileNames.baseType(" Image/PNG ; charset=binary") == "image/png")
        #expect(FileNames.baseType("text/plain") == "text/plain")
    }

    /// Fuzz/Corpus/FuzzFileNames/regression-joiner-splits-characters
    @Test("a sanitised name is within the length limit, so it sanitises to itself")
    func sanitisedNameLength() throws {
        // `7` and a zero-width joiner are one character; the joiner becomes `_`, and `7_` is two.
        let joined = String(repeating: "7\u{200D}", count: 100)
        #expect(joined.count == 100)
        #expect(throws: ParseError(.invalidFileName, "Filename too long.")) { try FileNames.sanitize(joined) }
        let fits = String(repeating: "a\u{200D}", count: 64)
        let sanitized = try FileNames.sanitize(fits)
        #expect(sanitized == String(repeating: "a_", count: 64))
        #expect(try FileNames.sanitize(sanitized) == sanitized)
        #expect(FileNames.isValidStoredName(FileNames.unique(sanitized)))
    }

    /// Fuzz/Corpus/FuzzWhere/regression-relative-time-overflow.json
    @Test("a $relativeTime too large for a date is a bad value (107), not an arithmetic overflow trap")
    func relativeTimeOverflow() throws {
        let now = ParseDate(milliseconds: 1_700_000_000_000)
        for text in [
            "9999999999999912 days ago", "in 9223372036854775807 seconds", "in 9223372036854775807 years",
            "in 9000000000000000 secs 9000000000000000 secs", "-9223372036854775808 secs ago", "in 9223372036854775 seconds",
        ] {
            #expect(RelativeTime.resolve(text, now: now) == nil, "\(text)")
        }
        #expect(RelativeTime.resolve("in 1000 years", now: now) == ParseDate(milliseconds: 1_700_000_000_000 + 1000 * 365 * 86_400_000))
        let whereValue = try JSONParser.parse(#"{"updatedAt":{"$gt":{"$relativeTime":"9999999999999912 days ago"}}}"#)
        #expect(throws: ParseError(.invalidJSON, "bad $relativeTime value")) { try QueryParser(now: now).parse(whereValue) }
    }

    /// Fuzz/Corpus/FuzzWhere/regression-date-min-milliseconds.json, Fuzz/Corpus/FuzzWrite/regression-date-year-digits.json
    @Test("any instant prints without trapping, and a year past six digits is printed whole, not cut to six")
    func isoOfExtremeInstants() {
        let earliest = ParseDate(milliseconds: .min).iso
        #expect(earliest.hasPrefix("-292275055-"))
        #expect(ParseDate(milliseconds: .max).iso.hasPrefix("+292278994-"))
        let far = ParseDate(milliseconds: 922_337_233_720_542_222).iso
        #expect(far == "+29229673-05-31T08:35:42.222Z")
        // Outside JavaScript's range: printed, but never read back as another date.
        for text in [earliest, far] { #expect(ParseDate(iso: text) == nil, "\(text)") }
        #expect(ParseDate(milliseconds: -1).iso == "1969-12-31T23:59:59.999Z")
        #expect(ParseDate(milliseconds: -86_400_000).iso == "1969-12-31T00:00:00.000Z")
    }

    /// Fuzz/Corpus/FuzzWrite/regression-date-past-javascript-range.json
    @Test("dates are read only within JavaScript's range, where they print back unchanged")
    func isoWithinJavaScriptRange() throws {
        // Year 999999 and a -99:99 offset was year 1000000, printed as +000000 (year 0) when stored.
        #expect(ParseDate(iso: "+999999-12-31T23:59:59.999-99:99") == nil)
        #expect(ParseDate(iso: "+275760-09-13T00:00:00.001Z") == nil)
        #expect(ParseDate(iso: "-271821-04-19T23:59:59.999Z") == nil)
        let last = try #require(ParseDate(iso: "+275760-09-13T00:00:00.000Z"))
        let first = try #require(ParseDate(iso: "-271821-04-20T00:00:00.000Z"))
        #expect(last.milliseconds == 8_640_000_000_000_000 && first.milliseconds == -8_640_000_000_000_000)
        for date in [last, first, ParseDate(milliseconds: 253_402_300_800_000)] {
            #expect(ParseDate(iso: date.iso) == date, "\(date.iso)")
        }
        #expect(ParseDate(milliseconds: 253_402_300_800_000).iso == "+010000-01-01T00:00:00.000Z")
        let now = ParseDate(milliseconds: 1_700_000_000_000)
        #expect(RelativeTime.resolve("in 1000000 years", now: now) == nil)
        #expect(RelativeTime.resolve("in 200000 years", now: now) != nil)
        let body = try JSONParser.parse(#"{"when":{"__type":"Date","iso":"+999999-12-31T23:59:59.999-99:99"}}"#)
        #expect(throws: ParseError(.incorrectType, "This is not a valid Date")) { try WriteParser(isCreate: true).parse(body) }
    }

    /// Fuzz/Corpus/FuzzJSON/regression-equivalent-keys
    @Test("object keys are written in one order whatever the input order, with canonically equivalent keys too")
    func canonicallyEquivalentKeys() throws {
        let text = #"{"\u00e9=":1,"e\u0301":2,"\ud83d\ude00":{"":[]}}"#
        let value = try JSONParser.parse(text)
        let written = JSONWriter.string(value)
        #expect(written == "{\"e\u{301}\":2,\"\u{e9}=\":1,\"\u{1F600}\":{\"\":[]}}")
        #expect(JSONWriter.string(try JSONParser.parse(written)) == written)
    }
}
