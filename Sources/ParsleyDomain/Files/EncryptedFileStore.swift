public import NIOCore

/// Files encrypted at rest (Parse Server's `encryptionKey`): a store (the folder or the database) holds each file as
/// AES-256-GCM `ciphertext ‖ IV ‖ tag` (`FileCipher`), the format of Parse Server's fs and GridFS adapters.
///
/// Streaming: an upload is encrypted piece by piece and the IV and tag follow the last byte. A download is
/// authenticated before anything is sent: `check` reads the whole ciphertext once and compares the tag (a wrong key
/// or a file that is not encrypted is `FileStoreError.unreadable`, answered like a missing file), then `read`
/// decrypts only the bytes of the range asked for (CTR reaches any block directly); a read of the whole file checks
/// the tag again before its last piece goes out. So a download reads an encrypted file twice.
public struct EncryptedFileStore: FileStore {
    public let inner: any FileStore
    let cipher: FileCipher
    /// Bytes encrypted and hashed at a time (a multiple of 16).
    static let piece = 256 * 1024

    /// - Parameter encryptionKey: the key string as configured (Parse Server derives the AES key from it).
    public init(inner: any FileStore, encryptionKey: String) {
        self.inner = inner
        self.cipher = FileCipher(secret: encryptionKey)
    }

    public func prepare() async throws { try await inner.prepare() }

    public func create(_ file: StoredFile, maxBytes: Int, next: () async throws -> ByteBuffer?) async throws -> StoredFile {
        var iv = [UInt8](repeating: 0, count: FileCipher.ivLength)
        var generator = SystemRandomNumberGenerator()
        for i in iv.indices { iv[i] = UInt8.random(in: 0...255, using: &generator) }
        var gcm = cipher.stream(iv: iv)
        var pending = ByteBuffer()
        var size: Int64 = 0
        var ended = false
        var finished = false
        var block: Int64 = 0
        let limit = maxBytes > Int.max - FileCipher.trailerLength ? Int.max : maxBytes + FileCipher.trailerLength
        var stored = try await inner.create(file, maxBytes: limit) {
            if finished { return nil }
            if !ended { ended = try await UploadPieces.fill(&pending, upTo: Self.piece, size: &size, maxBytes: maxBytes, from: next) }
            let count = ended ? pending.readableBytes : pending.readableBytes / 16 * 16
            var out = ByteBuffer()
            out.reserveCapacity(count + FileCipher.trailerLength)
            pending.readSlice(length: count)!.withUnsafeReadableBytes { gcm.crypt($0, fromBlock: block, into: &out) }
            block += Int64(count / 16)
            out.withUnsafeReadableBytes { gcm.absorb($0) }
            if ended {
                out.writeBytes(iv)
                out.writeBytes(gcm.tag)
                finished = true
            }
            pending.discardReadBytes()
            return out
        }
        stored.size = size
        return stored
    }

    public func info(_ name: String) async throws -> StoredFile? {
        guard var file = try await inner.info(name) else { return nil }
        file.size = max(0, file.size - Int64(FileCipher.trailerLength))
        return file
    }

    /// The stored file (its size with the trailer) and its IV and tag.
    func trailer(_ name: String) async throws -> (StoredFile, iv: [UInt8], tag: [UInt8]) {
        guard let raw = try await inner.info(name) else { throw FileStoreError.vanished }
        guard raw.size >= Int64(FileCipher.trailerLength) else { throw FileStoreError.unreadable }
        var bytes: [UInt8] = []
        try await inner.read(raw, range: (raw.size - Int64(FileCipher.trailerLength))..<raw.size) { chunk in
            bytes += chunk.readableBytesView
        }
        guard bytes.count == FileCipher.trailerLength else { throw FileStoreError.vanished }
        return (raw, Array(bytes[0..<FileCipher.ivLength]), Array(bytes[FileCipher.ivLength...]))
    }

    public func check(_ file: StoredFile) async throws {
        let (raw, iv, tag) = try await trailer(file.name)
        var gcm = cipher.stream(iv: iv)
        var pending = ByteBuffer()
        try await inner.read(raw, range: 0..<(raw.size - Int64(FileCipher.trailerLength))) { chunk in
            pending.writeImmutableBuffer(chunk)
            if pending.readableBytes >= Self.piece {
                let count = pending.readableBytes / 16 * 16
                pending.readSlice(length: count)!.withUnsafeReadableBytes { gcm.absorb($0) }
                pending.discardReadBytes()
            }
        }
        pending.withUnsafeReadableBytes { gcm.absorb($0) }
        guard gcm.tag == tag else { throw FileStoreError.unreadable }
    }

    public func read(_ file: StoredFile, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws {
        let (raw, iv, tag) = try await trailer(file.name)
        let size = raw.size - Int64(FileCipher.trailerLength)
        let range = range.clamped(to: 0..<size)
        guard !range.isEmpty else { return }
        // The whole file is hashed as it goes, and its last piece is held back until the tag matches.
        let whole = range == 0..<size
        var gcm = cipher.stream(iv: iv)
        let start = range.lowerBound / 16 * 16
        var skip = Int(range.lowerBound - start)
        var block = start / 16
        var pending = ByteBuffer()
        var held: ByteBuffer?
        func process(_ last: Bool) async throws {
            let count = last ? pending.readableBytes : pending.readableBytes / 16 * 16
            guard count > 0 else { return }
            let slice = pending.readSlice(length: count)!
            var out = ByteBuffer()
            out.reserveCapacity(count)
            slice.withUnsafeReadableBytes { bytes in
                gcm.crypt(bytes, fromBlock: block, into: &out)
                if whole { gcm.absorb(bytes) }
            }
            block += Int64(count / 16)
            pending.discardReadBytes()
            if skip > 0 {
                out.moveReaderIndex(forwardBy: skip)
                skip = 0
            }
            if let previous = held { try await write(previous) }
            held = out
        }
        try await inner.read(raw, range: start..<range.upperBound) { chunk in
            pending.writeImmutableBuffer(chunk)
            if pending.readableBytes >= Self.piece { try await process(false) }
        }
        try await process(true)
        if whole, gcm.tag != tag { throw FileStoreError.unreadable }
        if let held, held.readableBytes > 0 { try await write(held) }
    }

    public func delete(_ name: String) async throws -> Bool { try await inner.delete(name) }

    public func list(after: String?, limit: Int) async throws -> [String] { try await inner.list(after: after, limit: limit) }
}
