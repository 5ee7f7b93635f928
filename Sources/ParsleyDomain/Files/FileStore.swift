public import NIOCore
public import ParsleyCore

/// What a store keeps about one file besides its bytes.
public struct StoredFile: Sendable, Equatable {
    /// The stored name: a random prefix and the sanitised original name (`4f1e..._pic.jpg`).
    public var name: String
    public var size: Int64
    /// The MIME type given at upload (or guessed from the name).
    public var contentType: String?
    /// `fileData.metadata` and `fileData.tags` of a JS SDK upload (JSON objects), as Parse Server keeps them.
    public var metadata: JSONValue?
    public var tags: JSONValue?
    /// Milliseconds since 1970.
    public var createdAt: Int64
    /// The validator the store itself keeps (S3's `ETag`), passed through to clients when there is one.
    public var storeETag: String?

    public init(name: String, size: Int64 = 0, contentType: String? = nil, metadata: JSONValue? = nil, tags: JSONValue? = nil, createdAt: Int64 = 0) {
        self.name = name
        self.size = size
        self.contentType = contentType
        self.metadata = metadata
        self.tags = tags
        self.createdAt = createdAt
    }

    /// A strong validator: the store's own (S3's `ETag`) when it keeps one, else one made from the name and size
    /// (a stored name is never reused for other bytes).
    public var etag: String {
        if let storeETag, storeETag.hasPrefix("\""), storeETag.hasSuffix("\""), storeETag.count > 2 { return storeETag }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "\"" + String(hash, radix: 16) + "-" + String(size, radix: 16) + "\""
    }

    /// The fields a store serialises next to the bytes (content type, metadata, tags, creation time).
    package var attributes: JSONValue {
        var o: [String: JSONValue] = ["createdAt": .int(createdAt)]
        if let contentType { o["contentType"] = .string(contentType) }
        if let metadata { o["metadata"] = metadata }
        if let tags { o["tags"] = tags }
        return .object(o)
    }

    package mutating func read(attributes: JSONValue) {
        contentType = attributes["contentType"]?.stringValue
        metadata = attributes["metadata"]
        tags = attributes["tags"]
        if case .int(let t)? = attributes["createdAt"] { createdAt = t }
    }
}

/// Where file bytes live (Parse Server's files adapter). Both built-ins stream: a file is written and read in
/// bounded chunks, never whole.
///
/// Writes are atomic: `create` makes a file visible under its name only once every byte is stored; when the
/// source throws (the client went away) or the size passes the limit, nothing remains.
public protocol FileStore: Sendable {
    /// Creates folders or tables and removes what interrupted uploads left behind. Called at start-up.
    func prepare() async throws
    /// Stores the chunks `next` yields (nil at the end) as `file.name`; returns the file with its size.
    /// - Throws: `FileStoreError.tooLarge` past `maxBytes`, whatever `next` throws, or a storage error.
    func create(_ file: StoredFile, maxBytes: Int, next: () async throws -> ByteBuffer?) async throws -> StoredFile
    /// The file stored under `name`, or nil.
    func info(_ name: String) async throws -> StoredFile?
    /// Hands `range` of the file's bytes to `write`, in order, in bounded chunks.
    /// - Throws: when the file disappears while it is read (it was deleted).
    func read(_ file: StoredFile, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws
    /// Makes sure the file's bytes can be read before a response commits to them: an encrypted store
    /// (`EncryptedFileStore`) checks the authentication tag. The default does nothing.
    /// - Throws: `FileStoreError.unreadable` (a wrong `encryptionKey`, or a file that was never encrypted).
    func check(_ file: StoredFile) async throws
    /// Deletes the file; false when there was none.
    func delete(_ name: String) async throws -> Bool
    /// The URL clients fetch the file from when the store serves it itself (S3 with `directAccess`); nil (the
    /// default): through the server, `/files/<appId>/<name>`.
    func directURL(_ name: String) -> String?
    /// Stored names after `after` (from the start when nil), sorted, at most `limit`: for `parsley files migrate`.
    func list(after: String?, limit: Int) async throws -> [String]
}

extension FileStore {
    public func check(_ file: StoredFile) async throws {}
    public func directURL(_ name: String) -> String? { nil }
    public func list(after: String?, limit: Int) async throws -> [String] { throw FileStoreError.io("this files adapter cannot list its files") }
}

public enum FileStoreError: Error, Sendable, Equatable {
    /// The upload passed the size limit.
    case tooLarge(Int)
    /// The upload ended before its announced length (the client went away).
    case incomplete
    /// A name that cannot be a stored file's (path characters); never reaches the storage.
    case invalidName
    /// The file went away while it was read.
    case vanished
    /// The bytes cannot be decrypted: a wrong `encryptionKey`, or a file stored without encryption.
    case unreadable
    case io(String)
}

/// Which built-in store to use (Parse Server's `filesAdapter`).
public enum FilesAdapter: Sendable {
    /// Files in `ParseServerOptions.files.directory` (written to a temporary name, then renamed).
    case filesystem
    /// Files as chunk rows in the database (`_Files`, `_FileChunks`), so several nodes share them.
    case database
    /// An adapter of your own.
    case custom(any FileStore)
}

/// Who may upload (Parse Server's `fileUpload` option); the master key always may.
public struct FileUploadOptions: Sendable {
    public var enableForPublic = false
    public var enableForAnonymousUser = false
    public var enableForAuthenticatedUser = true
    /// Regular expressions an extension (or the content type's subtype) must match; `*` allows all.
    /// The default allows everything but `html`/`htm`.
    public var fileExtensions: [String] = ["^(?!(h|H)(t|T)(m|M)(l|L)?$)"]
    /// Parse Server 9's `allowedFileUrlDomains`: the hosts a File value's `url` may name when an object is saved
    /// (`*` any; `*.example.com` its subdomains; `[]` none); default `["*"]`.
    public var allowedFileUrlDomains: [String] = ["*"]

    public init(enableForPublic: Bool = false, enableForAnonymousUser: Bool = false, enableForAuthenticatedUser: Bool = true) {
        self.enableForPublic = enableForPublic
        self.enableForAnonymousUser = enableForAnonymousUser
        self.enableForAuthenticatedUser = enableForAuthenticatedUser
    }
}

/// Standard and URL-safe base64 for file chunks in the database and JS SDK uploads (no Foundation here).
enum FileBase64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let decoding: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        t[Int(UInt8(ascii: "-"))] = 62
        t[Int(UInt8(ascii: "_"))] = 63
        return t
    }()

    static func encode(_ buffer: ByteBuffer) -> String {
        buffer.withUnsafeReadableBytes { bytes in
            let count = bytes.count
            return String(unsafeUninitializedCapacity: (count + 2) / 3 * 4) { out in
                var i = 0, o = 0
                while i + 3 <= count {
                    let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                    out[o] = alphabet[Int(n >> 18)]
                    out[o + 1] = alphabet[Int(n >> 12 & 63)]
                    out[o + 2] = alphabet[Int(n >> 6 & 63)]
                    out[o + 3] = alphabet[Int(n & 63)]
                    i += 3
                    o += 4
                }
                if i < count {
                    let b1 = i + 1 < count ? UInt32(bytes[i + 1]) : 0
                    let n = UInt32(bytes[i]) << 16 | b1 << 8
                    out[o] = alphabet[Int(n >> 18)]
                    out[o + 1] = alphabet[Int(n >> 12 & 63)]
                    out[o + 2] = i + 1 < count ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "=")
                    out[o + 3] = UInt8(ascii: "=")
                    o += 4
                }
                return o
            }
        }
    }

    /// Decodes standard or URL-safe base64; whitespace is skipped, padding optional. Nil on other characters.
    static func decode(_ text: some StringProtocol) -> ByteBuffer? {
        var buffer = ByteBuffer()
        let capacity = text.utf8.count / 4 * 3 + 3
        var valid = true
        var utf8 = text.utf8.makeIterator()
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: capacity) { out in
            var acc: UInt32 = 0
            var bits = 0
            var o = 0
            var ended = false
            while let c = utf8.next() {
                let v = decoding[Int(c)]
                if v != 0xFF, !ended {
                    acc = acc << 6 | UInt32(v)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        out[o] = UInt8(truncatingIfNeeded: acc >> UInt32(bits))
                        o += 1
                    }
                    continue
                }
                if c == UInt8(ascii: "=") {
                    ended = true
                } else if !(c == 32 || c == 9 || c == 10 || c == 13) {
                    valid = false
                    break
                }
            }
            return o
        }
        return valid ? buffer : nil
    }
}

/// How every store gathers an upload's chunks into pieces (a write, a part, a block to encrypt) while counting them
/// against the size limit.
public enum UploadPieces {
    /// Reads chunks from `next` into `pending` until it holds `target` bytes; true when the upload ended first.
    /// `size` counts every byte read; past `maxBytes` this throws `FileStoreError.tooLarge`.
    public static func fill(
        _ pending: inout ByteBuffer, upTo target: Int, size: inout Int64, maxBytes: Int, from next: () async throws -> ByteBuffer?
    ) async throws -> Bool {
        while pending.readableBytes < target {
            guard let chunk = try await next() else { return true }
            size += Int64(chunk.readableBytes)
            if size > Int64(maxBytes) { throw FileStoreError.tooLarge(maxBytes) }
            pending.writeImmutableBuffer(chunk)
        }
        return false
    }
}
