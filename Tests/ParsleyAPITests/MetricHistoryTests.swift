import ParsleyCore
@testable import ParsleyHTTP
import Testing

/// The health charts' numbers: the latency histogram's buckets and percentiles, and the ring of samples, whose memory
/// stays bounded however long the process runs (the last hour a second at a time; since the start a minute at a
/// time, neighbouring points merging when the ring is full).
@Suite("Metric history")
struct MetricHistoryTests {
    @Test("a duration falls in the bucket whose bound is at most 1.5 times it; percentiles read the bounds")
    func buckets() {
        for micros in [1, 2, 3, 7, 100, 150, 999, 1000, 25_000, 1_000_000, 60_000_000] {
            let i = RequestCounters.bucket(.microseconds(micros))
            let upper = RequestCounters.upperMilliseconds(i) * 1000
            let lower = i == 0 ? 0 : RequestCounters.upperMilliseconds(i - 1) * 1000
            #expect(Double(micros) < upper && Double(micros) >= lower, "\(micros) µs in bucket \(i): [\(lower), \(upper))")
            #expect(upper <= Double(micros) * 1.5 + 1)
        }
        #expect(RequestCounters.bucket(.seconds(100_000)) == 63)
        var counts = [Int](repeating: 0, count: 64)
        counts[RequestCounters.bucket(.microseconds(200))] = 98
        counts[RequestCounters.bucket(.milliseconds(40))] = 2
        #expect(RequestCounters.percentile(0.5, of: counts) < 0.3)
        #expect(RequestCounters.percentile(0.99, of: counts) >= 40)
        #expect(RequestCounters.percentile(0.99, of: [Int](repeating: 0, count: 64)) == 0)
    }

    @Test("the counters count requests, 4xx and 5xx apart, and each duration once")
    func counters() {
        let counters = RequestCounters()
        for status in [200, 201, 404, 403, 500] { counters.count(status: status, duration: .milliseconds(2)) }
        #expect(counters.total == 5 && counters.clientErrors == 2 && counters.serverErrors == 1)
        #expect(counters.latencyCounts.reduce(0, +) == 5)
    }

    static func columns(_ json: JSONValue, _ name: String) -> [Int64] {
        (json[name]?.arrayValue ?? []).compactMap { $0.integerValue.map(Int64.init) }
    }

    @Test("the last hour keeps 3,600 seconds; since the start merges neighbours when full, so its size stays bounded")
    func bounded() {
        let history = MetricHistory()
        let start: Int64 = 1_700_000_040  // a whole minute
        var latency = [Int](repeating: 0, count: 64)
        latency[10] = 1
        let seconds = 60 * 800  // 800 minutes: more than the 720 points the long ring holds
        for s in 0..<seconds {
            var sample = MetricHistory.Sample()
            sample.time = start + Int64(s)
            sample.requests = 2
            sample.writesQueued = s == 100 ? 9 : 1
            history.add(sample, latency: latency)
        }
        let hour = history.json(longRange: false, since: nil, upSeconds: seconds)
        let times = Self.columns(hour, "time")
        #expect(times.count == 3600)
        #expect(times.first == start + Int64(seconds - 3600) && times.last == start + Int64(seconds - 1))
        let later = history.json(longRange: false, since: start + Int64(seconds - 10), upSeconds: seconds)
        #expect(Self.columns(later, "time").count == 9)

        let all = history.json(longRange: true, since: nil, upSeconds: seconds)
        let step = Int64(all["step"]?.integerValue ?? 0)
        let points = Self.columns(all, "time")
        #expect(step == 120, "720 one-minute points merged into two-minute ones")
        #expect(points.count < 720 && points.count > 360)
        #expect(points.first == start)
        #expect(zip(points, points.dropFirst()).allSatisfy { $1 - $0 == step })
        // Counts add up over a point's span; gauges keep their highest value.
        #expect(Self.columns(all, "requests").first == 2 * step)
        #expect(Self.columns(all, "writesQueued").first == 9)
        #expect(Self.columns(all, "writesQueued").dropFirst().allSatisfy { $0 == 1 })
        // A process younger than an hour answers its seconds for both ranges.
        #expect(history.json(longRange: true, since: nil, upSeconds: 100)["step"] == 1)
    }
}
