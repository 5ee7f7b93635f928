import NIOConcurrencyHelpers

/// Names of stored files, for the check that the File values of a write name files that exist
/// (`FileService.checkReferences`): a name found is trusted for `CacheTrust.files` from when it was looked up, so a
/// client saving the same picture again does not ask the store each time. A file deleted through this process is
/// forgotten at once; one deleted on another node is refused everywhere within the trust.
public final class KnownFiles: Sendable {
    private let names = NIOLockedValueBox([String: Int64]())
    static let limit = 10_000
    static let trust = CacheTrust.milliseconds(CacheTrust.files)

    public init() {}

    func contains(_ name: String, now: Int64) -> Bool {
        names.withLockedValue { ($0[name] ?? 0) > now }
    }

    /// `since`: when the lookup that found the file started.
    func insert(_ name: String, since: Int64) {
        names.withLockedValue { n in
            if n.count >= Self.limit { n.removeAll() }
            n[name] = since + Self.trust
        }
    }

    func forget(_ name: String) {
        _ = names.withLockedValue { $0.removeValue(forKey: name) }
    }
}
