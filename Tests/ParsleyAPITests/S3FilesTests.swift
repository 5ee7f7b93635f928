import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import HTTPTypes
@testable import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import Testing

/// Files in an S3 bucket (Parse Server's `@parse/s3-files-adapter`) on a moto server on loopback, through the
/// real server over HTTP. The common file behaviour (round trip, ranges, delete, names, limits, interrupted
/// uploads) runs on S3 too through `FileBackend.s3` in FilesTests.
@Suite("S3 files")
struct S3FilesTests {
    /// A GET straight to a URL (the bucket or a presigned URL), without credentials.
    static func fetch(_ url: String) async throws -> (status: Int, bytes: [UInt8], headers: [(String, String)]) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), Array(buffer: body), response.headers.map { ($0.name.lowercased(), $0.value) })
    }

    @Test("a multipart upload (3 parts) streams in and out byte for byte, ranges across parts; nothing unfinished is left", arguments: Backend.all)
    func multipart(_ database: Backend) async throws {
        try await FilesHarness.with(.s3, database: database, { $0.maxRequestBytes = 64 << 20 }) { f in
            let bytes = patternBytes((12 << 20) + 777)
            let stored = try await f.stored("big.bin", bytes)
            let got = try await f.get(stored.path)
            #expect(got.status == 200)
            #expect(got.bytes == bytes)
            let across = try await f.get(stored.path, headers: [.range: "bytes=5242870-5242889"])
            #expect(across.status == 206)
            #expect(across.bytes == Array(bytes[5_242_870...5_242_889]))
            let s3 = try #require(f.s3)
            #expect(try await s3.multipartUploads(prefix: "").isEmpty)
            #expect(try await s3.list(prefix: "").keys == [stored.name])
        }
    }

    @Test("past the size limit in the middle of a multipart upload: 413/130, the upload aborted, no object", arguments: Backend.all)
    func sizeLimitAbortsMultipart(_ database: Backend) async throws {
        try await FilesHarness.with(.s3, database: database, { $0.maxRequestBytes = 11 << 20 }) { f in
            let connection = try RawConnection(port: f.port)
            defer { connection.close() }
            let response = try await connection.chunkedUpload("chunked.bin", pieces: 12, of: 1 << 20)
            #expect(response.hasPrefix("HTTP/1.1 413"))
            #expect(response.contains("\"code\":130"))
            let clean = try await f.eventually { try await f.leftovers().isEmpty }
            let left = try await f.leftovers()
            #expect(clean, "\(left)")
        }
    }

    @Test(
        "directAccess: public-read objects, URLs <endpoint>/<bucket>/<prefix><name> in uploads and objects, metadata and tags", arguments: Backend.all
    )
    func directAccess(_ database: Backend) async throws {
        let store = try await MotoServer.store(directAccess: true) { $0.bucketPrefix = "app/" }
        try await FilesHarness.with(.s3, database: database, s3Store: store) { f in
            let body: JSONValue = [
                "base64": "SGVsbG8sIFdvcmxkIQ==", "_ContentType": "text/plain", "fileData": ["metadata": ["owner": "me"], "tags": ["k": "v"]],
                "_ApplicationId": "test-app", "_MasterKey": "test-master-key",
            ]
            let r = try await f.client.raw(.post, "/parse/files/hello.txt", body: JSONWriter.string(body), headers: [.contentType: "text/plain"])
            #expect(r.status == 201)
            let name = try #require(r["name"]?.stringValue)
            let url = try #require(r["url"]?.stringValue)
            #expect(url == "\(store.client.endpoint)/\(store.options.bucket)/app/\(name)")
            let direct = try await Self.fetch(url)
            #expect(direct.status == 200)
            #expect(String(decoding: direct.bytes, as: UTF8.self) == "Hello, World!")
            #expect(direct.headers.contains { $0 == ("content-type", "text/plain") })
            // Objects name the file with the same URL.
            let object = try await f.client.createId("Doc", ["file": ["__type": "File", "name": .string(name)]])
            let read = try await f.client.get("Doc", object)
            #expect(read["file"]?["url"]?.stringValue == url)
            // The object is public-read, carries the metadata and the tags; the metadata route still answers.
            let (_, acl) = try await store.client.call(.GET, "app/" + name, query: [("acl", "")])
            #expect(acl.contains("http://acs.amazonaws.com/groups/global/AllUsers") && acl.contains("READ"))
            let (_, tagging) = try await store.client.call(.GET, "app/" + name, query: [("tagging", "")])
            #expect(tagging.contains("<Key>k</Key>") && tagging.contains("<Value>v</Value>"))
            let head = try #require(try await store.client.head("app/" + name))
            #expect(head.first(name: "x-amz-meta-owner") == "me")
            let metadata = try await f.client.raw(.get, "/parse/files/test-app/metadata/\(name)", headers: [:])
            #expect(metadata.json == ["metadata": ["owner": "me"]])
            // Served through the server as well.
            let proxied = try await f.get("/parse/files/test-app/\(name)")
            #expect(String(decoding: proxied.bytes, as: UTF8.self) == "Hello, World!")
        }
    }

    @Test("without directAccess the object is private and the URL is the server's", arguments: Backend.all)
    func privateByDefault(_ database: Backend) async throws {
        try await FilesHarness.with(.s3, database: database) { f in
            let stored = try await f.stored("secret.txt", Array("private".utf8), contentType: "text/plain")
            #expect(stored.path.hasPrefix("/parse/files/test-app/"))
            let s3 = try #require(f.s3)
            let (_, acl) = try await s3.call(.GET, stored.name, query: [("acl", "")])
            #expect(!acl.contains("AllUsers"))
            let direct = try await Self.fetch("\(s3.endpoint)/\(s3.bucket)/\(stored.name)")
            #expect(direct.status == 403)
            #expect(try await f.get(stored.path).bytes == Array("private".utf8))
        }
    }

    @Test("presignedUrl: a signed GET URL that expires as configured, and baseUrl with or without the prefix")
    func presignedAndBaseURL() async throws {
        let presigning = try await MotoServer.store(directAccess: true) {
            $0.presignedUrl = true
            $0.presignedUrlExpires = 120
        }
        try await FilesHarness.with(.s3, s3Store: presigning) { f in
            let r = try await f.upload("p.txt", Array("signed".utf8))
            let url = try #require(r["url"]?.stringValue)
            #expect(url.hasPrefix("\(presigning.client.endpoint)/\(presigning.options.bucket)/"))
            #expect(url.contains("X-Amz-Expires=120") && url.contains("X-Amz-Signature="))
            #expect(url.contains("X-Amz-Credential=parsley-test-key%2F"))
            let got = try await Self.fetch(url)
            #expect(got.status == 200)
            #expect(got.bytes == Array("signed".utf8))
        }
        let cdn = try await MotoServer.store(directAccess: true) {
            $0.bucketPrefix = "p/"
            $0.baseUrl = "https://cdn.example.com"
        }
        #expect(cdn.directURL("a_b c.txt") == "https://cdn.example.com/p/a_b%20c.txt")
        let direct = try await MotoServer.store(directAccess: true) {
            $0.bucketPrefix = "p/"
            $0.baseUrl = "https://cdn.example.com"
            $0.baseUrlDirect = true
        }
        #expect(direct.directURL("x.txt") == "https://cdn.example.com/x.txt")
        // A presigned URL only with directAccess.
        let notDirect = try await MotoServer.store(directAccess: false) { $0.presignedUrl = true }
        #expect(notDirect.directURL("x.txt") == nil)
    }

    @Test("S3 unreachable: /health answers, uploads fail with 130 (no secret in the answer), and work once S3 is back")
    func unreachableBucket() async throws {
        // Held for the whole test: refused while S3 is "down", and no parallel test's server can take it.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let port = reserved.port
        let store = try await MotoServer.store { $0.endpoint = "http://127.0.0.1:\(port)" }
        try await FilesHarness.with(.s3, s3Store: store) { f in
            let health = try await f.client.raw(.get, "/parse/health", headers: [:])
            #expect(health.status == 200)
            let failed = try await f.upload("down.txt", Array("x".utf8))
            #expect(failed.status == 400)
            #expect(failed.code == 130)
            #expect(failed.json["error"] == "Could not store file.")
            #expect(!"\(failed.json)".contains(MotoServer.credentials.secretAccessKey))
            let missing = try await f.get("/parse/files/test-app/0123_nothing.txt")
            #expect(missing.status != 200)
            #expect(!"\(store.options.credentials)".contains(MotoServer.credentials.secretAccessKey))
            let error = await #expect(throws: FileStoreError.self) { _ = try await store.info("x.txt") }
            #expect(!"\(String(describing: error))".contains(MotoServer.credentials.secretAccessKey))

            let (moto, _) = try await MotoServer.launch(port: port)
            defer { moto.killNow() }
            let again = try await f.upload("up.txt", Array("back".utf8))
            #expect(again.status == 201)
            let name = try #require(again["name"]?.stringValue)
            let got = try await f.get("/parse/files/test-app/\(name)")
            #expect(got.bytes == Array("back".utf8))
            let healthAgain = try await f.client.raw(.get, "/parse/health", headers: [:])
            #expect(healthAgain.status == 200)
        }
    }

    @Test("moving fs files to S3: reads fall back to the folder until copied, the copy streams, then the folder can go", arguments: Backend.all)
    func migrateFromFolder(_ database: Backend) async throws {
        let store = try await MotoServer.store()
        try await FilesHarness.with(.s3, database: database, s3Store: store, { $0.files.fallbackAdapter = .filesystem }) { f in
            // Files stored before the switch, in the folder (one of several parts).
            let folder = LocalFileStore(root: f.directory)
            try await folder.prepare()
            var old: [(String, [UInt8])] = []
            for (i, size) in [5, 11 << 20].enumerated() {
                let bytes = patternBytes(size + i)
                var pending: ByteBuffer? = ByteBuffer(bytes: bytes)
                let file = try await folder.create(StoredFile(name: "0\(i)_old\(i).bin", contentType: "application/octet-stream"), maxBytes: 64 << 20)
                {
                    defer { pending = nil }
                    return pending
                }
                old.append((file.name, bytes))
            }
            // Served during the move (from the folder), and new uploads go to the bucket.
            for (name, bytes) in old { #expect(try await f.get("/parse/files/test-app/\(name)").bytes == bytes) }
            let new = try await f.stored("new.txt", Array("new".utf8))
            #expect(try await store.client.list(prefix: "").keys == [new.name])
            // A client (not the master key) may name a file that is only in the folder yet.
            _ = try await f.client.createId("Doc", ["file": ["__type": "File", "name": .string(new.name)]])
            let object = try await f.client.create("Doc", ["file": ["__type": "File", "name": .string(old[0].0)]], master: false)
            #expect(object.status == 201, "\(object.json)")

            let summary = try await FileMigration(source: folder, target: store, deletingSource: true).run()
            #expect(summary.copied == 2)
            #expect(summary.bytes == Int64(old.map(\.1.count).reduce(0, +)))
            #expect(try await folder.list(after: nil, limit: 10).isEmpty)
            #expect(try await store.client.list(prefix: "").keys.sorted() == (old.map(\.0) + [new.name]).sorted())
            // Still served, now from the bucket; a second run finds nothing to do.
            for (name, bytes) in old { #expect(try await f.get("/parse/files/test-app/\(name)").bytes == bytes) }
            let again = try await FileMigration(source: folder, target: store).run()
            #expect(again == FileMigration.Summary())
            #expect(try await store.multipartUploads().isEmpty)
        }
    }

    @Test("SigV4: AWS's documented examples (a ranged GET, a presigned URL) and a path-style PUT as botocore signs it")
    func signatureVectors() {
        let signer = S3Signer(
            credentials: S3Credentials(accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1")
        let time = S3Signer.Timestamp(stamp: "20130524T000000Z")
        let get = signer.sign(
            method: "GET", host: "examplebucket.s3.amazonaws.com", path: "/test.txt", headers: [("Range", "bytes=0-9")],
            payloadHash: S3Signer.emptyPayload, at: time)
        #expect(get.last?.1.hasSuffix("Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41") == true)
        let presigned = signer.presignedQuery(host: "examplebucket.s3.amazonaws.com", path: "/test.txt", expires: 86400, at: time)
        #expect(presigned.hasSuffix("X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"))
        let put = signer.sign(
            method: "PUT", host: "127.0.0.1:5000", path: "/bucket/" + S3Signer.encodePath("dir/héllo w.txt"),
            query: [("partNumber", "2"), ("uploadId", "a/b=")], headers: [("Content-Type", "text/plain"), ("x-amz-meta-note", "  two   spaces ")],
            payloadHash: S3Signer.emptyPayload, at: time)
        #expect(put.last?.1.hasSuffix("Signature=05c02c87ae35edfff9d85fb5370ba5293e7500c2b1a311b6e1fd52e00881429d") == true)
        #expect(!"\(signer.credentials)".contains("wJalrXUtnFEMI"))
    }
}

extension S3FileStore {
    func multipartUploads() async throws -> [String] { try await client.multipartUploads(prefix: "").map(\.key) }
}
