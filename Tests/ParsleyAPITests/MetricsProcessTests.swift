import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ParsleyCore
import Testing

/// `/metrics` of the `parsley` process: the request scheduler's queue and threads, and on SQLite where finds ran
/// (on the request's thread once their shape has proven quick, else on the database's thread pool).
@Suite("Metrics of the running server")
struct MetricsProcessTests {
    @Test(
        "the request scheduler's threads (one per core by default) and ready work; SQLite's finds by where they ran (none on PostgreSQL)",
        arguments: Backend.all)
    func schedulerAndReadPlaces(_ backend: Backend) async throws {
        if backend == .postgres {
            try await PostgresCluster.shared.withFreshDatabase { url in try await Self.scrapeAfterFinds(backend, databaseURI: url) }
        } else {
            try await Self.scrapeAfterFinds(backend, databaseURI: nil)
        }
    }

    static func scrapeAfterFinds(_ backend: Backend, databaseURI: String?) async throws {
        let metricsReservation = try ReservedPort()
        defer { metricsReservation.release() }
        let metricsPort = metricsReservation.port
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let mount = ParseServerConfigProcessTests.mount
        var environment = [
            "PORT": "0", "PARSE_SERVER_HOST": "127.0.0.1", "PARSE_SERVER_APPLICATION_ID": ParseServerConfigProcessTests.appId,
            "PARSE_SERVER_MASTER_KEY": ParseServerConfigProcessTests.masterKey, "PARSE_SERVER_MOUNT_PATH": mount,
            "PARSLEY_METRICS_PORT": String(metricsPort),
        ]
        if let databaseURI { environment["PARSE_SERVER_DATABASE_URI"] = databaseURI }
        let server = try ParseServerConfigProcessTests.Child([], environment: environment, dataDir: dir)
        defer { server.process.killNow() }
        try await server.waitUntilHealthy(mount: mount)
        try await server.client { p in
            for n in 0..<3 { _ = try await p.createId("Metered", ["n": .int(Int64(n))]) }
            // One query shape, run often enough to prove quick on SQLite (eight quick runs on the pool, then in place).
            for _ in 0..<12 {
                let found = try await p.find("Metered", where: ["n": ["$gte": 0]])
                #expect(found.results.count == 3)
            }
        }
        let scrape = try await TestClient.withClient(host: "127.0.0.1", port: metricsPort) { client in
            try await client.execute(TestClient.Request("/metrics", method: .get))
        }
        let text = String(buffer: scrape.body ?? ByteBuffer())
        // Counters print as integers, gauges as doubles ("2.0").
        func value(_ name: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }
        }
        let threads = try #require(value("parsley_request_threads"), "\(text)")
        // One request thread per core as NIO counts them (a container's CPU quota included): the default.
        #expect(threads == System.coreCount, "\(text)")
        #expect((value("parsley_request_jobs_ready") ?? -1) >= 0, "\(text)")
        #expect((value("parsley_request_threads_busy") ?? -1) >= 0)
        #expect((value("parsley_request_threads_busy") ?? .max) <= threads)
        let inPlace = value(#"parsley_db_reads_total{place="in_place"}"#)
        let onPool = value(#"parsley_db_reads_total{place="thread_pool"}"#)
        if backend == .sqlite {
            #expect((onPool ?? 0) >= 8, "\(text)")
            #expect((inPlace ?? 0) >= 1, "\(text)")
            #expect(value("parsley_db_reads_over_budget_total") == 0, "\(text)")
        } else {
            #expect(inPlace == nil && onPool == nil, "\(text)")
        }
    }
}
