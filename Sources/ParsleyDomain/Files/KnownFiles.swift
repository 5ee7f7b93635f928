import NIOConcurrencyHelpers

/// Names of stored files, for the check that the File values of a write name files that exist
/// (`FileService.checkReferences`): a name found is trusted for `CacheTrust.files` from when it was looked up, so a
/// client saving the same picture again does not ask the store each time. A file deleted through this process is
/// forgotten at once; one deleted on another node is refused everywhere within the trust.
public final class KnownFiles: Sendable {
    private let names = NIOLockedValueBox(TrustedEntries<Void>())
    static let trust = CacheTrust.milliseconds(CacheTrust.files)

    public init() {}

    /// Whether the name is known at `now`; if not, the generation a lookup starting now stores its answer with.
    func lookup(_ name: String, now: Int64) -> (known: Bool, generation: UInt64) {
        names.withLockedValue { ($0.value(name, now: now) != nil, $0.generation) }
    }

    /// A lookup that started at `started` (with `generation`) found the file.
    func insert(_ name: String, started: Int64, generation: UInt64) {
        names.withLockedValue { $0.store((), for: name, started: started, trust: Self.trust, generation: generation) }
    }

    func forget(_ name: String) {
        names.withLockedValue { $0.forget([name]) }
    }
}
