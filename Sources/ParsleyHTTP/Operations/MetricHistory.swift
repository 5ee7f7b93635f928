import ParsleyCore
import ParsleyDomain
import Synchronization

/// What this process did, second by second, for the dashboard's health charts: the last hour at one point a
/// second, and since the start at one point a minute (when those fill their ring, neighbouring points merge and
/// each stands for twice as long, so memory stays bounded however long the process runs). Fed once a second by
/// `MetricsSampler`; nothing here runs on the request path.
final class MetricHistory: Sendable {
    /// One point: counts over its span, and the highest value of each gauge seen in it.
    struct Sample: Sendable {
        /// Seconds since 1970 at the start of the span.
        var time: Int64 = 0
        var requests = 0
        var clientErrors = 0
        var serverErrors = 0
        /// Milliseconds.
        var p50: Float = 0
        var p99: Float = 0
        var writesQueued: Int32 = 0
        var readersBusy: Int32 = 0
        var readers: Int32 = 0
        var liveQueryConnections: Int32 = 0
        var liveQueryEvents = 0
        var pushSent = 0
        var pushFailed = 0

        /// `other`'s counts added and the higher of each gauge kept (latency: the mean p50, the higher p99).
        mutating func merge(_ other: Sample) {
            requests += other.requests
            clientErrors += other.clientErrors
            serverErrors += other.serverErrors
            p50 = (p50 + other.p50) / 2
            p99 = max(p99, other.p99)
            writesQueued = max(writesQueued, other.writesQueued)
            readersBusy = max(readersBusy, other.readersBusy)
            readers = max(readers, other.readers)
            liveQueryConnections = max(liveQueryConnections, other.liveQueryConnections)
            liveQueryEvents += other.liveQueryEvents
            pushSent += other.pushSent
            pushFailed += other.pushFailed
        }
    }

    static let recentCapacity = 3600
    static let longCapacity = 720

    private struct State {
        var recent: [Sample] = []
        var next = 0
        var long: [Sample] = []
        var longStep: Int64 = 60
        /// The long ring's point being filled, and the latency counts behind it.
        var pending: Sample?
        var pendingLatency = [Int](repeating: 0, count: 64)
    }
    private let state = Mutex(State())
    let startedAt = ParseDate.now.milliseconds

    /// Adds the second that starts at `sample.time`, whose latency histogram is `latency`.
    func add(_ sample: Sample, latency: [Int]) {
        state.withLock { s in
            if s.recent.count < Self.recentCapacity {
                s.recent.append(sample)
            } else {
                s.recent[s.next] = sample
                s.next = (s.next + 1) % Self.recentCapacity
            }
            if var pending = s.pending, pending.time == sample.time - sample.time % s.longStep {
                pending.merge(sample)  // (its latency comes from the counts when it closes)
                for i in 0..<64 { s.pendingLatency[i] += latency[i] }
                s.pending = pending
            } else {
                if let pending = s.pending { Self.close(pending, latency: s.pendingLatency, into: &s) }
                var fresh = sample
                fresh.time = sample.time - sample.time % s.longStep  // (closing may have doubled the step)
                s.pending = fresh
                s.pendingLatency = latency
            }
        }
    }

    private static func close(_ pending: Sample, latency: [Int], into s: inout State) {
        var point = pending
        point.p50 = Float(RequestCounters.percentile(0.5, of: latency))
        point.p99 = Float(RequestCounters.percentile(0.99, of: latency))
        s.long.append(point)
        guard s.long.count >= longCapacity else { return }
        var merged: [Sample] = []
        merged.reserveCapacity(longCapacity)
        var i = 0
        while i < s.long.count {
            var a = s.long[i]
            if i + 1 < s.long.count { a.merge(s.long[i + 1]) }
            merged.append(a)
            i += 2
        }
        s.long = merged
        s.longStep *= 2
    }

    /// The last hour (`longRange` false) or since the start, as columns: `{"step", "time": [...], "requests": [...],
    /// ...}`; `since` (seconds) keeps only later points. A process up for less than an hour answers its seconds for both.
    func json(longRange: Bool, since: Int64?, upSeconds: Int) -> JSONValue {
        let (points, step): ([Sample], Int64) = state.withLock { s in
            if longRange, upSeconds > Self.recentCapacity { return (s.long, s.longStep) }
            let ordered = s.recent.count < Self.recentCapacity ? s.recent : Array(s.recent[s.next...] + s.recent[..<s.next])
            return (ordered, 1)
        }
        let picked = since.map { after in points.filter { $0.time > after } } ?? points
        func column<T>(_ value: (Sample) -> T, _ wrap: (T) -> JSONValue) -> JSONValue { .array(picked.map { wrap(value($0)) }) }
        let int: (Int) -> JSONValue = { .int(Int64($0)) }
        let int32: (Int32) -> JSONValue = { .int(Int64($0)) }
        let ms: (Float) -> JSONValue = { .double((Double($0) * 100).rounded() / 100) }
        return [
            "step": .int(step), "startedAt": .int(startedAt), "now": .int(ParseDate.now.milliseconds),
            "time": column(\.time) { .int($0) },
            "requests": column(\.requests, int), "clientErrors": column(\.clientErrors, int), "serverErrors": column(\.serverErrors, int),
            "p50": column(\.p50, ms), "p99": column(\.p99, ms),
            "writesQueued": column(\.writesQueued, int32), "readersBusy": column(\.readersBusy, int32), "readers": column(\.readers, int32),
            "liveQueryConnections": column(\.liveQueryConnections, int32), "liveQueryEvents": column(\.liveQueryEvents, int),
            "pushSent": column(\.pushSent, int), "pushFailed": column(\.pushFailed, int),
        ]
    }
}
