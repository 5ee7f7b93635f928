#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyStorage

/// The built-in file stores, to run each files test against each: a folder, the database, and an S3 bucket on
/// a moto server (Support/MotoServer.swift).
enum FileBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case filesystem, database, s3
    var description: String { rawValue }
}

/// A live server like `TestServer.with`, which also hands the test the files folder and the database, so it
/// can check that nothing is left behind.
struct FilesHarness: Sendable {
    let client: ParseClient
    let directory: String
    let database: any SQLDatabase
    let backend: FileBackend
    let port: Int
    /// The bucket's client, for `.s3`.
    var s3: S3Client? = nil

    static func with(
        _ backend: FileBackend, database databaseBackend: Backend = .sqlite, s3Store: S3FileStore? = nil,
        _ configure: @escaping @Sendable (inout ParseServerOptions) -> Void = { _ in },
        _ body: @escaping @Sendable (FilesHarness) async throws -> Void
    ) async throws {
        let logger = TestDatabase.logger
        let s3 = backend == .s3 ? try await Self.bucket(s3Store) : nil
        try await TestDatabase.with(databaseBackend, logger: logger) { db in
            let files = db.directory.appendingPathComponent("files").path
            let options = TestServer.options {
                switch backend {
                case .filesystem: $0.files.adapter = .filesystem
                case .database: $0.files.adapter = .database
                case .s3: $0.files.adapter = s3.map { .custom($0) } ?? .database
                }
                $0.files.directory = files
                $0.files.uploadStallTimeout = .seconds(3)
                configure(&$0)
            }
            let api = ParseAPI(services: try await ParseServices.open(options: options, database: db.database, adapters: .standard))
            let app = ParsleyApplication.application(api: api, host: "127.0.0.1", port: 0, logger: logger)
            try await app.test(.live) { client in
                // Its own connection with a minute to answer: megabytes through a 2-core machine that runs the whole
                // suite at once can take longer than the test client's default 20 s.
                let port = client.port ?? 0
                try await TestClient.withClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(60))) { connection in
                    var parse = ParseClient(connection: connection, options: options)
                    parse.backend = databaseBackend
                    let harness = FilesHarness(
                        client: parse, directory: files, database: db.database, backend: backend, port: port, s3: s3?.client)
                    try await body(harness)
                }
            }
        }
    }

    /// The S3 store of an `.s3` test: the one given, else a new bucket on the shared moto server.
    static func bucket(_ given: S3FileStore?) async throws -> S3FileStore {
        if let given { return given }
        return try await MotoServer.store()
    }

    // MARK: Requests

    func headers(master: Bool = true, session: String? = nil, contentType: String? = "application/octet-stream") -> HTTPFields {
        var h = HTTPFields()
        h[HTTPField.Name("X-Parse-Application-Id")!] = client.options.applicationId
        if master { h[HTTPField.Name("X-Parse-Master-Key")!] = client.options.masterKey }
        if let session { h[HTTPField.Name("X-Parse-Session-Token")!] = session }
        if let contentType { h[.contentType] = contentType }
        return h
    }

    /// `POST /parse/files/<name>` (the name as given: already percent-encoded if needed).
    func upload(_ name: String, _ bytes: [UInt8], headers: HTTPFields? = nil) async throws -> Reply {
        let (status, h, body) = try await client.send("/parse/files/\(name)", .post, headers ?? self.headers(), ByteBuffer(bytes: bytes))
        let text = String(buffer: body)
        return Reply(status: status, headers: h, json: (try? JSONParser.parse(text)) ?? .string(text))
    }

    /// Uploads with the master key and returns the stored name and URL path (expects success).
    func stored(_ name: String, _ bytes: [UInt8], contentType: String = "application/octet-stream") async throws -> (name: String, path: String) {
        let r = try await upload(name, bytes, headers: headers(contentType: contentType))
        guard r.status == 201, let stored = r["name"]?.stringValue, let url = r["url"]?.stringValue else {
            throw Failure("upload failed: \(r.status) \(r.json)")
        }
        return (stored, Self.path(url))
    }

    /// The path of an absolute file URL, for the test client.
    static func path(_ url: String) -> String {
        guard let r = url.range(of: "/parse/") else { return url }
        return String(url[r.lowerBound...])
    }

    func get(_ path: String, method: HTTPRequest.Method = .get, headers: HTTPFields = [:]) async throws -> (
        status: Int, headers: HTTPFields, bytes: [UInt8]
    ) {
        let (status, h, body) = try await client.send(path, method, headers, nil)
        return (status, h, Array(buffer: body))
    }

    // MARK: What is stored

    /// Files (and rows) the store holds: complete files plus anything an upload left behind.
    func leftovers() async throws -> [String] {
        switch backend {
        case .filesystem:
            let fm = FileManager.default
            var all: [String] = []
            for sub in ["", "/.uploads", "/.meta"] {
                let entries = (try? fm.contentsOfDirectory(atPath: directory + sub)) ?? []
                all += entries.filter { !$0.hasPrefix(".") }.map { sub + "/" + $0 }
            }
            return all
        case .database:
            let rows = try await database.read { db in
                try await db.query(SQLFragment("SELECT 'file:' || name FROM \"_Files\" UNION ALL SELECT 'chunk:' || upload FROM \"_FileChunks\""))
            }
            return rows.compactMap { $0.first?.text }
        case .s3:
            guard let s3 else { return [] }
            let objects = try await s3.list(prefix: "").keys.map { "object:" + $0 }
            return try await objects + s3.multipartUploads(prefix: "").map { "upload:" + $0.key }
        }
    }

    /// Whether an upload is under way in the store (a temporary file, or chunk rows without a file row).
    func uploadInProgress() async throws -> Bool {
        switch backend {
        case .filesystem:
            return !((try? FileManager.default.contentsOfDirectory(atPath: directory + "/.uploads")) ?? []).isEmpty
        case .database:
            let rows = try await database.read { db in try await db.query(SQLFragment("SELECT COUNT(*) FROM \"_FileChunks\"")) }
            if case .integer(let n)? = rows.first?.first { return n > 0 }
            return false
        case .s3:
            return try await !(s3?.multipartUploads(prefix: "").isEmpty ?? true)
        }
    }

    /// Polls `condition` for up to five seconds.
    /// Whether `condition` holds within a minute (a busy two-core machine can be slow to get there).
    func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<1200 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }
}

/// Bytes 0...255 over and over (byte i is `i * 7 + i / 256`, modulo 256). The pattern repeats every 65,536 bytes, so
/// it is copied from one period: a `map` per byte over 12 MB in a debug build kept one of CI's two task threads busy
/// for most of a second.
func patternBytes(_ count: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count { bytes += patternPeriod.prefix(count - bytes.count) }
    return bytes
}

/// The first 65,536 bytes of `patternBytes`: one period.
private let patternPeriod: [UInt8] = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 256) }

/// A plain TCP connection to the server, to send what an HTTP client would not (a body cut short). Its
/// blocking calls run on a Dispatch thread: blocking the test's task would starve the server's tasks.
final class RawConnection: @unchecked Sendable {
    let fd: Int32

    init(port: Int) throws {
        fd = LoopbackSocket.socket()
        guard fd >= 0 else { throw Failure("socket failed") }
        guard LoopbackSocket.connect(fd, port: port) == 0 else {
            systemClose(fd)
            throw Failure("connect failed")
        }
    }

    func send(_ bytes: [UInt8]) async throws {
        try await offThread { try self.sendBlocking(bytes) }
    }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    func readResponse() async -> String {
        (try? await offThread { self.readBlocking() }) ?? ""
    }

    func sendBlocking(_ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in systemSend(fd, raw.baseAddress! + done, bytes.count - done) }
            guard n > 0 else { throw Failure("send failed") }
            done += n
        }
    }

    /// Reads until the peer closes or the head of a response and `Content-Length` bytes of body arrived.
    func readBlocking() -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, 65536, 0) }
            if n <= 0 { break }
            data += buffer[0..<n]
            let text = String(decoding: data, as: UTF8.self)
            if let headEnd = text.range(of: "\r\n\r\n") {
                let head = text[..<headEnd.lowerBound].lowercased()
                if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                    let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)),
                    text.utf8.distance(from: headEnd.upperBound, to: text.utf8.endIndex) >= length
                {
                    break
                }
            }
        }
        return String(decoding: data, as: UTF8.self)
    }

    func close() { systemClose(fd) }
}

private func systemSend(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        send(fd, pointer, count, Int32(MSG_NOSIGNAL))
    #else
        send(fd, pointer, count, 0)
    #endif
}

private func systemClose(_ fd: Int32) { close(fd) }

extension RawConnection {
    /// A master-key upload of `name` sent with `Transfer-Encoding: chunked`, `pieces` chunks of `size` bytes; the raw
    /// response.
    func chunkedUpload(_ name: String, pieces: Int, of size: Int) async throws -> String {
        try await send(
            "POST /parse/files/\(name) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Parse-Application-Id: test-app\r\n"
                + "X-Parse-Master-Key: test-master-key\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n")
        let piece = patternBytes(size)
        for _ in 0..<pieces {
            try await send(String(piece.count, radix: 16) + "\r\n")
            try await send(piece)
            try await send("\r\n")
        }
        try await send("0\r\n\r\n")
        return await readResponse()
    }
}
