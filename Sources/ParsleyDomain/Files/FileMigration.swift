import NIOCore

/// Copies every file of one store into another (`parsley files migrate`), streaming each in pieces of
/// `pieceBytes` (never a whole file in memory). Files the target already has are skipped, so an interrupted run
/// is simply run again. Meant to run while servers serve with the target as `filesAdapter` and the source as
/// `filesFallbackAdapter` (`FallbackFileStore`): reads find every file throughout.
public struct FileMigration: Sendable {
    public let source: any FileStore
    public let target: any FileStore
    /// Delete each file from the source once the target holds all of its bytes.
    public var deletingSource = false
    public var pieceBytes = 8 << 20

    public init(source: any FileStore, target: any FileStore, deletingSource: Bool = false) {
        self.source = source
        self.target = target
        self.deletingSource = deletingSource
    }

    public struct Summary: Sendable, Equatable {
        public var copied = 0
        public var skipped = 0
        public var bytes: Int64 = 0
        public init() {}
    }

    /// - Parameter progress: called after each file with its name and whether it was copied.
    public func run(progress: (String, Bool) -> Void = { _, _ in }) async throws -> Summary {
        var summary = Summary()
        var after: String?
        while true {
            let names = try await source.list(after: after, limit: 500)
            guard let last = names.last else { break }
            after = last
            for name in names {
                guard let file = try await source.info(name) else { continue }  // deleted meanwhile
                if let existing = try await target.info(name), existing.size == file.size {
                    summary.skipped += 1
                    progress(name, false)
                } else {
                    let stored = try await copy(file)
                    guard stored.size == file.size else { throw FileStoreError.io("\(name): copied \(stored.size) of \(file.size) bytes") }
                    summary.copied += 1
                    summary.bytes += stored.size
                    progress(name, true)
                }
                if deletingSource { _ = try await source.delete(name) }
            }
        }
        return summary
    }

    func copy(_ file: StoredFile) async throws -> StoredFile {
        try await Self.copy(file, from: source, to: target, pieceBytes: pieceBytes)
    }

    /// Streams one file from `source` into `target` under the same name, after `source.check` (an encrypted
    /// source's tag); `target` replaces a file it already has.
    static func copy(_ file: StoredFile, from source: any FileStore, to target: any FileStore, pieceBytes: Int) async throws -> StoredFile {
        try await source.check(file)
        var offset: Int64 = 0
        let piece = Int64(pieceBytes)
        return try await target.create(file, maxBytes: Int.max) {
            guard offset < file.size else { return nil }
            let end = min(file.size, offset + piece)
            var buffer = ByteBuffer()
            buffer.reserveCapacity(Int(end - offset))
            try await source.read(file, range: offset..<end) { chunk in buffer.writeImmutableBuffer(chunk) }
            offset = end
            return buffer
        }
    }
}
