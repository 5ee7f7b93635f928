import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NIOHTTP1
@testable import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import Testing

/// The `parsley` process on an S3 bucket (moto on loopback), configured by the S3 adapter's and AWS's environment
/// variables alone: `parsley files migrate` moving a folder's files into the bucket while the server serves them,
/// and S3's own `ETag` passed through to clients.
@Suite("S3 files: the parsley process", .serialized)
struct S3FilesProcessTests {
    static let masterKey = "s3-process-master-key"

    @Test("parsley files migrate --from fs --to s3 while a server serves the files; then S3's ETag and If-None-Match", arguments: Backend.all)
    func migrateCommand(_ backend: Backend) async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await MotoServer.store()
        try await store.prepare()
        let endpoint = try #require(store.options.endpoint)
        try await ParseServerConfigProcessTests.withDatabase(backend, dir) { uri in
            // Two files a Parse Server with the fs adapter left in the folder: one small, one of several parts.
            let folder = LocalFileStore(root: dir.appendingPathComponent("files").path)
            try await folder.prepare()
            var old: [(String, [UInt8])] = []
            for (i, size) in [7, (6 << 20) + 5].enumerated() {
                let bytes = patternBytes(size)
                var pending: ByteBuffer? = ByteBuffer(bytes: bytes)
                let file = try await folder.create(
                    StoredFile(name: "0\(i)_moved\(i).bin", contentType: "application/octet-stream"), maxBytes: 64 << 20
                ) {
                    defer { pending = nil }
                    return pending
                }
                old.append((file.name, bytes))
            }
            let environment = [
                "PARSE_SERVER_MASTER_KEY": Self.masterKey, "PARSE_SERVER_DATABASE_URI": uri,
                "PARSE_SERVER_FILES_ADAPTER": "@parse/s3-files-adapter", "PARSLEY_FILES_FALLBACK_ADAPTER": "fs",
                "S3_BUCKET": store.options.bucket, "AWS_ENDPOINT_URL_S3": endpoint, "AWS_REGION": "us-east-1",
                "AWS_ACCESS_KEY_ID": MotoServer.credentials.accessKeyId, "AWS_SECRET_ACCESS_KEY": MotoServer.credentials.secretAccessKey,
            ]
            let server = try ProcessTests.Server(dataDir: dir, environment: environment)
            defer { server.kill() }
            try await server.waitUntilHealthy()
            let port = server.port
            @Sendable func get(_ name: String, _ headers: HTTPFields = [:]) async throws -> TestClient.Response {
                try await TestClient.withClient(
                    host: "127.0.0.1", port: port,
                    operation: { client in
                        try await client.execute(TestClient.Request("/parse/files/proc-app/\(name)", method: .get, headers: headers))
                    })
            }
            for (name, bytes) in old {
                let before = try await get(name)
                #expect(before.status == .ok && Array(buffer: before.body ?? ByteBuffer()) == bytes, "\(name) from the folder")
            }

            // The command, with the same settings as the server, while it serves.
            var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARSE_SERVER_") }
            env["PARSLEY_DATA_DIR"] = dir.path
            for (k, v) in environment { env[k] = v }
            let migrate = try ChildProcess(
                ProcessTests.binary.path, ["files", "migrate", "--from", "fs", "--to", "s3", "--delete-source"], environment: env)
            await migrate.exited(killAfter: .seconds(120))
            let said = migrate.outputText()
            #expect(migrate.terminationStatus == 0, "\(said)")
            #expect(said.contains("files migrate: 2 copied (\(old.map(\.1.count).reduce(0, +)) bytes)"), "\(said)")
            #expect(!said.contains(MotoServer.credentials.secretAccessKey))
            #expect(try await folder.list(after: nil, limit: 10).isEmpty)
            #expect(try await store.client.list(prefix: "").keys.sorted() == old.map(\.0).sorted())

            // Served from the bucket now, byte for byte, with the object's own ETag; If-None-Match with it is 304.
            for (name, bytes) in old {
                let after = try await get(name)
                #expect(after.status == .ok && Array(buffer: after.body ?? ByteBuffer()) == bytes, "\(name) from the bucket")
                let s3ETag = try #require(try await store.client.head(name)?.first(name: "etag"))
                #expect(after.headers[.eTag] == s3ETag)
                let again = try await get(name, [.ifNoneMatch: s3ETag])
                #expect(again.status == .notModified)
                let other = try await get(name, [.ifNoneMatch: "\"not-it\""])
                #expect(other.status == .ok)
            }
            // A second run finds nothing to do.
            let second = try ChildProcess(ProcessTests.binary.path, ["files", "migrate", "--from", "fs", "--to", "s3"], environment: env)
            await second.exited(killAfter: .seconds(120))
            #expect(second.terminationStatus == 0 && second.outputText().contains("files migrate: 0 copied"), "\(second.outputText())")
        }
    }
}
