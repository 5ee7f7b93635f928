/// What a server process read from the database and uses for a while without asking again (`CacheTrust`): values by
/// key, each trusted until a time (milliseconds since 1970) counted from when its read started. At most `limit` are
/// held; when full, all are dropped and the next requests read again.
///
/// `generation` counts what was forgotten. A read notes it before it starts and stores what it found only if nothing
/// was forgotten meanwhile: a lookup that began before a session was revoked, or before a file was deleted, does not
/// bring the old answer back. Keep it in a lock (`NIOLockedValueBox`); it has no lock of its own.
struct TrustedEntries<Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        var value: Value
        var until: Int64
    }
    private var entries: [String: Entry] = [:]
    private(set) var generation: UInt64 = 0
    let limit: Int

    init(limit: Int = 10_000) {
        self.limit = limit
    }

    /// The value of `key` while it is still trusted at `now`.
    func value(_ key: String, now: Int64) -> Value? {
        guard let e = entries[key], e.until > now else { return nil }
        return e.value
    }

    /// Stores what a read found that started at `started` with `generation` (read before it started), trusted for
    /// `trust` milliseconds from its start; nothing when something was forgotten since.
    mutating func store(_ value: Value, for key: String, started: Int64, trust: Int64, generation readGeneration: UInt64) {
        guard readGeneration == generation else { return }
        if entries.count >= limit, entries[key] == nil { entries.removeAll() }
        entries[key] = Entry(value: value, until: started + trust)
    }

    /// Replaces the value of a key that is held, keeping how long it is trusted.
    mutating func replace(_ key: String, with value: Value) {
        entries[key]?.value = value
    }

    func holds(_ key: String) -> Bool { entries[key] != nil }

    /// Forgets these keys; reads under way do not store theirs.
    mutating func forget(_ keys: some Sequence<String>) {
        for key in keys { entries[key] = nil }
        generation &+= 1
    }

    /// Forgets everything; reads under way do not store theirs.
    mutating func forgetAll() {
        entries.removeAll()
        generation &+= 1
    }
}
