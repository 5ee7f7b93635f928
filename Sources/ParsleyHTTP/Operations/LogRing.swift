import Foundation
public import Logging
import Synchronization

/// The most recent log lines of this process (every logger the log handler serves writes here too), for
/// `GET /scriptlog` and the dashboard's log page. A fixed ring: the oldest line goes when a new one comes.
public final class LogRing: Sendable {
    /// One line as logged; its text is made only when someone reads it (`message`), so logging stays cheap.
    public struct Entry: Sendable {
        public var level: Logger.Level
        var label: String
        var text: Logger.Message
        var metadata: Logger.Metadata
        /// An access log line (then `text` and `metadata` are empty).
        var access: AccessRecord?
        /// Milliseconds since 1970.
        public var time: Int64
        /// Its place among every line this process logged (the dashboard's live tail asks for those after one).
        public var sequence: Int64 = 0

        /// `label: message key=value ...`, secrets removed.
        public var message: String {
            if let access {
                var bytes = Array("\(label): request ".utf8)
                access.appendLogfmtFields(to: &bytes)
                return String(decoding: bytes, as: UTF8.self)
            }
            var line = "\(label): \(text.description)"
            for (k, v) in metadata.sorted(by: { $0.key < $1.key }) { line += " \(k)=\(ParsleyLogHandler.logfmtValue(v.description))" }
            return LogRedactor.shared.redact(line)
        }
    }

    /// The process's ring (the log handler is process-wide too).
    public static let shared = LogRing(capacity: 1_000)

    private struct State {
        var entries: [Entry] = []
        var next = 0
        var capacity: Int
        var appended: Int64 = 0
    }
    private let state: Mutex<State>

    public init(capacity: Int) { state = Mutex(State(capacity: max(1, capacity))) }

    /// Keeps this many lines from now on (`PARSLEY_LOG_BUFFER`).
    public func resize(_ capacity: Int) {
        state.withLock { s in
            let kept = ordered(s).suffix(max(1, capacity))
            s = State(entries: Array(kept), next: 0, capacity: max(1, capacity), appended: s.appended)
        }
    }

    public func append(_ level: Logger.Level, label: String, _ message: Logger.Message, metadata: Logger.Metadata, time: Int64? = nil) {
        append(Entry(level: level, label: label, text: message, metadata: metadata, time: time ?? LogText.nowMilliseconds()))
    }

    func append(access: AccessRecord, label: String, time: Int64) {
        append(Entry(level: .info, label: label, text: "request", metadata: [:], access: access, time: time))
    }

    private func append(_ entry: Entry) {
        var entry = entry
        state.withLock { s in
            s.appended += 1
            entry.sequence = s.appended
            if s.entries.count < s.capacity {
                s.entries.append(entry)
            } else {
                s.entries[s.next] = entry
                s.next = (s.next + 1) % s.capacity
            }
        }
    }

    /// Lines at `minimum` or more severe, between `from` and `until` (ms), newest first unless `ascending`, at most
    /// `limit`.
    public func recent(minimum: Logger.Level, from: Int64?, until: Int64?, limit: Int, ascending: Bool) -> [Entry] {
        let all = state.withLock { ordered($0) }
        var picked = all.filter { $0.level >= minimum && $0.time >= (from ?? .min) && $0.time <= (until ?? .max) }
        if !ascending { picked.reverse() }
        return Array(picked.prefix(max(0, limit)))
    }

    /// Every line kept, oldest first.
    func all() -> [Entry] { state.withLock { ordered($0) } }

    private func ordered(_ s: State) -> [Entry] {
        s.entries.count < s.capacity ? s.entries : Array(s.entries[s.next...] + s.entries[..<s.next])
    }
}
