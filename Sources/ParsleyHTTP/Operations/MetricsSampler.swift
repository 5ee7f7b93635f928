import ParsleyCore
import ParsleyDomain
import ServiceLifecycle

/// Once a second (at the turn of the wall clock's second), what the request counters, the database pool, LiveQuery
/// and push did since the second before goes into `MetricHistory`. A service of the server's ServiceGroup, beside
/// the API's background work (`ParsleyApplication.application` adds it).
struct MetricsSampler: Service {
    let api: ParseAPI
    let counters: RequestCounters
    let history: MetricHistory

    /// The running totals one sample is the difference of.
    struct Totals {
        var requests = 0
        var clientErrors = 0
        var serverErrors = 0
        var latency = [Int](repeating: 0, count: 64)
        var liveQueryEvents = 0
        var pushSent = 0
        var pushFailed = 0
    }

    func totals() -> Totals {
        Totals(
            requests: counters.total, clientErrors: counters.clientErrors, serverErrors: counters.serverErrors, latency: counters.latencyCounts,
            liveQueryEvents: api.services.liveQuery.metrics.eventsDelivered, pushSent: api.services.push.messagesSent,
            pushFailed: api.services.push.messagesFailed)
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var before = totals()
            while !Task.isCancelled {
                let now = ParseDate.now.milliseconds
                do { try await Task.sleep(for: .milliseconds(1000 - now % 1000)) } catch { return }
                before = sample(after: before, second: now / 1000)
            }
        }
    }

    /// Records the second `second` (seconds since 1970) as what changed since `before`; answers the totals now.
    func sample(after before: Totals, second: Int64) -> Totals {
        let now = totals()
        let latency = (0..<64).map { now.latency[$0] - before.latency[$0] }
        let db = api.services.databaseStatus
        var s = MetricHistory.Sample()
        s.time = second
        s.requests = now.requests - before.requests
        s.clientErrors = now.clientErrors - before.clientErrors
        s.serverErrors = now.serverErrors - before.serverErrors
        s.p50 = Float(RequestCounters.percentile(0.5, of: latency))
        s.p99 = Float(RequestCounters.percentile(0.99, of: latency))
        s.writesQueued = Int32(clamping: db.writesQueued)
        s.readersBusy = Int32(clamping: db.readersBusy)
        s.readers = Int32(clamping: db.readers)
        s.liveQueryConnections = Int32(clamping: api.services.liveQuery.connectionCount)
        s.liveQueryEvents = now.liveQueryEvents - before.liveQueryEvents
        s.pushSent = now.pushSent - before.pushSent
        s.pushFailed = now.pushFailed - before.pushFailed
        history.add(s, latency: latency)
        return now
    }
}
