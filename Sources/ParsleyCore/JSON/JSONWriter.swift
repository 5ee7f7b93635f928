/// Serialises `JSONValue` to compact UTF-8 JSON, object keys sorted.
public enum JSONWriter {
    /// The JSON text's bytes. With `fileURL`, `url` is set in every File value (`{"__type":"File","name":...}`) to
    /// `fileURL(name)` as it is written: an answer's files get their URLs without copying the objects that hold them.
    public static func bytes(_ value: JSONValue, fileURL: ((String) -> String)? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out, fileURL: fileURL)
        return out
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        write(value, into: &out, fileURL: nil)
    }

    private static func write(_ value: JSONValue, into out: inout [UInt8], fileURL: ((String) -> String)?) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): writeDouble(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, element) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out, fileURL: fileURL)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            if let fileURL, case .string("File")? = o["__type"], case .string(let name)? = o["name"] {
                var file = o
                file["url"] = .string(fileURL(name))
                write(.object(file), into: &out, fileURL: nil)
                return
            }
            out.append(UInt8(ascii: "{"))
            if o.count == 1, let (key, member) = o.first {
                writeMember(key, member, into: &out, fileURL: fileURL)
            } else if o.count > 1 {
                // The positions are sorted, not the members: no member is copied (retained) to be put in order.
                var order = ContiguousArray(o.keys.indices)
                order.sort { precedes(o.keys[$0], o.keys[$1]) }
                for (n, i) in order.enumerated() {
                    if n > 0 { out.append(UInt8(ascii: ",")) }
                    writeMember(o.keys[i], o.values[i], into: &out, fileURL: fileURL)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// As `string`, but an object whose keys `keyOrders` knows (under the key holding it) keeps that order: what
    /// sends a compound index to another server as it was written.
    public static func string(_ value: JSONValue, keyOrders: JSONKeyOrders) -> String {
        var out: [UInt8] = []
        write(value, parent: "", keyOrders: keyOrders, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func write(_ value: JSONValue, parent: String, keyOrders: JSONKeyOrders, into out: inout [UInt8]) {
        switch value {
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, element) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(element, parent: parent, keyOrders: keyOrders, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            let keys = keyOrders.order(of: o.keys, under: parent) ?? o.keys.sorted(by: precedes)
            out.append(UInt8(ascii: "{"))
            for (i, key) in keys.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(o[key]!, parent: key, keyOrders: keyOrders, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        default:
            write(value, into: &out)
        }
    }

    /// Key order, by UTF-8 bytes: Swift's `<` on strings is not a strict order across canonically equivalent forms
    /// ("\u{e9}=" and "e\u{301}" are neither less nor greater nor equal), so it could order keys by input.
    /// Compared on the strings' contiguous bytes where they have them (native strings do).
    static func precedes(_ a: String, _ b: String) -> Bool {
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y -> Bool in
                let n = min(x.count, y.count)
                var i = 0
                while i < n {
                    if x[i] != y[i] { return x[i] < y[i] }
                    i += 1
                }
                return x.count < y.count
            }
        }
        if let fast, let ordered = fast { return ordered }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    private static func writeMember(_ key: String, _ value: JSONValue, into out: inout [UInt8], fileURL: ((String) -> String)?) {
        writeString(key, into: &out)
        out.append(UInt8(ascii: ":"))
        write(value, into: &out, fileURL: fileURL)
    }

    /// Numbers print the way JavaScript prints them where it matters to clients: integral doubles have no `.0`.
    static func writeDouble(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        if d == d.rounded(), abs(d) < 9_007_199_254_740_992 {
            out.append(contentsOf: String(Int64(d)).utf8)
        } else {
            out.append(contentsOf: d.description.utf8)
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// A JSON string literal of `s` appended to `out`.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied in one piece.
        let plain = s.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            if needsEscape(bytes) { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if plain == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any byte is a control character, `"` or a backslash; eight bytes at a time (each test is the exact "some byte
    /// is zero / less than n" bit trick, so a word without such a byte is never taken for one that has).
    static func needsEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let raw = UnsafeRawPointer(base)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var i = 0
        while i + 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let control = (word &- ones &* 0x20) & ~word & highs
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            if control | ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs) != 0 { return true }
            i += 8
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            i += 1
        }
        return false
    }
}
