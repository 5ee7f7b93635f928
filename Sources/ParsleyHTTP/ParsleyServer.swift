public import Hummingbird
public import Logging
public import ParsleyDomain
public import ParsleyStorage

/// Builds the HTTP application around a store: used by `parsley serve`, the tests and the benchmark.
public enum ParsleyServer {
    public static func makeAPI(options: ParseServerOptions, database: any SQLDatabase) async throws -> ParseAPI {
        let store = SQLStore(database: database)
        try await store.bootstrap()
        let schemas = SchemaService(store: store)
        try await schemas.reload()
        let api = ParseAPI(options: options, store: store, schemas: schemas)
        try await api.bootstrap()
        try await FileService(options: options, sql: store).store.prepare()
        return api
    }

    /// The API behind the operations layer (request ids, `/health`, rate limits, metrics, access log).
    /// `onListening` gets the port the server listens on once it does (the one the system chose for port 0).
    public static func application(
        api: ParseAPI, host: String, port: Int, logger: Logger, operations: OperationsOptions = .init(),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> Application<ParsleyResponder> {
        Application(
            responder: ParsleyResponder(transport: ParseTransport(api: api), operations: operations),
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
