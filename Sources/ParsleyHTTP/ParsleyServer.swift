public import Hummingbird
public import Logging
import ParsleyDomain

/// Builds the HTTP application around a `ParseAPI`: used by `parsley serve`, the tests and the benchmark.
public enum ParsleyServer {
    /// The API behind the operations layer (request ids, `/health`, rate limits, metrics, access log).
    /// `onListening` gets the port the server listens on once it does (the one the system chose for port 0).
    public static func application(
        api: ParseAPI, host: String, port: Int, logger: Logger, operations: OperationsOptions = .init(),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> Application<ParsleyResponder> {
        var operations = operations
        // Cloud functions' validator rate limits join the server's rules (`/functions/<name>`, per IP address).
        for (name, limit) in api.services.cloud.code.functionRateLimits.sorted(by: { $0.key < $1.key }) {
            operations.rateLimits.append(RateLimitRule(
                requestPath: "/functions/\(name)", window: limit.requestTimeWindow, count: limit.requestCount,
                message: limit.errorResponseMessage, includeMasterKey: limit.includeMasterKey))
        }
        // Triggers' validator rate limits cover their class's routes and methods (beforeSave: POST and PUT).
        for route in api.services.cloud.code.triggerRateLimits {
            var rule = RateLimitRule(
                requestPath: route.path, window: route.limit.requestTimeWindow, count: route.limit.requestCount, methods: route.methods,
                message: route.limit.errorResponseMessage, includeMasterKey: route.limit.includeMasterKey)
            rule.includesSubpaths = route.includesSubpaths
            operations.rateLimits.append(rule)
        }
        return Application(
            responder: ParsleyResponder(transport: ParseTransport(api: api), operations: operations),
            server: LiveQuerySocket.server(api.services.liveQuery, options: api.options.liveQuery),
            configuration: .init(address: .hostname(host, port: port), serverName: "parsley"),
            services: [api.background],
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    /// The Prometheus listener (`GET /metrics`), separate from the API port.
    public static func metricsApplication(metrics: ParsleyMetrics, host: String, port: Int, logger: Logger) -> Application<MetricsResponder> {
        Application(
            responder: MetricsResponder(metrics: metrics),
            configuration: .init(address: .hostname(host, port: port), serverName: "parsley-metrics"),
            logger: logger
        )
    }
}
