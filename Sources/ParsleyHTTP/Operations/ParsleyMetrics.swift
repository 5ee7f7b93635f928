public import Hummingbird
import HTTPTypes
import NIOCore
public import Prometheus
import Synchronization

/// Prometheus metrics of one server: requests by route, method and status, latency histograms by route, and
/// database pool use (sampled at each scrape). Served as Prometheus text by `MetricsResponder` on its own
/// listener (`PARSLEY_METRICS_PORT`), so the API port never exposes them.
public final class ParsleyMetrics: Sendable {
    /// Database pool use at scrape time.
    public struct PoolUsage: Sendable {
        public var readersBusy: Int
        public var readers: Int
        public var writesQueued: Int
        /// Lookups by id answered by a statement shared with other lookups, since the start.
        public var pointReadsCoalesced: Int
        /// Change events a slow subscriber lost (its buffer was full), since the start.
        public var changeEventsDropped: Int
        /// Cloud code's after-triggers run and failed, and webhook calls and failed calls per URL, since the start.
        public var afterTriggersRun = 0
        public var afterTriggerFailures = 0
        public var webhookCalls: [String: Int] = [:]
        public var webhookFailures: [String: Int] = [:]
        /// LiveQuery: open connections and subscriptions now; events delivered and slow clients cut off since the start.
        public var liveQueryConnections = 0
        public var liveQuerySubscriptions = 0
        public var liveQueryEventsDelivered = 0
        public var liveQuerySlowClients = 0
        /// Push requests that could not get through to APNs/FCM since the start: provider → kind → count.
        public var pushTransportFailures: [String: [String: Int]] = [:]
        /// SQLite: finds run on the thread serving the request (proven quick), run on the database's thread pool, and
        /// begun in place but moved to the pool past their budget, since the start (nil on PostgreSQL).
        public var readPlaces: (inPlace: Int, onPool: Int, overBudget: Int)?
        public init(readersBusy: Int, readers: Int, writesQueued: Int, pointReadsCoalesced: Int = 0, changeEventsDropped: Int = 0) {
            self.readersBusy = readersBusy
            self.readers = readers
            self.writesQueued = writesQueued
            self.pointReadsCoalesced = pointReadsCoalesced
            self.changeEventsDropped = changeEventsDropped
        }
    }

    public let registry = PrometheusCollectorRegistry()
    let pool: (@Sendable () -> PoolUsage)?
    /// The coalesced-lookup count at the last scrape: the counter advances by what was added since.
    private let coalescedAtLastScrape = Mutex(0)
    private let droppedAtLastScrape = Mutex(0)
    /// Totals at the last scrape, by counter and label: each counter advances by what was added since.
    private let totalsAtLastScrape = Mutex<[String: Int]>([:])
    /// A metric of ours: `parsley_<name>[_<unit>]`.
    private static func metric(_ name: String, unit: String = "", _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "parsley", metricName: name, unitName: unit, helpText: help)
    }
    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]
    static var requests: MetricNameDescriptor { metric("http_requests", unit: "total", "HTTP requests by route, method and status") }
    static var latency: MetricNameDescriptor { metric("http_request_duration", unit: "seconds", "HTTP request latency by route") }
    static var readersBusy: MetricNameDescriptor { metric("db_readers_busy", "Reader connections in use") }
    static var readers: MetricNameDescriptor { metric("db_readers", "Reader connections in the pool") }
    static var writesQueued: MetricNameDescriptor { metric("db_writes_queued", "Writes waiting for the writer connection") }
    static var pointReadsCoalesced: MetricNameDescriptor {
        metric(
            "db_point_reads_coalesced", unit: "total", "Lookups by objectId answered by a statement shared with concurrent lookups, since the start")
    }
    static var changeEventsDropped: MetricNameDescriptor {
        metric("change_events_dropped", unit: "total", "Change events a slow subscriber lost because its buffer was full, since the start")
    }

    static var afterTriggers: MetricNameDescriptor {
        metric("cloud_after_triggers", unit: "total", "Cloud code afterSave/afterDelete runs, since the start")
    }
    static var afterTriggerFailures: MetricNameDescriptor {
        metric("cloud_after_trigger_failures", unit: "total", "Cloud code afterSave/afterDelete runs that failed or were dropped, since the start")
    }
    static var webhookCalls: MetricNameDescriptor { metric("webhook_calls", unit: "total", "Webhook calls by URL, since the start") }
    static var webhookFailures: MetricNameDescriptor {
        metric("webhook_failures", unit: "total", "Webhook calls by URL that failed (timeout, refused, malformed answer), since the start")
    }

    static var liveQueryConnections: MetricNameDescriptor { metric("livequery_connections", "Open LiveQuery WebSocket connections") }
    static var liveQuerySubscriptions: MetricNameDescriptor { metric("livequery_subscriptions", "LiveQuery subscriptions") }
    static var liveQueryEvents: MetricNameDescriptor {
        metric("livequery_events_delivered", unit: "total", "LiveQuery events queued for clients, since the start")
    }
    static var liveQuerySlowClients: MetricNameDescriptor {
        metric("livequery_slow_clients_disconnected", unit: "total", "LiveQuery clients disconnected because their queue was full, since the start")
    }

    static var pushTransportFailures: MetricNameDescriptor {
        metric(
            "push_transport_failures", unit: "total", "Push requests that could not get through to APNs or FCM, by provider and kind, since the start"
        )
    }

    static var readsByPlace: MetricNameDescriptor {
        metric(
            "db_reads", unit: "total",
            "SQLite finds by where they ran: in_place (on the request's thread, proven quick) or thread_pool, since the start")
    }
    static var readsOverBudget: MetricNameDescriptor {
        metric(
            "db_reads_over_budget", unit: "total",
            "SQLite finds begun in place that ran past their budget and were run again on the thread pool, since the start")
    }
    static var schedulerJobsReady: MetricNameDescriptor {
        metric("request_jobs_ready", "Pieces of request work ready to run and waiting for a request thread (oldest request first)")
    }
    static var schedulerThreadsBusy: MetricNameDescriptor { metric("request_threads_busy", "Request threads at work") }
    static var schedulerThreads: MetricNameDescriptor { metric("request_threads", "Request threads (one per core)") }

    static var logLinesDropped: MetricNameDescriptor {
        metric("log_lines_dropped", unit: "total", "Log lines dropped because standard output could not keep up, since the start")
    }

    /// Advances the counter `descriptor` (with `label`) to `total`.
    private func advance(_ descriptor: MetricNameDescriptor, _ total: Int, label: (String, String)? = nil) {
        advance(descriptor, total, labels: label.map { [$0] } ?? [])
    }

    private func advance(_ descriptor: MetricNameDescriptor, _ total: Int, labels: [(String, String)]) {
        let key = descriptor.metricName + "|" + labels.map(\.1).joined(separator: "|")
        let added = totalsAtLastScrape.withLock { last in
            defer { last[key] = max(last[key] ?? 0, total) }
            return max(0, total - (last[key] ?? 0))
        }
        registry.makeCounter(descriptor: descriptor, labels: labels).increment(by: Int64(added))
    }

    public init(pool: (@Sendable () -> PoolUsage)? = nil) {
        self.pool = pool
    }

    func record(method: String, route: String, status: Int, duration: Duration) {
        registry.makeCounter(descriptor: Self.requests, labels: [("route", route), ("method", method), ("status", String(status))]).increment()
        registry.makeDurationHistogram(descriptor: Self.latency, labels: [("route", route), ("method", method)], buckets: Self.buckets)
            .record(duration)
    }

    /// The exposition text (format 0.0.4).
    public func render() -> String {
        if let usage = pool?() {
            registry.makeGauge(descriptor: Self.readersBusy).set(Double(usage.readersBusy))
            registry.makeGauge(descriptor: Self.readers).set(Double(usage.readers))
            registry.makeGauge(descriptor: Self.writesQueued).set(Double(usage.writesQueued))
            let added = coalescedAtLastScrape.withLock { last in
                defer { last = max(last, usage.pointReadsCoalesced) }
                return max(0, usage.pointReadsCoalesced - last)
            }
            registry.makeCounter(descriptor: Self.pointReadsCoalesced).increment(by: Int64(added))
            let dropped = droppedAtLastScrape.withLock { last in
                defer { last = max(last, usage.changeEventsDropped) }
                return max(0, usage.changeEventsDropped - last)
            }
            registry.makeCounter(descriptor: Self.changeEventsDropped).increment(by: Int64(dropped))
            advance(Self.afterTriggers, usage.afterTriggersRun)
            advance(Self.afterTriggerFailures, usage.afterTriggerFailures)
            for (url, n) in usage.webhookCalls { advance(Self.webhookCalls, n, label: ("url", url)) }
            for (url, n) in usage.webhookFailures { advance(Self.webhookFailures, n, label: ("url", url)) }
            registry.makeGauge(descriptor: Self.liveQueryConnections).set(Double(usage.liveQueryConnections))
            registry.makeGauge(descriptor: Self.liveQuerySubscriptions).set(Double(usage.liveQuerySubscriptions))
            advance(Self.liveQueryEvents, usage.liveQueryEventsDelivered)
            advance(Self.liveQuerySlowClients, usage.liveQuerySlowClients)
            for (provider, kinds) in usage.pushTransportFailures {
                for (kind, n) in kinds { advance(Self.pushTransportFailures, n, labels: [("provider", provider), ("kind", kind)]) }
            }
            if let places = usage.readPlaces {
                advance(Self.readsByPlace, places.inPlace, label: ("place", "in_place"))
                advance(Self.readsByPlace, places.onPool, label: ("place", "thread_pool"))
                advance(Self.readsOverBudget, places.overBudget)
            }
        }
        if let scheduler = RequestScheduler.sharedIfStarted {
            let usage = scheduler.usage
            registry.makeGauge(descriptor: Self.schedulerJobsReady).set(Double(usage.jobsReady))
            registry.makeGauge(descriptor: Self.schedulerThreadsBusy).set(Double(usage.threadsBusy))
            registry.makeGauge(descriptor: Self.schedulerThreads).set(Double(usage.threads))
        }
        advance(Self.logLinesDropped, LogSink.shared.dropped)
        return registry.emitToString()
    }
}

/// `GET /metrics` (any path, in fact) on the metrics listener.
public struct MetricsResponder: HTTPResponder {
    public typealias Context = BasicRequestContext
    let metrics: ParsleyMetrics

    public init(metrics: ParsleyMetrics) { self.metrics = metrics }

    public func respond(to request: Request, context: Context) async throws -> Response {
        guard request.uri.path == "/metrics" else {
            return Response(status: .notFound, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "not found\n")))
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: metrics.render())))
    }
}
