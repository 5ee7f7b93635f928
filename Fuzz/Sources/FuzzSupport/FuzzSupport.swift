import CLibFuzzer
public import ParsleyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs libFuzzer with the process's arguments and `callback` (the target's `LLVMFuzzerTestOneInput`), then exits
/// with libFuzzer's status.
public func runFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
}

/// Stops the run with a message libFuzzer reports as a crash (and saves the input as `crash-…`).
public func fuzzFailure(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("fuzz property violated: \(message)", file: file, line: line)
}

/// The input as a JSON document, or nil when it is not one.
public func parseJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> JSONValue? {
    try? JSONParser.parse(UnsafeBufferPointer(start: data, count: size))
}

/// `value` is written by `JSONWriter` to text that parses back to an equal value and is a fixed point of the
/// writer (the text form is canonical).
public func expectJSONRoundTrip(_ value: JSONValue, _ what: @autoclosure () -> String = "value") {
    let written = JSONWriter.bytes(value)
    let again: JSONValue
    do {
        again = try JSONParser.parse(written)
    } catch {
        fuzzFailure("\(what()): writer output does not parse (\(error)): \(String(decoding: written, as: UTF8.self))")
    }
    if !again.parseEquals(value) {
        fuzzFailure("\(what()): round trip changed \(value) into \(again)")
    }
    let rewritten = JSONWriter.bytes(again)
    if rewritten != written {
        fuzzFailure(
            "\(what()): writer not canonical: \(String(decoding: written, as: UTF8.self)) then \(String(decoding: rewritten, as: UTF8.self))")
    }
}

/// `value` is in Parsley's stored form: normalising it again changes nothing.
public func expectNormalized(_ value: JSONValue, _ what: @autoclosure () -> String = "value") {
    let again = ParseValue.normalize(value)
    if again != value {
        fuzzFailure("\(what()): normalised value \(JSONWriter.string(value)) normalises again to \(JSONWriter.string(again))")
    }
}

/// Dates of a document: every string that parses as an ISO date prints (`iso`) to text that parses back to the same
/// instant, and every integer, taken as milliseconds, prints without trapping (and round-trips when it parses).
public func checkDates(in value: JSONValue) {
    switch value {
    case .string(let s):
        guard let date = ParseDate(iso: s) else { return }
        guard let again = ParseDate(iso: date.iso), again == date else {
            fuzzFailure("date \(s.debugDescription) prints as \(date.iso), which parses to \(String(describing: ParseDate(iso: date.iso)))")
        }
    case .int(let ms):
        let date = ParseDate(milliseconds: ms)
        if let again = ParseDate(iso: date.iso), again != date {
            fuzzFailure("\(ms) ms prints as \(date.iso), which parses to \(again.milliseconds) ms")
        }
    case .array(let items): for item in items { checkDates(in: item) }
    case .object(let o):
        for (k, v) in o {
            checkDates(in: .string(k))
            checkDates(in: v)
        }
    case .null, .bool, .double: return
    }
}
