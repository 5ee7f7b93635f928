public import NIOCore
import ParsleyCore
public import ParsleyStorage

/// Files in the database, so several server nodes share them without a shared disk. Bytes are split into
/// chunks of 1 MB, each a row of `_FileChunks` (upload id, index, base64 text) written in its own short
/// transaction; the `_Files` row that names them is committed last, so a file is visible only when complete.
/// An upload that fails deletes its chunks; chunks a crash left behind are removed at the next start.
public struct DatabaseFileStore: FileStore {
    public let database: any SQLDatabase
    let rows: FileChunkStore
    static let chunkSize = 1 << 20
    static let staleUploadMilliseconds: Int64 = 24 * 3600 * 1000

    public init(database: any SQLDatabase) {
        self.database = database
        self.rows = FileChunkStore(database: database)
    }

    public func prepare() async throws {
        try await rows.prepare(deletingChunksOlderThan: ContinuousClockEpoch.millisecondsSince1970() - Self.staleUploadMilliseconds)
    }

    public func create(_ file: StoredFile, maxBytes: Int, next: () async throws -> ByteBuffer?) async throws -> StoredFile {
        guard FileNames.isValidStoredName(file.name) else { throw FileStoreError.invalidName }
        let upload = FileNames.randomHex(16)
        var stored = file
        var index: Int64 = 0
        func flush(_ buffer: ByteBuffer) async throws {
            try await rows.addChunk(
                upload: upload, index: index, data: FileBase64.encode(buffer), createdAt: ContinuousClockEpoch.millisecondsSince1970())
            index += 1
        }
        do {
            var pending = ByteBuffer()
            pending.reserveCapacity(Self.chunkSize)
            var size: Int64 = 0
            while var chunk = try await next() {
                size += Int64(chunk.readableBytes)
                if size > Int64(maxBytes) { throw FileStoreError.tooLarge(maxBytes) }
                while chunk.readableBytes > 0 {
                    var slice = chunk.readSlice(length: min(chunk.readableBytes, Self.chunkSize - pending.readableBytes))!
                    pending.writeBuffer(&slice)
                    if pending.readableBytes == Self.chunkSize {
                        try await flush(pending)
                        pending.clear()
                    }
                }
            }
            if pending.readableBytes > 0 { try await flush(pending) }
            stored.size = size
            // A kept client name (`preserveFileName`) may already be taken: the new upload replaces it, as in Parse Server.
            _ = try await rows.deleteFile(named: file.name)
            try await rows.addFile(
                name: file.name, upload: upload, size: size, chunkSize: Int64(Self.chunkSize), attributes: JSONWriter.string(stored.attributes))
        } catch {
            if index > 0 { try? await rows.deleteChunks(upload: upload) }
            throw error
        }
        return stored
    }

    struct Record {
        var file: StoredFile
        var upload: String
        var chunkSize: Int64
    }

    func record(_ name: String) async throws -> Record? {
        guard FileNames.isValidStoredName(name), let row = try await rows.file(named: name) else { return nil }
        var file = StoredFile(name: name, size: row.size)
        if let text = row.attributes, let json = try? JSONParser.parse(text) { file.read(attributes: json) }
        return Record(file: file, upload: row.upload, chunkSize: row.chunkSize)
    }

    public func info(_ name: String) async throws -> StoredFile? {
        try await record(name)?.file
    }

    public func read(_ file: StoredFile, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws {
        guard let record = try await record(file.name), record.chunkSize > 0 else { throw FileStoreError.vanished }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let index = offset / record.chunkSize
            guard let text = try await rows.chunk(upload: record.upload, index: index), var bytes = FileBase64.decode(text) else {
                throw FileStoreError.vanished
            }
            let start = Int(offset - index * record.chunkSize)
            let end = Int(min(Int64(bytes.readableBytes), range.upperBound - index * record.chunkSize))
            guard start < end, let slice = bytes.getSlice(at: bytes.readerIndex + start, length: end - start) else {
                throw FileStoreError.vanished
            }
            bytes = slice
            offset += Int64(bytes.readableBytes)
            try await write(bytes)
        }
    }

    public func list(after: String?, limit: Int) async throws -> [String] {
        try await rows.names(after: after, limit: limit)
    }

    public func delete(_ name: String) async throws -> Bool {
        guard FileNames.isValidStoredName(name) else { throw FileStoreError.invalidName }
        return try await rows.deleteFile(named: name)
    }
}
