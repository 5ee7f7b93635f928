import ParsleyCore
import Testing

/// Inputs the fuzz targets of Fuzz/ found, kept as tests (each is also in the target's seed corpus, named in the test).
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// Fuzz/Corpus/FuzzWrite/regression-batch-mixed-classes.json
    @Test("a relation Batch whose ops name different classes is refused (111), like one op naming two")
    func relationBatchOfTwoClasses() throws {
        let body = try JSONParser.parse(
            #"{"likes":{"__op":"Batch","ops":[{"__op":"AddRelation","objects":[{"__type":"Pointer","className":"XUser","objectId":"a1"}]},{"__op":"RemoveRelation","objects":[{"__type":"Pointer","className":"_User","objectId":"b2"}]}]}}"#
        )
        #expect(throws: ParseError(.incorrectType, "Relation objects must all be of the same class")) {
            try WriteParser(isCreate: false).parse(body)
        }
        let sameClass = try JSONParser.parse(
            #"{"likes":{"__op":"Batch","ops":[{"__op":"AddRelation","objects":[{"__type":"Pointer","className":"_User","objectId":"a1"}]},{"__op":"RemoveRelation","objects":[{"__type":"Pointer","className":"_User","objectId":"b2"}]}]}}"#
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
}
