import Crypto
import Foundation
import HTTPTypes
import NIOCore
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import Testing

/// `encryptionKey`: files at rest in the format of Parse Server's fs and GridFS adapters, checked against an
/// independent implementation of that format with swift-crypto's one-shot AES-GCM.
@Suite("Files encrypted at rest")
struct FilesEncryptionTests {
    static let key = "a file key of the app's own"

    /// Parse Server's key: the first 32 characters of base64(SHA-256(key string)), as bytes.
    static func parseKey(_ secret: String) -> SymmetricKey {
        let base64 = Data(SHA256.hash(data: Data(secret.utf8))).base64EncodedString()
        return SymmetricKey(data: Data(base64.utf8.prefix(32)))
    }

    /// What Parse Server's fs adapter writes: ciphertext ‖ IV (16) ‖ tag (16).
    static func parseEncrypt(_ plain: [UInt8], key: String) throws -> [UInt8] {
        let iv = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let box = try AES.GCM.seal(plain, using: parseKey(key), nonce: AES.GCM.Nonce(data: iv))
        return Array(box.ciphertext) + iv + Array(box.tag)
    }

    /// What Parse Server's fs adapter reads; nil when the tag does not match.
    static func parseDecrypt(_ stored: [UInt8], key: String) -> [UInt8]? {
        guard stored.count >= 32 else { return nil }
        let n = stored.count - 32
        guard let nonce = try? AES.GCM.Nonce(data: stored[n..<(n + 16)]),
            let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: stored[0..<n], tag: stored[(n + 16)...]),
            let plain = try? AES.GCM.open(box, using: parseKey(key))
        else { return nil }
        return Array(plain)
    }

    /// The store under the server's encryption: the folder or the database tables as they are.
    static func rawStore(_ f: FilesHarness) -> any FileStore {
        f.backend == .database ? DatabaseFileStore(database: f.database) : LocalFileStore(root: f.directory)
    }

    static func rawBytes(_ f: FilesHarness, _ name: String) async throws -> [UInt8] {
        let store = rawStore(f)
        let file = try #require(try await store.info(name))
        var bytes: [UInt8] = []
        try await store.read(file, range: 0..<file.size) { bytes += $0.readableBytesView }
        return bytes
    }

    static func putRaw(_ f: FilesHarness, _ name: String, _ bytes: [UInt8], key: String? = nil) async throws {
        let store: any FileStore = key.map { EncryptedFileStore(inner: rawStore(f), encryptionKey: $0) } ?? rawStore(f)
        var pending: [UInt8]? = bytes
        _ = try await store.create(StoredFile(name: name, contentType: "application/octet-stream"), maxBytes: .max) {
            defer { pending = nil }
            return pending.map { ByteBuffer(bytes: $0) }
        }
    }

    static let stores: [FileBackend] = [.filesystem, .database]

    @Test("the streamed cipher is AES-256-GCM with a 16-byte IV: lengths around blocks and pieces, any chunking, any range")
    func cipherMatchesOneShotGCM() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-cipher-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let raw = LocalFileStore(root: dir.path)
        try await raw.prepare()
        let store = EncryptedFileStore(inner: raw, encryptionKey: Self.key)
        let piece = 256 * 1024
        for (i, size) in [0, 1, 15, 16, 17, 255, 4096, piece - 1, piece, piece + 1, 3 * piece + 17, 1_048_576 + 5].enumerated() {
            let plain = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) }
            let name = "f\(i).bin"
            // Chunks of odd sizes, as a network delivers them.
            var offset = 0
            var step = 1
            _ = try await store.create(StoredFile(name: name), maxBytes: .max) {
                guard offset < plain.count else { return nil }
                let end = min(plain.count, offset + step)
                defer {
                    offset = end
                    step = step * 7 + 3
                }
                return ByteBuffer(bytes: plain[offset..<end])
            }
            var stored: [UInt8] = []
            let rawFile = try #require(try await raw.info(name))
            try await raw.read(rawFile, range: 0..<rawFile.size) { stored += $0.readableBytesView }
            #expect(Self.parseDecrypt(stored, key: Self.key) == plain, "size \(size)")
            let file = try #require(try await store.info(name))
            #expect(file.size == Int64(size))
            try await store.check(file)
            for range in [0..<size, (size / 3)..<(size - size / 5), max(0, size - 20)..<size] where !range.isEmpty {
                var got: [UInt8] = []
                try await store.read(file, range: Int64(range.lowerBound)..<Int64(range.upperBound)) { got += $0.readableBytesView }
                #expect(got == Array(plain[range]), "size \(size) range \(range)")
            }
        }
        let wrong = EncryptedFileStore(inner: raw, encryptionKey: "another key")
        let file = try #require(try await wrong.info("f5.bin"))
        await #expect(throws: FileStoreError.unreadable) { try await wrong.check(file) }
        await #expect(throws: FileStoreError.unreadable) { try await wrong.read(file, range: 0..<file.size) { _ in } }
    }

    @Test("uploads are stored encrypted in Parse Server's format and served decrypted, whole and by range", arguments: stores, Backend.all)
    func roundTrip(_ backend: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(backend, database: database, { $0.files.encryptionKey = Self.key }) { f in
            // Crosses the 256 KB pieces of the cipher and the 1 MB chunks of the stores; not a multiple of 16.
            let bytes = patternBytes(2_621_440 + 123)
            let file = try await f.stored("secret.bin", bytes)
            let got = try await f.get(file.path)
            #expect(got.status == 200)
            #expect(got.headers[.contentLength] == String(bytes.count))
            #expect(got.bytes == bytes)
            let head = try await f.get(file.path, method: .head)
            #expect(head.headers[.contentLength] == String(bytes.count))

            let stored = try await Self.rawBytes(f, file.name)
            #expect(stored.count == bytes.count + 32)
            #expect(Array(stored.prefix(4096)) != Array(bytes.prefix(4096)))
            #expect(Self.parseDecrypt(stored, key: Self.key) == bytes, "not readable the way Parse Server's fs adapter reads it")
            #expect(Self.parseDecrypt(stored, key: "another key") == nil)

            for (lower, upper) in [(0, 9), (5, 20), (262_140, 262_200), (1_048_000, 1_049_999), (bytes.count - 7, bytes.count - 1)] {
                let part = try await f.get(file.path, headers: [.range: "bytes=\(lower)-\(upper)"])
                #expect(part.status == 206)
                #expect(part.headers[.contentRange] == "bytes \(lower)-\(upper)/\(bytes.count)")
                #expect(part.bytes == Array(bytes[lower...upper]), "range \(lower)-\(upper)")
            }
            let suffix = try await f.get(file.path, headers: [.range: "bytes=-5"])
            #expect(suffix.bytes == Array(bytes.suffix(5)))
            let beyond = try await f.get(file.path, headers: [.range: "bytes=\(bytes.count)-"])
            #expect(beyond.status == 416)

            // Small files, an empty-range edge, every byte value.
            for size in [1, 15, 16, 17, 31, 32, 33] {
                let small = patternBytes(size)
                let s = try await f.stored("s\(size).bin", small)
                #expect(try await f.get(s.path).bytes == small, "size \(size)")
                #expect(Self.parseDecrypt(try await Self.rawBytes(f, s.name), key: Self.key) == small)
            }
        }
    }

    @Test(
        "a file Parse Server encrypted is served; a wrong key or a file stored in the clear is a 404, never a crash", arguments: stores, Backend.all)
    func parseFormatAndWrongKey(_ backend: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(backend, database: database, { $0.files.encryptionKey = Self.key }) { f in
            let plain = patternBytes(300_001)
            let name = FileNames.unique("from-parse.bin")
            try await Self.putRaw(f, name, try Self.parseEncrypt(plain, key: Self.key))
            let got = try await f.get("/parse/files/test-app/\(name)")
            #expect(got.status == 200)
            #expect(got.bytes == plain)
            let part = try await f.get("/parse/files/test-app/\(name)", headers: [.range: "bytes=100-199"])
            #expect(part.bytes == Array(plain[100..<200]))

            let wrong = FileNames.unique("wrong-key.bin")
            try await Self.putRaw(f, wrong, try Self.parseEncrypt(plain, key: "not the server's key"))
            let refused = try await f.get("/parse/files/test-app/\(wrong)")
            #expect(refused.status == 404)
            #expect(String(decoding: refused.bytes, as: UTF8.self) == "File not found.")
            let refusedRange = try await f.get("/parse/files/test-app/\(wrong)", headers: [.range: "bytes=0-9"])
            #expect(refusedRange.status == 404)

            for size in [5, 100_000] {
                let clear = FileNames.unique("clear.txt")
                try await Self.putRaw(f, clear, patternBytes(size))
                #expect(try await f.get("/parse/files/test-app/\(clear)").status == 404)
            }
            // The server still serves after all that.
            let after = try await f.stored("after.bin", plain)
            #expect(try await f.get(after.path).bytes == plain)
        }
    }

    @Test("rotating the key: old key to new, clear to encrypted, encrypted to clear; unreadable files are reported", arguments: stores, Backend.all)
    func rotation(_ backend: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(backend, database: database, { $0.files.encryptionKey = "new key" }) { f in
            let raw = Self.rawStore(f)
            let one = patternBytes(600_000)
            let two = Array("second file".utf8)
            let old = [FileNames.unique("one.bin"), FileNames.unique("two.txt")]
            try await Self.putRaw(f, old[0], one, key: "old key")
            try await Self.putRaw(f, old[1], two, key: "old key")
            let clear = FileNames.unique("clear.bin")
            try await Self.putRaw(f, clear, one)
            #expect(try await f.get("/parse/files/test-app/\(old[0])").status == 404)

            let rotation = FileKeyRotation(store: raw, oldKey: "old key", newKey: "new key")
            let summary = try await rotation.run(fileNames: old + [clear])
            #expect(summary.rotated == old)
            #expect(summary.notRotated == [clear])
            #expect(try await f.get("/parse/files/test-app/\(old[0])").bytes == one)
            #expect(try await f.get("/parse/files/test-app/\(old[1])").bytes == two)
            #expect(Self.parseDecrypt(try await Self.rawBytes(f, old[0]), key: "new key") == one)

            // Files stored before there was a key: no old key.
            let first = try await FileKeyRotation(store: raw, oldKey: nil, newKey: "new key").run(fileNames: [clear])
            #expect(first.rotated == [clear])
            #expect(try await f.get("/parse/files/test-app/\(clear)").bytes == one)

            // Every file (listing the store); those already under the new key cannot be read with the old one.
            let all = try await FileKeyRotation(store: raw, oldKey: "old key", newKey: "new key").run()
            #expect(all.rotated.isEmpty)
            #expect(Set(all.notRotated) == Set(old + [clear]))

            // Encryption removed.
            let removed = try await FileKeyRotation(store: raw, oldKey: "new key", newKey: nil).run(fileNames: [old[1]])
            #expect(removed.rotated == [old[1]])
            #expect(try await Self.rawBytes(f, old[1]) == two)
        }
    }

    @Test("parsley files rotate-key: old key from the environment, new key from the options; keys never printed")
    func rotateKeyCommand() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-rotate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let raw = LocalFileStore(root: dir.appendingPathComponent("files").path)
        try await raw.prepare()
        let plain = patternBytes(70_000)
        let (oldKey, newKey) = ("old-key-Zq81", "new-key-Yw27")
        for (name, key) in [("a_old.bin", Optional(oldKey)), ("b_clear.bin", nil)] {
            let store: any FileStore = key.map { EncryptedFileStore(inner: raw, encryptionKey: $0) } ?? raw
            var pending: [UInt8]? = plain
            _ = try await store.create(StoredFile(name: name), maxBytes: .max) {
                defer { pending = nil }
                return pending.map { ByteBuffer(bytes: $0) }
            }
        }
        func stored(_ name: String) async throws -> [UInt8] {
            let file = try #require(try await raw.info(name))
            var bytes: [UInt8] = []
            try await raw.read(file, range: 0..<file.size) { bytes += $0.readableBytesView }
            return bytes
        }
        let env = ["PARSLEY_DATA_DIR": dir.path, "PARSLEY_OLD_ENCRYPTION_KEY": oldKey, "PARSE_SERVER_ENCRYPTION_KEY": newKey]
        let first = try await AppFlowsSchemaApplyTests.parsley(["files", "rotate-key"], env)
        #expect(first.status == 1, "\(first.output)")
        #expect(first.output.contains("1 rotated, 1 not rotated"), "\(first.output)")
        #expect(!first.output.contains(oldKey) && !first.output.contains(newKey))
        #expect(Self.parseDecrypt(try await stored("a_old.bin"), key: newKey) == plain)
        #expect(try await stored("b_clear.bin") == plain)

        // The file stored in the clear: no old key.
        let second = try await AppFlowsSchemaApplyTests.parsley(
            ["files", "rotate-key", "--file-name", "b_clear.bin"], ["PARSLEY_DATA_DIR": dir.path, "PARSE_SERVER_ENCRYPTION_KEY": newKey])
        #expect(second.status == 0, "\(second.output)")
        #expect(Self.parseDecrypt(try await stored("b_clear.bin"), key: newKey) == plain)
        let nothing = try await AppFlowsSchemaApplyTests.parsley(["files", "rotate-key"], ["PARSLEY_DATA_DIR": dir.path])
        #expect(nothing.status == 2, "\(nothing.output)")
    }
}
