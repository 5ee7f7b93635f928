public import ParsleyStorage

/// The outside world as the domain sees it: the adapters it builds its services with, each behind a protocol
/// the domain owns. The concrete ones (an HTTP client for webhooks, GitHub's API for `authData`, a folder on disk
/// for files) live in ParsleyAdapters, whose `Adapters.standard` the server, the benchmarks and the tests pass to
/// `ParseServices`. Mails are an option (`ParseServerOptions.email.adapter`), push providers too
/// (`ParseServerOptions.push.providers`): the server builds both from its settings.
public struct Adapters: Sendable {
    /// Carries cloud code's webhook calls.
    public var webhookTransport: any WebhookTransport
    /// The `authData` providers besides the built-in `anonymous`, for these account options.
    public var identityProviders: @Sendable (AccountOptions) -> [any AuthProvider]
    /// The store of the `filesystem` files adapter: files in the folder `root`.
    public var makeFolderFileStore: @Sendable (_ root: String) -> any FileStore

    public init(
        webhookTransport: any WebhookTransport, identityProviders: @escaping @Sendable (AccountOptions) -> [any AuthProvider],
        makeFolderFileStore: @escaping @Sendable (_ root: String) -> any FileStore
    ) {
        self.webhookTransport = webhookTransport
        self.identityProviders = identityProviders
        self.makeFolderFileStore = makeFolderFileStore
    }

    /// The file store `options.files.adapter` names: a folder (`files.directory`, or `parsley-files/<app id>` in
    /// the temporary folder), the database's `_Files` tables, or the app's own store.
    /// With `files.fallbackAdapter` (a move between stores), reads also find the files still in the old one.
    public func fileStore(for options: ParseServerOptions, database: any SQLDatabase) -> any FileStore {
        let primary = fileStore(options.files.adapter, options: options, database: database)
        guard let fallback = options.files.fallbackAdapter else { return primary }
        return FallbackFileStore(primary: primary, fallback: fileStore(fallback, options: options, database: database))
    }

    /// The store of one adapter; the folder and the database encrypt with `files.encryptionKey` when it is set
    /// (`EncryptedFileStore`), an adapter of the app's own is used as it is.
    public func fileStore(_ adapter: FilesAdapter, options: ParseServerOptions, database: any SQLDatabase) -> any FileStore {
        let plain: any FileStore
        switch adapter {
        case .filesystem: plain = makeFolderFileStore(options.files.directory ?? FileService.defaultDirectory(options.applicationId))
        case .database: plain = DatabaseFileStore(database: database)
        case .custom(let custom): return custom
        }
        guard let key = options.files.encryptionKey else { return plain }
        return EncryptedFileStore(inner: plain, encryptionKey: key)
    }
}
