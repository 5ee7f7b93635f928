import HTTPTypes
public import Hummingbird
public import Logging
import ParsleyDomain

/// Builds the HTTP application around a `ParseAPI`: used by `parsley serve`, the tests and the benchmark.
public enum ParsleyApplication {
    /// The API behind the operations layer (request ids, `/health`, metrics, access log). Rate limits belong to the
    /// API (`ParseAPI(services:rateLimits:)`), which counts batch sub-requests too.
    /// `onListening` gets the port the server listens on once it does (the one the system chose for port 0).
    public static func application(
        api: ParseAPI, host: String, port: Int, logger: Logger, operations: OperationsOptions = .init(),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> Application<ParsleyResponder> {
        let transport = ParseTransport(api: api)
        let graphQL = api.graphQL.map { service in
            GraphQLSockets(path: transport.graphQLPath, service: service) { keys, address in
                var headers = HTTPFields()
                for (name, value) in keys { if let field = HTTPField.Name(name) { headers[field] = value } }
                return try await transport.authenticate(headers, [:], ignoresSession: false, clientAddress: address)
            }
        }
        let inbox = SocketInbox()
        return Application(
            responder: ParsleyResponder(transport: transport, operations: operations),
            server: LiveQuerySocket.server(
                api.services.liveQuery, inbox: inbox, options: api.options.liveQuery, trustProxy: api.options.security.trustProxy,
                graphQL: graphQL),
            configuration: .init(address: .hostname(host, port: port), serverName: "parsley"),
            services: [api.background, MetricsSampler(api: api, counters: transport.counters, history: transport.history), inbox],
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
