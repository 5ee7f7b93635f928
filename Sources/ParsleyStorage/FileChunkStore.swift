import ParsleyCore

/// Files as rows, for the database file adapter: `_Files` names each complete file (its upload id, size, chunk
/// size and attributes as JSON text) and `_FileChunks` holds the bytes of an upload as numbered chunks of text.
/// Every operation is its own short statement or transaction; the file adapter decides the order.
public struct FileChunkStore: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) {
        self.database = database
    }

    /// A stored file's row in `_Files`.
    public struct FileRecord: Sendable, Equatable {
        public var upload: String
        public var size: Int64
        public var chunkSize: Int64
        /// JSON text (content type, metadata, tags, creation time); nil when the column holds no text.
        public var attributes: String?
    }

    var files: String { database.dialect.table("_Files") }
    var chunks: String { database.dialect.table("_FileChunks") }

    /// Creates both tables if needed and deletes chunks older than `staleBefore` (milliseconds since 1970) that no
    /// file names: uploads a crash interrupted.
    public func prepare(deletingChunksOlderThan staleBefore: Int64) async throws {
        let (files, chunks) = (self.files, self.chunks)
        let lock = database.dialect.tableCreationLock
        _ = try await database.write { db in
            if let lock { try await db.query(lock) }
            try await db.query(
                SQLFragment(
                    unsafeSQL: "CREATE TABLE IF NOT EXISTS \(files) (name TEXT PRIMARY KEY, upload TEXT NOT NULL, size BIGINT NOT NULL, "
                        + "chunkSize BIGINT NOT NULL, attributes TEXT NOT NULL)"))
            try await db.query(
                SQLFragment(
                    unsafeSQL: "CREATE TABLE IF NOT EXISTS \(chunks) (upload TEXT NOT NULL, idx BIGINT NOT NULL, data TEXT NOT NULL, "
                        + "createdAt BIGINT NOT NULL, PRIMARY KEY (upload, idx))"))
            try await db.query(
                SQLFragment(
                    unsafeSQL: "DELETE FROM \(chunks) WHERE createdAt < ? AND upload NOT IN (SELECT upload FROM \(files))", [.integer(staleBefore)]))
        }
    }

    /// Stores chunk `index` of an upload in its own transaction.
    public func addChunk(upload: String, index: Int64, data: String, createdAt: Int64) async throws {
        let row = SQLFragment(
            unsafeSQL: "INSERT INTO \(chunks) (upload, idx, data, createdAt) VALUES (?, ?, ?, ?)",
            [.text(upload), .integer(index), .text(data), .integer(createdAt)])
        _ = try await database.write { db in try await db.query(row) }
    }

    /// Names a complete upload as file `name`, which makes it visible.
    /// - Throws: `StoreError.uniqueViolation` when a file of that name exists.
    public func addFile(name: String, upload: String, size: Int64, chunkSize: Int64, attributes: String) async throws {
        let row = SQLFragment(
            unsafeSQL: "INSERT INTO \(files) (name, upload, size, chunkSize, attributes) VALUES (?, ?, ?, ?, ?)",
            [.text(name), .text(upload), .integer(size), .integer(chunkSize), .text(attributes)])
        _ = try await database.write { db in try await db.query(row) }
    }

    /// Deletes the chunks of an upload (one that failed).
    public func deleteChunks(upload: String) async throws {
        let statement = SQLFragment(unsafeSQL: "DELETE FROM \(chunks) WHERE upload = ?", [.text(upload)])
        _ = try await database.write { db in try await db.query(statement) }
    }

    /// The row of file `name`; nil when there is none.
    public func file(named name: String) async throws -> FileRecord? {
        var lookup = SQLFragment(unsafeSQL: "SELECT upload, size, chunkSize, attributes FROM \(files) WHERE name = ?", [.text(name)])
        lookup.isPointLookup = true
        let statement = lookup
        let rows = try await database.read { db in try await db.query(statement) }
        guard let row = rows.first, case .text(let upload) = row[0], case .integer(let size) = row[1], case .integer(let chunkSize) = row[2]
        else { return nil }
        var attributes: String?
        if case .text(let text) = row[3] { attributes = text }
        return FileRecord(upload: upload, size: size, chunkSize: chunkSize, attributes: attributes)
    }

    /// Names of stored files after `after` (all when nil), in byte order, at most `limit`.
    public func names(after: String?, limit: Int) async throws -> [String] {
        let statement = SQLFragment(
            unsafeSQL: "SELECT name FROM \(files) WHERE name > ? ORDER BY name LIMIT ?", [.text(after ?? ""), .integer(Int64(limit))])
        let rows = try await database.read { db in try await db.query(statement) }
        return rows.compactMap { row in
            guard case .text(let name)? = row.first else { return nil }
            return name
        }
    }

    /// The text of chunk `index` of an upload; nil when there is none.
    public func chunk(upload: String, index: Int64) async throws -> String? {
        let statement = SQLFragment(unsafeSQL: "SELECT data FROM \(chunks) WHERE upload = ? AND idx = ?", [.text(upload), .integer(index)])
        let rows = try await database.read { db in try await db.query(statement) }
        guard case .text(let text)? = rows.first?.first else { return nil }
        return text
    }

    /// Deletes file `name` and its chunks in one transaction; false when there is no such file.
    public func deleteFile(named name: String) async throws -> Bool {
        let (files, chunks) = (self.files, self.chunks)
        return try await database.write { db in
            let rows = try await db.query(SQLFragment(unsafeSQL: "SELECT upload FROM \(files) WHERE name = ?", [.text(name)]))
            guard case .text(let upload)? = rows.first?.first else { return false }
            try await db.query(SQLFragment(unsafeSQL: "DELETE FROM \(files) WHERE name = ?", [.text(name)]))
            try await db.query(SQLFragment(unsafeSQL: "DELETE FROM \(chunks) WHERE upload = ?", [.text(upload)]))
            return true
        }
    }
}
