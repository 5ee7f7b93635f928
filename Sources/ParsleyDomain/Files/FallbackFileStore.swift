public import NIOCore

/// A store in the middle of a move (`parsley files migrate`): new files go to `primary`; a file `primary` does not
/// have yet is read from `fallback`, so no file goes missing while the copy runs; deletes remove it from both.
/// File URLs all go through the server (`/files/<appId>/<name>`) during the move, even when `primary` could serve
/// them directly, because a file not yet copied would not be found there.
public struct FallbackFileStore: FileStore {
    public let primary: any FileStore
    public let fallback: any FileStore

    public init(primary: any FileStore, fallback: any FileStore) {
        self.primary = primary
        self.fallback = fallback
    }

    public func prepare() async throws {
        try await primary.prepare()
        try await fallback.prepare()
    }

    public func create(_ file: StoredFile, maxBytes: Int, next: () async throws -> ByteBuffer?) async throws -> StoredFile {
        try await primary.create(file, maxBytes: maxBytes, next: next)
    }

    public func info(_ name: String) async throws -> StoredFile? {
        if let file = try await primary.info(name) { return file }
        return try await fallback.info(name)
    }

    public func read(_ file: StoredFile, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws {
        var written = false
        do {
            try await primary.read(file, range: range) { chunk in
                written = true
                try await write(chunk)
            }
        } catch FileStoreError.vanished where !written {
            try await fallback.read(file, range: range, into: write)
        }
    }

    public func check(_ file: StoredFile) async throws {
        if try await primary.info(file.name) != nil {
            try await primary.check(file)
        } else {
            try await fallback.check(file)
        }
    }

    public func delete(_ name: String) async throws -> Bool {
        let inPrimary = try await primary.delete(name)
        let inFallback = try await fallback.delete(name)
        return inPrimary || inFallback
    }

    public func directURL(_ name: String) -> String? { nil }

    public func list(after: String?, limit: Int) async throws -> [String] {
        try await primary.list(after: after, limit: limit)
    }
}
