import Foundation
import Logging
import NIOConcurrencyHelpers
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPush
import ParsleySQLite
import ParsleyStorage
import ServiceLifecycle
import UnixSignals

/// Settings of the operations layer (logs, metrics, rate limits, shutdown) and the service group that runs
/// the API and the metrics listener until SIGTERM/SIGINT.
extension ServerSettings {
    static let loggingBootstrapped = NIOLockedValueBox(false)

    /// The log format and level: `logFormat` (else `json` with Parse Server's `jsonLogs`) and `logLevel` (Parse
    /// Server's level names too; else `debug` with `verbose`).
    static func logSettings(_ values: OptionValues) throws -> (ParsleyLogHandler.Format, Logger.Level) {
        let json = try values.bool("jsonLogs", default: false)
        let formatText = (values.string("logFormat") ?? (json ? "json" : "text")).lowercased()
        guard let format = ParsleyLogHandler.Format(rawValue: formatText) else {
            throw Invalid(description: "PARSLEY_LOG_FORMAT must be text, logfmt or json")
        }
        let verbose = try values.bool("verbose", default: false)
        let raw = values.raw("logLevel")
        let levelText = (raw?.text ?? (verbose ? "debug" : "info")).lowercased()
        let parseServerLevels: [String: Logger.Level] = ["warn": .warning, "verbose": .debug, "silly": .trace, "http": .info]
        guard let level = Logger.Level(rawValue: levelText) ?? parseServerLevels[levelText] else {
            throw Invalid(
                description:
                    "\(raw?.name ?? "LOG_LEVEL") must be trace, debug, info, notice, warning, error or critical (or Parse Server's warn, verbose, "
                    + "silly)"
            )
        }
        return (format, level)
    }

    /// Installs the log handler once per process and returns the root logger.
    static func makeLogger(_ values: OptionValues) throws -> Logger {
        let (format, level) = try logSettings(values)
        let first = Self.loggingBootstrapped.withLockedValue { done in
            defer { done = true }
            return !done
        }
        if first {
            LoggingSystem.bootstrap { label in
                var handler = ParsleyLogHandler(label: label, format: format)
                handler.logLevel = level
                return handler
            }
            AccessLog.writeDirectly(format: format)
        }
        var logger = Logger(label: "parsley")
        logger.logLevel = level
        return logger
    }

    /// Secrets that must never appear in a log line (nor in a start-up error).
    static func registerSecrets(_ options: ParseServerOptions, values: OptionValues) {
        let more = [
            values.string("smtpPassword"), values.string("webhookKey"), databasePassword(values.string("databaseURI")),
            options.security.maintenanceKey,
        ]
        for secret in [options.masterKey, options.readOnlyMasterKey, options.restAPIKey, options.clientKey, options.javascriptKey, options.dotNetKey]
            + more
        {
            LogRedactor.shared.register(secret)
        }
    }

    /// `rateLimit` (Parse Server's JSON array of rules).
    static func rateLimits(_ values: OptionValues) throws -> [RateLimitRule] {
        guard let (json, name) = try values.json("rateLimit") else { return [] }
        do {
            return try RateLimitRule.parse(json)
        } catch let e as RateLimitRule.Invalid {
            throw Invalid(description: "\(name): \(e.description)")
        }
    }

    /// The metrics listener's port (nil: off) and address.
    static func metricsListener(_ values: OptionValues) throws -> (port: Int?, host: String) {
        let port = try values.integer("metricsPort", default: nil)
        if let port, !(1...65_535).contains(port) { throw Invalid(description: "PARSLEY_METRICS_PORT must be 1 to 65535") }
        return (port, values.string("metricsHost") ?? "127.0.0.1")
    }

    static func operationsOptions(
        metrics: Bool, database: any SQLDatabase, changes: ChangeFeed, cloud: CloudRuntime,
        liveQuery: LiveQueryHub? = nil, pushProviders: [any PushProvider] = []
    ) -> OperationsOptions {
        var operations = OperationsOptions()
        if metrics {
            operations.metrics = ParsleyMetrics(pool: {
                let u = database.poolUsage
                var usage = ParsleyMetrics.PoolUsage(
                    readersBusy: u.readersBusy, readers: u.readers, writesQueued: u.writesQueued,
                    pointReadsCoalesced: database.pointReads?.coalesced ?? 0, changeEventsDropped: changes.dropped)
                usage.readPlaces = database.readPlaceCounts
                usage.afterTriggersRun = cloud.afterTriggersRun
                usage.afterTriggerFailures = cloud.afterTriggerFailures
                // Labels are URLs without their password (`https://user:[redacted]@host/hook`).
                usage.webhookCalls = Dictionary(cloud.webhooks.callCounts.map { (RedactedURL.string($0.key), $0.value) }, uniquingKeysWith: +)
                usage.webhookFailures = Dictionary(cloud.webhooks.failureCounts.map { (RedactedURL.string($0.key), $0.value) }, uniquingKeysWith: +)
                if let liveQuery {
                    usage.liveQueryConnections = liveQuery.connectionCount
                    usage.liveQuerySubscriptions = liveQuery.subscriptionCount
                    usage.liveQueryEventsDelivered = liveQuery.metrics.eventsDelivered
                    usage.liveQuerySlowClients = liveQuery.metrics.slowClientsDisconnected
                }
                for provider in pushProviders { usage.pushTransportFailures[provider.name] = provider.transportFailures }
                return usage
            })
        }
        return operations
    }

    /// Runs the database, the API (with its background work) and the metrics listener as one ServiceGroup until
    /// SIGTERM or SIGINT; then, in reverse order, no new connection is taken, requests in flight get
    /// `PARSLEY_SHUTDOWN_TIMEOUT` seconds to finish, and the database finishes its writes and closes.
    static func runServices(
        database: any SQLDatabase, app: some Service, metrics: (ParsleyMetrics, Int)?, metricsHost host: String, shutdownTimeout timeout: Int,
        logger: Logger
    ) async throws {
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: DatabaseService(database: database)), .init(service: app)]
        if let (registry, port) = metrics {
            services.append(.init(service: ParsleyApplication.metricsApplication(metrics: registry, host: host, port: port, logger: logger)))
            logger.info("metrics at http://\(host):\(port)/metrics")
        }
        var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(timeout)
        try await ServiceGroup(configuration: configuration).run()
    }

}
