// FileNames on arbitrary text (an uploaded name, or a Content-Type): never crashes; a sanitised name is safe
// (no path separator, control character or NUL, not only dots, within the byte limit), keeps one scalar per
// input scalar, is accepted by the stored-name validator once made unique, and sanitises to itself; the
// validator never accepts a name that could leave the storage folder; URL encoding is reversible and only
// emits unreserved characters; MIME type and extension tables agree with each other.
import FuzzSupport
import ParsleyCore

func isUnsafe(_ s: Unicode.Scalar) -> Bool { s == "/" || s == "\\" || s.value < 0x20 || s.value == 0x7F }

func checkSanitize(_ name: String) {
    let sanitized: String
    do {
        sanitized = try FileNames.sanitize(name)
    } catch {
        if error.code != .invalidFileName { fuzzFailure("sanitize threw \(error)") }
        return
    }
    if sanitized.isEmpty || sanitized.unicodeScalars.contains(where: isUnsafe) || sanitized.allSatisfy({ $0 == "." }) {
        fuzzFailure("unsafe sanitised name \(sanitized.debugDescription) from \(name.debugDescription)")
    }
    if sanitized.utf8.count > 200 { fuzzFailure("sanitised name of \(sanitized.utf8.count) bytes") }
    if !zip(name.unicodeScalars, sanitized.unicodeScalars).allSatisfy({ $0 == $1 || $1 == "_" })
        || name.unicodeScalars.count != sanitized.unicodeScalars.count
    {
        fuzzFailure("sanitised \(name.debugDescription) to \(sanitized.debugDescription)")
    }
    let stored = FileNames.unique(sanitized)
    if !FileNames.isValidStoredName(stored) { fuzzFailure("stored name refused: \(stored.debugDescription)") }
    do {
        let again = try FileNames.sanitize(sanitized)
        if again != sanitized || !again.unicodeScalars.elementsEqual(sanitized.unicodeScalars) {
            fuzzFailure("sanitize is not idempotent: \(sanitized.debugDescription) -> \(again.debugDescription)")
        }
    } catch {
        fuzzFailure("a sanitised name is refused: \(sanitized.debugDescription): \(error)")
    }
    if let type = FileNames.mimeType(forName: sanitized), let ext = FileNames.fileExtension(forType: type),
        FileNames.mimeType(forName: "file." + ext) != type
    {
        fuzzFailure("extension \(ext) of \(type) is not of that type")
    }
}

func checkValidator(_ name: String) {
    guard FileNames.isValidStoredName(name) else { return }
    if name == "." || name == ".." || name.hasPrefix(".") || name.unicodeScalars.contains(where: isUnsafe) || name.utf8.count > 250 {
        fuzzFailure("validator accepted \(name.debugDescription)")
    }
}

func checkURLEncoding(_ name: String) {
    let encoded = FileNames.urlEncode(name)
    var decoded: [UInt8] = []
    var bytes = encoded.utf8.makeIterator()
    func hex(_ c: UInt8?) -> UInt8? {
        guard let c else { return nil }
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
    while let c = bytes.next() {
        if c == UInt8(ascii: "%") {
            guard let hi = hex(bytes.next()), let lo = hex(bytes.next()) else { fuzzFailure("bad escape in \(encoded)") }
            decoded.append(hi << 4 | lo)
        } else if (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x2E || c == 0x5F
            || c == 0x7E
        {
            decoded.append(c)
        } else {
            fuzzFailure("reserved byte \(c) in \(encoded)")
        }
    }
    if decoded != Array(name.utf8) { fuzzFailure("URL encoding of \(name.debugDescription) does not decode back") }
}

func checkTypes(_ text: String) {
    if let ext = FileNames.pathExtension(text) {
        if ext.contains(".") || !text.hasSuffix("." + ext) { fuzzFailure("extension \(ext.debugDescription) of \(text.debugDescription)") }
    }
    let base = FileNames.baseType(text)
    if base.contains(";") { fuzzFailure("base type with parameters: \(base.debugDescription)") }
    if let ext = FileNames.fileExtension(forType: text), FileNames.mimeType(forName: "x." + ext) == nil {
        fuzzFailure("extension \(ext) of \(text.debugDescription) has no type")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    checkSanitize(text)
    checkValidator(text)
    checkURLEncoding(text)
    checkTypes(text)
    return 0
}

runFuzzer { data, size in
    var empty: UInt8 = 0
    return data.map { fuzz($0, size) } ?? fuzz(&empty, 0)
}
