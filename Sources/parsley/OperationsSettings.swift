import Foundation
import Logging
import NIOConcurrencyHelpers
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleySQLite
import ParsleyStorage
import ServiceLifecycle
import UnixSignals

/// Settings of the operations layer (logs, metrics, rate limits, shutdown) and the service group that runs
/// the API and the metrics listener until SIGTERM/SIGINT.
extension ServerSettings {
    static let loggingBootstrapped = NIOLockedValueBox(false)

    /// Installs the log handler once per process (`PARSLEY_LOG_FORMAT`, `LOG_LEVEL`) and returns the root logger.
    func makeLogger() throws -> Logger {
        let formatText = (logFormat ?? Self.env("PARSLEY_LOG_FORMAT") ?? "text").lowercased()
        guard let format = ParsleyLogHandler.Format(rawValue: formatText) else {
            throw Invalid(description: "PARSLEY_LOG_FORMAT must be text, logfmt or json, got '\(formatText)'")
        }
        let levelText = (Self.env("LOG_LEVEL") ?? "info").lowercased()
        guard let level = Logger.Level(rawValue: levelText) else {
            throw Invalid(description: "LOG_LEVEL must be trace, debug, info, notice, warning, error or critical, got '\(levelText)'")
        }
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
        }
        var logger = Logger(label: "parsley")
        logger.logLevel = level
        return logger
    }

    /// Secrets that must never appear in a log line.
    static func registerSecrets(_ options: ParseServerOptions) {
        for secret in [options.masterKey, options.restAPIKey, options.clientKey, options.javascriptKey, options.dotNetKey, env("PARSLEY_SMTP_PASSWORD")] {
            LogRedactor.shared.register(secret)
        }
    }

    func operationsOptions(database: any SQLDatabase) throws -> (OperationsOptions, metricsPort: Int?) {
        var operations = OperationsOptions()
        if let text = rateLimit ?? Self.env("PARSE_SERVER_RATE_LIMIT") {
            guard let json = try? JSONParser.parse(text) else {
                throw Invalid(description: "PARSE_SERVER_RATE_LIMIT must be JSON (Parse Server's rateLimit option), got '\(text)'")
            }
            do {
                operations.rateLimits = try RateLimitRule.parse(json)
            } catch let e as RateLimitRule.Invalid {
                throw Invalid(description: "PARSE_SERVER_RATE_LIMIT: \(e.description)")
            }
        }
        let metricsPort = try Self.integer(self.metricsPort, "PARSLEY_METRICS_PORT", default: nil)
        if let metricsPort {
            guard (1...65_535).contains(metricsPort) else { throw Invalid(description: "PARSLEY_METRICS_PORT must be 1 to 65535") }
            operations.metrics = ParsleyMetrics(pool: {
                let u = database.poolUsage
                return .init(
                    readersBusy: u.readersBusy, readers: u.readers, writesQueued: u.writesQueued,
                    pointReadsCoalesced: database.pointReads?.coalesced ?? 0)
            })
        }
        return (operations, metricsPort)
    }

    /// Runs the API (and the metrics listener) until SIGTERM or SIGINT; then no new connection is taken,
    /// requests in flight get `PARSLEY_SHUTDOWN_TIMEOUT` seconds to finish, and the caller closes the database.
    func runServices(_ app: some Service, metrics: (ParsleyMetrics, Int)?, logger: Logger) async throws {
        let timeout = try Self.integer(shutdownTimeout, "PARSLEY_SHUTDOWN_TIMEOUT", default: 30) ?? 30
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: app)]
        if let (registry, port) = metrics {
            let host = metricsHost ?? Self.env("PARSLEY_METRICS_HOST") ?? "127.0.0.1"
            services.append(.init(service: ParsleyServer.metricsApplication(metrics: registry, host: host, port: port, logger: logger)))
            logger.info("metrics at http://\(host):\(port)/metrics")
        }
        var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(timeout)
        try await ServiceGroup(configuration: configuration).run()
    }

}
