import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import SQLiteNIO
import Synchronization

/// The baseline every edge figure is compared with: a bare Hummingbird server on sqlite-nio with Parsley's SQLite
/// settings (WAL, synchronous=FULL, one writer and four readers), no Parse logic: create decodes the JSON body and
/// inserts it, get selects by primary key and writes the row back, `/health` writes a constant JSON object.
/// Same paths as Parsley's, so one wrk script drives both.
struct BareServer: Sendable {
    struct Health: ResponseEncodable { let status: String }
    struct Created: ResponseEncodable { let objectId: String; let createdAt: String }
    /// What a create carries (the benchmark's payload), decoded as any typed Hummingbird route would.
    struct Item: Decodable {
        let title: String
        let mood: String
        let score: Int
        let counter: Int
        let tags: [String]
        let `private`: Bool
        let text: String
    }

    final class Connections: Sendable {
        let writer: SQLiteConnection
        let readers: [SQLiteConnection]
        let next = Atomic<Int>(0)
        let sequence = Atomic<Int>(0)
        init(writer: SQLiteConnection, readers: [SQLiteConnection]) {
            self.writer = writer
            self.readers = readers
        }
        var reader: SQLiteConnection { readers[next.add(1, ordering: .relaxed).newValue % readers.count] }
    }

    /// Returns once the bare server answers `/parse/health` (it fills its table before it listens, which takes
    /// longer than a fixed pause for the journal's 20,000 rows: wrk then measured refused connections, 0 req/s).
    static func waitUntilListening(port: Int) async throws {
        for _ in 0..<1_200 {
            let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/parse/health")
            if let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(5)), response.status.code == 200 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchFailure("the bare baseline server did not start on port \(port)")
    }

    /// Serves on 127.0.0.1:`port` until the task is cancelled; `ids` objects exist before it listens.
    static func run(directory: URL, port: Int, ids: [String], logger: Logger) async throws {
        let path = directory.appendingPathComponent("bare.sqlite").path
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let writer = try await RawSQLiteBaseline.openTable(path: path, pool: pool, logger: logger)
        _ = try await writer.query("BEGIN")
        for id in ids {
            _ = try await writer.query(
                #"INSERT INTO t VALUES (?,?,?,?)"#,
                [.text(id), .text("2026-01-01T00:00:00.000Z"), .text("2026-01-01T00:00:00.000Z"), .text(BenchData.payload(seed: 1))])
        }
        _ = try await writer.query("COMMIT")
        var readers: [SQLiteConnection] = []
        for _ in 0..<4 { readers.append(try await SQLiteConnection.open(storage: .file(path: path), threadPool: pool, logger: logger, on: loop)) }
        let db = Connections(writer: writer, readers: readers)

        let router = Router()
        router.get("/parse/health") { _, _ in Health(status: "ok") }
        router.get("/parse/classes/Item/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            let rows = try await db.reader.query(#"SELECT "objectId","createdAt","updatedAt","data" FROM t WHERE "objectId" = ?"#, [.text(id)])
            guard let row = rows.first, let data = row.column("data")?.string else { return Response(status: .notFound) }
            var body = ByteBuffer()
            body.writeString(#"{"objectId":""#)
            body.writeString(row.column("objectId")?.string ?? "")
            body.writeString(#"","createdAt":""#)
            body.writeString(row.column("createdAt")?.string ?? "")
            body.writeString(#"","updatedAt":""#)
            body.writeString(row.column("updatedAt")?.string ?? "")
            body.writeString("\",")
            body.writeSubstring(data.dropFirst())
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
        }
        router.post("/parse/classes/Item") { request, context -> Response in
            let item = try await request.decode(as: Item.self, context: context)
            let id = "b" + String(db.sequence.add(1, ordering: .relaxed).newValue, radix: 36)
            let now = "2026-01-01T00:00:00.000Z"
            _ = try await db.writer.query(
                #"INSERT INTO t VALUES (?,?,?,?)"#, [.text(id), .text(now), .text(now), .text(#"{"title":\#(item.title.debugDescription)}"#)])
            return try Created(objectId: id, createdAt: now).response(from: request, context: context).with(status: .created)
        }
        try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger).runService()
    }
}

extension Response {
    func with(status: HTTPResponse.Status) -> Response {
        var copy = self
        copy.status = status
        return copy
    }
}
