public import NIOCore
import ParsleyCore
public import ParsleyStorage

/// Files in the database, so several server nodes share them without a shared disk. Bytes are split into
/// chunks of 1 MB, each a row of `_FileChunks` (upload id, index, base64 text) written in its own short
/// transaction; the `_Files` row that names them is committed last, so a file is visible only when complete.
/// An upload that fails deletes its chunks; chunks a crash left behind are removed at the next start.
public struct DatabaseFileStore: FileStore {
    public let database: any SQLDatabase
    static let chunkSize = 1 << 20
    static let staleUploadMilliseconds: Int64 = 24 * 3600 * 1000

    public init(database: any SQLDatabase) {
        self.database = database
    }

    var files: String { database.dialect.quote("_Files") }
    var chunks: String { database.dialect.quote("_FileChunks") }

    public func prepare() async throws {
        let (files, chunks) = (self.files, self.chunks)
        let cutoff = ContinuousClockEpoch.millisecondsSince1970() - Self.staleUploadMilliseconds
        _ = try await database.write { db in
            try await db.query(SQLFragment(
                "CREATE TABLE IF NOT EXISTS \(files) (name TEXT PRIMARY KEY, upload TEXT NOT NULL, size BIGINT NOT NULL, "
                    + "chunkSize BIGINT NOT NULL, attributes TEXT NOT NULL)"))
            try await db.query(SQLFragment(
                "CREATE TABLE IF NOT EXISTS \(chunks) (upload TEXT NOT NULL, idx BIGINT NOT NULL, data TEXT NOT NULL, "
                    + "createdAt BIGINT NOT NULL, PRIMARY KEY (upload, idx))"))
            try await db.query(SQLFragment(
                "DELETE FROM \(chunks) WHERE createdAt < ? AND upload NOT IN (SELECT upload FROM \(files))", [.integer(cutoff)]))
        }
    }

    public func create(_ file: StoredFile, maxBytes: Int, next: () async throws -> ByteBuffer?) async throws -> StoredFile {
        guard FileNames.isValidStoredName(file.name) else { throw FileStoreError.invalidName }
        let upload = FileNames.randomHex(16)
        let (files, chunks) = (self.files, self.chunks)
        var stored = file
        var index: Int64 = 0
        func flush(_ buffer: ByteBuffer) async throws {
            let row = SQLFragment(
                "INSERT INTO \(chunks) (upload, idx, data, createdAt) VALUES (?, ?, ?, ?)",
                [.text(upload), .integer(index), .text(FileBase64.encode(buffer)), .integer(ContinuousClockEpoch.millisecondsSince1970())])
            _ = try await database.write { db in try await db.query(row) }
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
            let record = SQLFragment(
                "INSERT INTO \(files) (name, upload, size, chunkSize, attributes) VALUES (?, ?, ?, ?, ?)",
                [.text(file.name), .text(upload), .integer(size), .integer(Int64(Self.chunkSize)), .text(JSONWriter.string(stored.attributes))])
            _ = try await database.write { db in try await db.query(record) }
        } catch {
            if index > 0 {
                _ = try? await database.write { db in
                    try await db.query(SQLFragment("DELETE FROM \(chunks) WHERE upload = ?", [.text(upload)]))
                }
            }
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
        guard FileNames.isValidStoredName(name) else { return nil }
        var q = SQLFragment("SELECT upload, size, chunkSize, attributes FROM \(files) WHERE name = ?", [.text(name)])
        q.isPointLookup = true
        let statement = q
        let rows = try await database.read { db in try await db.query(statement) }
        guard let row = rows.first, case .text(let upload) = row[0], case .integer(let size) = row[1], case .integer(let chunkSize) = row[2]
        else { return nil }
        var file = StoredFile(name: name, size: size)
        if case .text(let text) = row[3], let json = try? JSONParser.parse(text) { file.read(attributes: json) }
        return Record(file: file, upload: upload, chunkSize: chunkSize)
    }

    public func info(_ name: String) async throws -> StoredFile? {
        try await record(name)?.file
    }

    public func read(_ file: StoredFile, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws {
        guard let record = try await record(file.name), record.chunkSize > 0 else { throw FileStoreError.vanished }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let index = offset / record.chunkSize
            let statement = SQLFragment(
                "SELECT data FROM \(chunks) WHERE upload = ? AND idx = ?", [.text(record.upload), .integer(index)])
            let rows = try await database.read { db in try await db.query(statement) }
            guard case .text(let text)? = rows.first?.first, var bytes = FileBase64.decode(text) else { throw FileStoreError.vanished }
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

    public func delete(_ name: String) async throws -> Bool {
        guard FileNames.isValidStoredName(name) else { throw FileStoreError.invalidName }
        let (files, chunks) = (self.files, self.chunks)
        return try await database.write { db in
            let rows = try await db.query(SQLFragment("SELECT upload FROM \(files) WHERE name = ?", [.text(name)]))
            guard case .text(let upload)? = rows.first?.first else { return false }
            try await db.query(SQLFragment("DELETE FROM \(files) WHERE name = ?", [.text(name)]))
            try await db.query(SQLFragment("DELETE FROM \(chunks) WHERE upload = ?", [.text(upload)]))
            return true
        }
    }
}
