/// Parse Server's `rotateEncryptionKey({oldKey, fileNames})` for files at rest (`parsley files rotate-key`): each
/// file is read with the old key (or as stored in the clear when there was none) and written again with the new key
/// (or in the clear when there is none: encryption removed), under the same name. A file that cannot be read with
/// the old key (a wrong key, already rotated) is left as it is and reported, as Parse Server does.
public struct FileKeyRotation: Sendable {
    /// The store without encryption (the folder or the database tables).
    public let store: any FileStore
    public let oldKey: String?
    public let newKey: String?
    public var pieceBytes = 8 << 20

    public init(store: any FileStore, oldKey: String?, newKey: String?) {
        self.store = store
        self.oldKey = oldKey
        self.newKey = newKey
    }

    public struct Summary: Sendable, Equatable {
        public var rotated: [String] = []
        public var notRotated: [String] = []
        public init() {}
    }

    /// - Parameter fileNames: the files to rotate; nil: every stored file.
    public func run(fileNames: [String]? = nil, progress: (String, Bool) -> Void = { _, _ in }) async throws -> Summary {
        let source = oldKey.map { EncryptedFileStore(inner: store, encryptionKey: $0) as any FileStore } ?? store
        let target = newKey.map { EncryptedFileStore(inner: store, encryptionKey: $0) as any FileStore } ?? store
        var names = fileNames ?? []
        if fileNames == nil {
            var after: String?
            while true {
                let page = try await store.list(after: after, limit: 500)
                guard let last = page.last else { break }
                names += page
                after = last
            }
        }
        var summary = Summary()
        for name in names {
            do {
                guard let file = try await source.info(name) else { throw FileStoreError.vanished }
                _ = try await FileMigration.copy(file, from: source, to: target, pieceBytes: pieceBytes)
                summary.rotated.append(name)
                progress(name, true)
            } catch {
                summary.notRotated.append(name)
                progress(name, false)
            }
        }
        return summary
    }
}
