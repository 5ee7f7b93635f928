// JSONParser on arbitrary bytes: never crashes, and whatever it accepts round-trips through JSONWriter
// (parse(write(v)) equals v, and the written text is canonical).
import FuzzSupport
import ParsleyCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let value = parseJSON(data, size) else { return 0 }
    expectJSONRoundTrip(value, "document")
    // The text form of a document is also accepted as a Swift String (the parser's other entry point).
    let text = JSONWriter.string(value)
    guard let fromText = try? JSONParser.parse(text), fromText == (try? JSONParser.parse(JSONWriter.bytes(value))) else {
        fuzzFailure("parse(String) differs from parse(bytes) for \(text)")
    }
    return 0
}

runFuzzer { data, size in
    var empty: UInt8 = 0
    return data.map { fuzz($0, size) } ?? fuzz(&empty, 0)
}
