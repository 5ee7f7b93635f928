import Synchronization

/// Requests answered since the start: in all, with a client error (4xx), with a server error (5xx), and how long
/// they took as a histogram of 64 buckets (each half a power of two of microseconds wide). The request path pays
/// three relaxed atomic increments and no allocation; `MetricsSampler` reads the totals once a second.
final class RequestCounters: Sendable {
    let started = ContinuousClock.now
    private let answered = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)
    private let latency: InlineArray<64, Atomic<Int>>

    init() { latency = InlineArray { _ in Atomic(0) } }

    func count(status: Int, duration: Duration) {
        answered.add(1, ordering: .relaxed)
        if status >= 500 {
            failed.add(1, ordering: .relaxed)
        } else if status >= 400 {
            refused.add(1, ordering: .relaxed)
        }
        latency[Self.bucket(duration)].add(1, ordering: .relaxed)
    }

    var total: Int { answered.load(ordering: .relaxed) }
    var serverErrors: Int { failed.load(ordering: .relaxed) }
    var clientErrors: Int { refused.load(ordering: .relaxed) }

    /// The latency histogram's counts so far.
    var latencyCounts: [Int] {
        var out = [Int](repeating: 0, count: 64)
        for i in 0..<64 { out[i] = latency[i].load(ordering: .relaxed) }
        return out
    }

    /// The bucket of `duration`: twice the power of two of its microseconds, plus one in the upper half of that power.
    static func bucket(_ duration: Duration) -> Int {
        let (seconds, atto) = duration.components
        let micros = max(1, seconds &* 1_000_000 &+ atto / 1_000_000_000_000)
        let power = 63 - micros.leadingZeroBitCount
        let upperHalf = power > 0 ? Int((micros >> (power - 1)) & 1) : 0
        return min(63, 2 * power + upperHalf)
    }

    /// The longest duration in bucket `i`, in milliseconds.
    static func upperMilliseconds(_ i: Int) -> Double {
        Double(Int64(1) << Int64(i / 2)) * (1.5 + Double(i % 2) / 2) / 1000
    }

    /// The duration (ms) below which `fraction` of the counted requests were answered (0 when none were).
    static func percentile(_ fraction: Double, of counts: [Int]) -> Double {
        let total = counts.reduce(0, +)
        guard total > 0 else { return 0 }
        let wanted = max(1, Int((Double(total) * fraction).rounded(.up)))
        var seen = 0
        for (i, n) in counts.enumerated() {
            seen += n
            if seen >= wanted { return upperMilliseconds(i) }
        }
        return upperMilliseconds(counts.count - 1)
    }
}
