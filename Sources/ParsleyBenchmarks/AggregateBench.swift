import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ParsleyCore
import ParsleyHTTP
import ParsleyPostgres
import ParsleySQLite
import ParsleyStorage
import PostgresNIO

/// `--aggregate`: `GET /aggregate/Item` with `$group` by a field and `$sum` over `--objects` objects (default
/// 1,000,000; 100 groups), on SQLite and, with `--database-uri`, on PostgreSQL. Baseline in the same run: the same
/// GROUP BY written by hand and run on the same database directly (what Parsley adds: compiling, HTTP, JSON).
enum AggregateBench {
    static let pipeline = #"[{"$group":{"_id":"$category","total":{"$sum":"$score"}}}]"#

    static func run(work: URL, arguments: BenchArguments, logger: Logger) async throws {
        print(
            "Parsley aggregate benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores, $group by category (100 values) with $sum over "
                + "\(arguments.objects) objects; median of 5"
        )
        print("")
        print("| backend | objects | raw GROUP BY, same database | GET /aggregate | ratio |")
        print("|---|---|---|---|---|")
        let sqlite = try await SQLiteDatabase.open(path: work.appendingPathComponent("aggregate.sqlite").path, logger: logger)
        try await measure("SQLite", database: sqlite, arguments: arguments, logger: logger)
        if let uri = arguments.databaseURI {
            try await PostgresBench.withFreshDatabase(uri: uri, prefix: "parsley_aggregate", logger: logger) { _, url in
                let database = try await PostgresDatabase.open(url: url, poolSize: 20, logger: logger)
                try await measure("PostgreSQL", database: database, arguments: arguments, logger: logger)
            }
        }
    }

    static func measure(_ backend: String, database: any SQLDatabase, arguments: BenchArguments, logger: Logger) async throws {
        try await BenchServer.with(database: database, port: arguments.port, logger: logger) { server in
            try await BenchData.populate(server.api, className: "Item", count: arguments.objects, extra: { _ in [:] })
            let q = database.dialect
            let raw = SQLFragment(
                unsafeSQL: "SELECT \(q.quote("category")), SUM(\(q.quote("score"))) FROM \(q.quote("Item")) GROUP BY \(q.quote("category"))")
            let rawSeconds = try await median {
                let rows = try await database.read { db in try await db.query(raw) }
                guard rows.count == 100 else { throw BenchFailure("raw GROUP BY gave \(rows.count) rows") }
            }
            var request = HTTPClientRequest(url: "\(server.base)/parse/aggregate/Item?pipeline=" + BenchData.urlEncode(pipeline))
            for (k, v) in BenchServer.headers { request.headers.add(name: k, value: v) }
            let finalRequest = request
            let httpSeconds = try await median {
                let response = try await HTTPClient.shared.execute(finalRequest, timeout: .seconds(600))
                let body = try await response.body.collect(upTo: 16 << 20)
                let json = try body.withUnsafeReadableBytes { try JSONParser.parse($0) }
                guard response.status.code == 200, json["results"]?.arrayValue?.count == 100 else {
                    throw BenchFailure("aggregate: \(response.status.code)")
                }
            }
            print(
                "| \(backend) | \(arguments.objects) | \(ms(rawSeconds)) ms | \(ms(httpSeconds)) ms | "
                    + "\(String(format: "%.2f", httpSeconds / rawSeconds)) |"
            )
        }
    }

    static func ms(_ s: Double) -> String { String(format: "%.0f", s * 1000) }

    /// The median time of 5 runs (after one to warm up).
    static func median(_ body: () async throws -> Void) async throws -> Double {
        try await body()
        var times: [Double] = []
        for _ in 0..<5 {
            let start = ContinuousClock.now
            try await body()
            times.append((ContinuousClock.now - start) / .seconds(1))
        }
        return times.sorted()[2]
    }
}
