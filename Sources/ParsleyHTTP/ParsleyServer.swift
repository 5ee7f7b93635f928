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

    public static func application(
        api: ParseAPI, host: String, port: Int, logger: Logger
    ) -> Application<ParseTransport> {
        Application(
            responder: ParseTransport(api: api),
            configuration: .init(address: .hostname(host, port: port), serverName: "parsley"),
            logger: logger
        )
    }
}
