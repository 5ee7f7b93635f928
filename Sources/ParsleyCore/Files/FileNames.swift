/// File names: what an upload may be called, how it is made safe for a disk and a URL, and MIME types.
///
/// An uploaded name may be any Unicode text up to 128 characters; characters other than letters, digits and
/// ` .@~_-` become `_`. Names with a path separator, NUL or another control character, or made only of dots
/// are refused (122), so no name can leave the storage folder. The stored name is 32 random hex characters,
/// `_`, and the sanitised name.
public enum FileNames {
    public static let maxLength = 128
    /// UTF-8 bytes of a sanitised name, so the stored name stays well under a file system's 255-byte limit.
    static let maxBytes = 200

    /// The sanitised form of an uploaded name.
    /// - Throws: 122 for a missing, too long or unsafe name.
    public static func sanitize(_ name: String) throws(ParseError) -> String {
        if name.isEmpty { throw ParseError(.invalidFileName, "Filename not provided.") }
        if name.count > maxLength || name.utf8.count > maxBytes * 2 { throw ParseError(.invalidFileName, "Filename too long.") }
        if name.unicodeScalars.contains(where: { $0 == "/" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F })
            || name.allSatisfy({ $0 == "." })
        {
            throw ParseError(.invalidFileName, "Filename contains invalid characters.")
        }
        var out = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            out.append(isKept(scalar) ? scalar : "_")
        }
        let sanitized = String(out)
        // Counted again: a replaced scalar can split one character in two (`7` + zero-width joiner is one, `7_` two).
        if sanitized.utf8.count > maxBytes || sanitized.count > maxLength { throw ParseError(.invalidFileName, "Filename too long.") }
        return sanitized
    }

    static func isKept(_ s: Unicode.Scalar) -> Bool {
        if s.isASCII {
            let c = UInt8(s.value)
            return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || " .@~_-".utf8.contains(c)
        }
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark, .spacingMark,
            .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }

    /// Whether `name` can be a stored file's name: checked on every lookup before any storage sees it.
    public static func isValidStoredName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 250, name.utf8.first != UInt8(ascii: ".") else { return false }
        return !name.unicodeScalars.contains { $0 == "/" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F }
    }

    /// A new stored name: `<32 random hex>_<sanitised name>`.
    public static func unique(_ sanitized: String) -> String {
        randomHex(16) + "_" + sanitized
    }

    /// `bytes` random bytes as lowercase hex (names of uploads in progress).
    public static func randomHex(_ bytes: Int) -> String {
        var rng = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes * 2)
        for _ in 0..<bytes {
            let b = rng.next() as UInt8
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Percent-encodes a name for a URL path segment (everything but `A-Z a-z 0-9 - . _ ~`).
    public static func urlEncode(_ name: String) -> String {
        // Most names (Parsley's own are `<hex>_<name>`) need no escape: the same string back.
        let plain = name.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isUnreserved) } ?? name.utf8.allSatisfy(isUnreserved)
        if plain { return name }
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count)
        for c in name.utf8 {
            if isUnreserved(c) {
                out.append(c)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(upperHex[Int(c >> 4)])
                out.append(upperHex[Int(c & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let upperHex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// RFC 3986's unreserved characters: letters, digits, `-`, `.`, `_`, `~`.
    @inline(__always)
    private static func isUnreserved(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
    }

    /// The extension after the last dot (without it), or nil.
    public static func pathExtension(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : String(ext)
    }

    /// `image/png; charset=x` → `image/png`, lowercased.
    public static func baseType(_ contentType: String) -> String {
        // Empty pieces kept: in `;charset=x` the type is the empty text before the `;`, not `charset=x`.
        let base = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return base.trimmingSpaces().lowercased()
    }

    /// The MIME type of a name's extension, or nil when unknown.
    public static func mimeType(forName name: String) -> String? {
        guard let ext = pathExtension(name)?.lowercased() else { return nil }
        return types[ext]
    }

    /// The usual extension of a MIME type, or nil.
    public static func fileExtension(forType contentType: String) -> String? {
        extensions[baseType(contentType)]
    }

    static let types: [String: String] = [
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "heic": "image/heic",
        "heif": "image/heif", "avif": "image/avif", "bmp": "image/bmp", "ico": "image/vnd.microsoft.icon", "tif": "image/tiff",
        "tiff": "image/tiff", "svg": "image/svg+xml", "mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime",
        "webm": "video/webm", "ogv": "video/ogg", "mkv": "video/x-matroska", "avi": "video/x-msvideo", "3gp": "video/3gpp",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav", "ogg": "audio/ogg", "oga": "audio/ogg",
        "opus": "audio/opus", "flac": "audio/flac", "caf": "audio/x-caf", "pdf": "application/pdf", "txt": "text/plain",
        "csv": "text/csv", "md": "text/markdown", "json": "application/json", "xml": "application/xml", "html": "text/html",
        "htm": "text/html", "css": "text/css", "js": "text/javascript", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation", "epub": "application/epub+zip",
        "bin": "application/octet-stream", "wasm": "application/wasm", "ics": "text/calendar", "vcf": "text/vcard",
    ]

    static let extensions: [String: String] = {
        var e: [String: String] = [:]
        for (ext, type) in types where e[type] == nil || ext.count < e[type]!.count || (ext.count == e[type]!.count && ext < e[type]!) {
            e[type] = ext
        }
        e["image/jpeg"] = "jpeg"
        e["text/html"] = "html"
        e["image/jpg"] = "jpg"
        e["audio/mp3"] = "mp3"
        e["audio/x-m4a"] = "m4a"
        e["application/octet-stream"] = nil
        return e
    }()
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
