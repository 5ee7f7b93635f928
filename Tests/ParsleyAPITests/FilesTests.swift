import Foundation
import HTTPTypes
import NIOCore
import ParsleyCore
import ParsleyDomain
import Testing

@Suite("Files")
struct FilesTests {
    @Test("upload and download round-trip every byte value; HEAD, ETag and Location", arguments: FileBackend.allCases, Backend.all)
    func roundTrip(_ backend: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(backend, database: database) { f in
            // 2.5 MB: crosses the 1 MB write and chunk boundaries.
            let bytes = patternBytes(2_621_440 + 123)
            let r = try await f.upload("data.bin", bytes)
            #expect(r.status == 201)
            let name = try #require(r["name"]?.stringValue)
            let url = try #require(r["url"]?.stringValue)
            #expect(name.hasSuffix("_data.bin"))
            #expect(name.count == 32 + 1 + "data.bin".count)
            #expect(url.hasPrefix("http://") && url.hasSuffix("/parse/files/test-app/\(name)"))
            #expect(r.headers[.location] == url)
            let path = FilesHarness.path(url)

            let got = try await f.get(path)
            #expect(got.status == 200)
            #expect(got.bytes.count == bytes.count)
            #expect(got.bytes == bytes)
            #expect(got.headers[.contentType] == "application/octet-stream")
            #expect(got.headers[.contentLength] == String(bytes.count))
            #expect(got.headers[.acceptRanges] == "bytes")
            #expect(got.headers[.accessControlAllowOrigin] == "*")
            let etag = try #require(got.headers[.eTag])

            let head = try await f.get(path, method: .head)
            #expect(head.status == 200)
            #expect(head.bytes.isEmpty)
            #expect(head.headers[.contentLength] == String(bytes.count))
            #expect(head.headers[.eTag] == etag)

            let cached = try await f.get(path, headers: [.ifNoneMatch: etag])
            #expect(cached.status == 304)
            #expect(cached.bytes.isEmpty)

            // Every single byte value, in a small text file, with its content type.
            let all = (0...255).map { UInt8($0) }
            let small = try await f.stored("all.txt", all, contentType: "text/plain")
            let text = try await f.get(small.path)
            #expect(text.bytes == all)
            #expect(text.headers[.contentType] == "text/plain")

            // A name without an extension gets the content type's; downloads need no credentials.
            let pic = try await f.stored("pic", [0x89, 0x50, 0x4E, 0x47], contentType: "image/png")
            #expect(pic.name.hasSuffix("_pic.png"))
            let image = try await f.get(pic.path)
            #expect(image.headers[.contentType] == "image/png")

            let missing = try await f.get("/parse/files/test-app/0123_nothing.txt")
            #expect(missing.status == 404)
            #expect(String(decoding: missing.bytes, as: UTF8.self) == "File not found.")
            let otherApp = try await f.get("/parse/files/other-app/\(name)")
            #expect(otherApp.status == 403)
        }
    }

    @Test("range requests: 206 with Content-Range, 416 when unsatisfiable", arguments: FileBackend.allCases, Backend.all)
    func ranges(_ backend: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(backend, database: database) { f in
            let bytes = patternBytes(100)
            let file = try await f.stored("clip.mp4", bytes, contentType: "video/mp4")
            func range(_ header: String) async throws -> (status: Int, headers: HTTPFields, bytes: [UInt8]) {
                try await f.get(file.path, headers: [.range: header])
            }
            let first = try await range("bytes=0-9")
            #expect(first.status == 206)
            #expect(first.bytes == Array(bytes[0..<10]))
            #expect(first.headers[.contentRange] == "bytes 0-9/100")
            #expect(first.headers[.contentLength] == "10")
            #expect(first.headers[.contentType] == "video/mp4")
            let suffix = try await range("bytes=-5")
            #expect(suffix.status == 206)
            #expect(suffix.bytes == Array(bytes[95..<100]))
            #expect(suffix.headers[.contentRange] == "bytes 95-99/100")
            let open = try await range("bytes=10-")
            #expect(open.status == 206)
            #expect(open.bytes == Array(bytes[10...]))
            let beyond = try await range("bytes=50-1000")
            #expect(beyond.bytes == Array(bytes[50...]))
            let unsatisfiable = try await range("bytes=100-")
            #expect(unsatisfiable.status == 416)
            #expect(unsatisfiable.headers[.contentRange] == "bytes */100")
            let head = try await f.get(file.path, method: .head, headers: [.range: "bytes=0-9"])
            #expect(head.status == 206)
            #expect(head.headers[.contentLength] == "10")
            // A range across the 1 MB chunk boundary of the database store.
            let big = patternBytes(2_200_000)
            let large = try await f.stored("large.bin", big)
            let across = try await f.get(large.path, headers: [.range: "bytes=1048000-1049999"])
            #expect(across.status == 206)
            #expect(across.bytes == Array(big[1_048_000..<1_050_000]))
        }
    }

    @Test("delete needs the master key; a deleted file is never served", arguments: FileBackend.allCases, Backend.all)
    func delete(_ backend: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(backend, database: database) { f in
            let file = try await f.stored("gone.txt", Array("bye".utf8), contentType: "text/plain")
            let denied = try await f.client.raw(.delete, "/parse/files/\(file.name)", headers: f.headers(master: false))
            #expect(denied.status == 403)
            #expect(denied.json == ["error": "Permission denied"])
            let stillThere = try await f.get(file.path)
            #expect(stillThere.status == 200)
            let deleted = try await f.client.raw(.delete, "/parse/files/\(file.name)", headers: f.headers())
            #expect(deleted.status == 200)
            let after = try await f.get(file.path)
            #expect(after.status == 404)
            let metadata = try await f.get("/parse/files/test-app/metadata/\(file.name)")
            #expect(String(decoding: metadata.bytes, as: UTF8.self) == "{}")
            let again = try await f.client.raw(.delete, "/parse/files/\(file.name)", headers: f.headers())
            #expect(again.code == 153)
            let leftovers = try await f.leftovers()
            #expect(leftovers.isEmpty)
        }
    }

    @Test("names: traversal, separators, NUL and long names are 122; Unicode names work", arguments: FileBackend.allCases, Backend.all)
    func names(_ backend: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(backend, database: database) { f in
            let body = Array("x".utf8)
            for bad in ["..%2Fx", "a%2Fb", "a%5Cb", "a%00b", "tab%09name", "..", String(repeating: "n", count: 300)] {
                let r = try await f.upload(bad, body)
                #expect(r.status == 400, "\(bad)")
                #expect(r.code == 122, "\(bad)")
            }
            let long = try await f.upload(String(repeating: "n", count: 129), body)
            #expect(long.json["error"] == "Filename too long.")
            let nested = try await f.upload("a/b", body)
            #expect(nested.code == 122)
            let none = try await f.upload("", body)
            #expect(none.code == 122)
            #expect(try await f.leftovers().isEmpty)

            // Unicode stays (percent-encoded in the URL); characters that would break a URL become `_`.
            let unicode = "日本語 фото.png"
            let encoded = FileNames.urlEncode(unicode)
            let r = try await f.upload(encoded, [1, 2, 3], headers: f.headers(contentType: "image/png"))
            #expect(r.status == 201)
            let name = try #require(r["name"]?.stringValue)
            #expect(name.hasSuffix("_" + unicode))
            let url = try #require(r["url"]?.stringValue)
            #expect(!url.contains(" "))
            #expect(url.hasSuffix(FileNames.urlEncode(name)))
            let got = try await f.get(FilesHarness.path(url))
            #expect(got.status == 200)
            #expect(got.bytes == [1, 2, 3])
            #expect(got.headers[.contentType] == "image/png")
            let odd = try await f.upload("a%3Fb%23c%3Ad%25e.txt", body)
            #expect(odd["name"]?.stringValue?.hasSuffix("_a_b_c_d_e.txt") == true)

            // Lookups with a path in the name never reach outside the store.
            for probe in ["..%2Fdb.sqlite", "..%2F..%2Fdb.sqlite", ".uploads", ".meta%2F\(FileNames.urlEncode(name))", "%2Fetc%2Fpasswd"] {
                let r = try await f.get("/parse/files/test-app/\(probe)")
                #expect(r.status == 404, "\(probe)")
            }
            let traversalDelete = try await f.client.raw(.delete, "/parse/files/..%2Fdb.sqlite", headers: f.headers())
            #expect(traversalDelete.code == 122)
        }
    }

    @Test("the size limit answers 413/130 and stores nothing, with or without Content-Length", arguments: FileBackend.allCases, Backend.all)
    func sizeLimit(_ backend: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(backend, database: database, { $0.maxRequestBytes = 1 << 20 }) { f in
            let fits = try await f.upload("fits.bin", patternBytes(1 << 20))
            #expect(fits.status == 201)
            let deleted = try await f.client.raw(.delete, "/parse/files/\(fits["name"]?.stringValue ?? "")", headers: f.headers())
            #expect(deleted.status == 200)

            let tooLarge = try await f.upload("big.bin", patternBytes((1 << 20) + 1))
            #expect(tooLarge.status == 413)
            #expect(tooLarge.code == 130)
            #expect(try await f.leftovers().isEmpty)

            // Chunked: the limit is found while streaming, after the first megabyte was stored.
            let connection = try RawConnection(port: f.port)
            defer { connection.close() }
            let response = try await connection.chunkedUpload("chunked.bin", pieces: 6, of: 256 * 1024)
            #expect(response.hasPrefix("HTTP/1.1 413"))
            #expect(response.contains("\"code\":130"))
            let clean = try await f.eventually { try await f.leftovers().isEmpty }
            #expect(clean)

            let empty = try await f.upload("empty.bin", [])
            #expect(empty.code == 130)
            #expect(empty.json["error"] == "Invalid file upload.")
        }
    }

    @Test("a client that goes away mid-upload leaves no file and no row", arguments: FileBackend.allCases, Backend.all)
    func interruptedUpload(_ backend: FileBackend, _ database: Backend) async throws {
        // A long stall timeout: on a loaded machine the store (moto's S3 above all) can hold the server's reads back for
        // more than the default 30 s, and an upload abandoned for that leaves this client's blocking send waiting.
        try await FilesHarness.with(backend, database: database, { $0.files.uploadStallTimeout = .seconds(600) }) { f in
            let connection = try RawConnection(port: f.port)
            try await connection.send(
                "POST /parse/files/partial.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Parse-Application-Id: test-app\r\n"
                    + "X-Parse-Master-Key: test-master-key\r\nContent-Type: application/octet-stream\r\nContent-Length: 10000000\r\n\r\n")
            // Enough for the database store to have written chunks, and the S3 store to have started a multipart
            // upload (parts of 5 MiB), before the client leaves.
            try await connection.send(patternBytes(6 * 1024 * 1024))
            let started = try await f.eventually { try await f.uploadInProgress() }
            #expect(started)
            connection.close()
            let clean = try await f.eventually { try await f.leftovers().isEmpty }
            #expect(clean)
            let leftovers = try await f.leftovers()
            #expect(leftovers == [])
            // The server is still fine.
            let after = try await f.upload("after.txt", Array("ok".utf8))
            #expect(after.status == 201)
        }
    }

    @Test("an upload whose client stops sending (connection left open) is abandoned after the stall timeout", arguments: FileBackend.allCases)
    func stalledUpload(_ backend: FileBackend) async throws {
        try await FilesHarness.with(backend, database: .sqlite, { $0.files.uploadStallTimeout = .milliseconds(500) }) { f in
            let connection = try RawConnection(port: f.port)
            defer { connection.close() }
            try await connection.send(
                "POST /parse/files/stalled.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Parse-Application-Id: test-app\r\n"
                    + "X-Parse-Master-Key: test-master-key\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n")
            try await connection.send(patternBytes(100_000))
            // The server gives up on its own and answers with Parse's file-save error; nothing is left behind.
            let response = await connection.readResponse()
            #expect(response.contains("\"code\":130"), "\(response.prefix(300))")
            let clean = try await f.eventually { try await f.leftovers().isEmpty }
            #expect(clean)
            let after = try await f.upload("after.txt", Array("ok".utf8))
            #expect(after.status == 201)
        }
    }

    @Test("the JS SDK's JSON upload with base64, _ContentType, credentials in the body, metadata and tags", arguments: Backend.all)
    func javascriptSDK(_ database: Backend) async throws {
        try await FilesHarness.with(.filesystem, database: database) { f in
            let user = try await f.client.signUp("js-user")
            let body: JSONValue = [
                "base64": "SGVsbG8sIFdvcmxkIQ==", "_ContentType": "text/plain",
                "fileData": ["metadata": ["owner": "me"], "tags": ["k": "v"]],
                "_ApplicationId": "test-app", "_JavaScriptKey": "", "_ClientVersion": "js5.3.0", "_InstallationId": "inst-1",
                "_SessionToken": .string(user.token),
            ]
            let r = try await f.client.raw(.post, "/parse/files/hello.txt", body: JSONWriter.string(body), headers: [.contentType: "text/plain"])
            #expect(r.status == 201)
            let name = try #require(r["name"]?.stringValue)
            #expect(name.hasSuffix("_hello.txt"))
            let got = try await f.get(FilesHarness.path(try #require(r["url"]?.stringValue)))
            #expect(String(decoding: got.bytes, as: UTF8.self) == "Hello, World!")
            #expect(got.headers[.contentType] == "text/plain")
            let metadata = try await f.client.raw(.get, "/parse/files/test-app/metadata/\(name)", headers: [:])
            #expect(metadata.json == ["metadata": ["owner": "me"]])

            // No session in the body: public upload is off by default.
            var anonymousBody = body.objectValue!
            anonymousBody["_SessionToken"] = nil
            let denied = try await f.client.raw(
                .post, "/parse/files/hello.txt", body: JSONWriter.string(.object(anonymousBody)), headers: [.contentType: "text/plain"])
            #expect(denied.code == 130)
            #expect(denied.json["error"] == "File upload by public is disabled.")
            // A body that is not JSON and no application id header.
            let garbage = try await f.client.raw(.post, "/parse/files/hello.txt", body: "not json", headers: [.contentType: "text/plain"])
            #expect(garbage.status == 403)
            var bad = body.objectValue!
            bad["base64"] = "***"
            let invalid = try await f.client.raw(
                .post, "/parse/files/x.txt", body: JSONWriter.string(.object(bad)), headers: [.contentType: "text/plain"])
            #expect(invalid.code == 130)
        }
    }

    @Test("fileUpload: public, anonymous and authenticated users; the extension filter", arguments: Backend.all)
    func uploadPermissions(_ database: Backend) async throws {
        try await FilesHarness.with(.filesystem, database: database) { f in
            let bytes = Array("hi".utf8)
            let publicUpload = try await f.upload("p.txt", bytes, headers: f.headers(master: false))
            #expect(publicUpload.code == 130)
            #expect(publicUpload.json["error"] == "File upload by public is disabled.")
            let user = try await f.client.signUp("uploader")
            let userUpload = try await f.upload("u.txt", bytes, headers: f.headers(master: false, session: user.token))
            #expect(userUpload.status == 201)
            let anonymous = try await f.client.request(.post, "/users", ["authData": ["anonymous": ["id": "device-9"]]], master: false)
            let anonymousToken = try #require(anonymous["sessionToken"]?.stringValue)
            let anonymousUpload = try await f.upload("a.txt", bytes, headers: f.headers(master: false, session: anonymousToken))
            #expect(anonymousUpload.json["error"] == "File upload by anonymous user is disabled.")
            let html = try await f.upload("page.html", bytes, headers: f.headers(master: false, session: user.token, contentType: "text/html"))
            #expect(html.json["error"] == "File upload of extension html is disabled.")
            let htmlByType = try await f.upload("page", bytes, headers: f.headers(master: false, session: user.token, contentType: "text/html"))
            #expect(htmlByType.code == 130)
            let masterHTML = try await f.upload("page.html", bytes, headers: f.headers(contentType: "text/html"))
            #expect(masterHTML.status == 201)
            // Served sandboxed: opening it runs no script on the API's origin.
            let page = try await f.get(FilesHarness.path(masterHTML["url"]?.stringValue ?? ""))
            #expect(page.headers[.contentType] == "text/html")
            #expect(page.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
            #expect(page.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            let badToken = try await f.upload("u.txt", bytes, headers: f.headers(master: false, session: "r:nope"))
            #expect(badToken.code == 209)
        }
        try await FilesHarness.with(
            .filesystem, database: database,
            {
                $0.files.upload = FileUploadOptions(enableForPublic: true, enableForAnonymousUser: true, enableForAuthenticatedUser: false)
            }
        ) { f in
            let bytes = Array("hi".utf8)
            let publicUpload = try await f.upload("p.txt", bytes, headers: f.headers(master: false))
            #expect(publicUpload.status == 201)
            let user = try await f.client.signUp("uploader")
            let userUpload = try await f.upload("u.txt", bytes, headers: f.headers(master: false, session: user.token))
            #expect(userUpload.json["error"] == "File upload by authenticated user is disabled.")
            let anonymous = try await f.client.request(.post, "/users", ["authData": ["anonymous": ["id": "device-9"]]], master: false)
            let anonymousToken = try #require(anonymous["sessionToken"]?.stringValue)
            let anonymousUpload = try await f.upload("a.txt", bytes, headers: f.headers(master: false, session: anonymousToken))
            #expect(anonymousUpload.status == 201)
        }
    }

    @Test("a File field must name an existing file; every read carries its url, includes too", arguments: FileBackend.allCases, Backend.all)
    func fileFields(_ backend: FileBackend, _ database: Backend) async throws {
        try await FilesHarness.with(backend, database: database, { $0.allowClientClassCreation = true }) { f in
            let user = try await f.client.signUp("journal")
            let file = try await f.stored("photo.jpg", [0xFF, 0xD8, 0xFF], contentType: "image/jpeg")
            let url = "http://localhost/parse/files/test-app/\(file.name)"

            let missing = try await f.client.asUser(user.token, .post, "/classes/Entry", ["picture": ["__type": "File", "name": "abc_nothing.jpg"]])
            #expect(missing.status == 400)
            #expect(missing.code == 111)
            let nested = try await f.client.asUser(
                user.token, .post, "/classes/Entry", ["pictures": [["__type": "File", "name": "abc_nothing.jpg"]]])
            #expect(nested.code == 111)

            let created = try await f.client.asUser(
                user.token, .post, "/classes/Entry", ["picture": ["__type": "File", "name": .string(file.name), "url": "http://elsewhere/x"]])
            #expect(created.status == 201)
            let id = try #require(created["objectId"]?.stringValue)
            let got = try await f.client.asUser(user.token, .get, "/classes/Entry/\(id)")
            #expect(got["picture"] == ["__type": "File", "name": .string(file.name), "url": .string(url)])
            let found = try await f.client.asUser(user.token, .get, "/classes/Entry")
            #expect(found.results.first?["picture"]?["url"] == .string(url))
            let updateMissing = try await f.client.asUser(
                user.token, .put, "/classes/Entry/\(id)", ["picture": ["__type": "File", "name": "x_gone.png"]])
            #expect(updateMissing.code == 111)

            // Through a pointer with include, and inside arrays and objects.
            let parent = try await f.client.asUser(
                user.token, .post, "/classes/Journal",
                [
                    "entry": ["__type": "Pointer", "className": "Entry", "objectId": .string(id)],
                    "gallery": [["__type": "File", "name": .string(file.name)]],
                ])
            let parentId = try #require(parent["objectId"]?.stringValue)
            let included = try await f.client.asUser(user.token, .get, "/classes/Journal/\(parentId)?include=entry")
            #expect(included["entry"]?["picture"]?["url"] == .string(url))
            #expect(included["gallery"]?.arrayValue?.first?["url"] == .string(url))

            // The master key may name any file (migrations); reads still add the url.
            let legacy = try await f.client.create("Entry", ["picture": ["__type": "File", "name": "legacy_old.png"]])
            #expect(legacy.status == 201)

            // A file found by the checks above and deleted since: refused at once (the check's memory of it is gone).
            #expect(try await f.client.raw(.delete, "/parse/files/\(file.name)", headers: f.headers()).status == 200)
            let deleted = try await f.client.asUser(
                user.token, .put, "/classes/Entry/\(id)", ["picture": ["__type": "File", "name": .string(file.name)]])
            #expect(deleted.code == 111, "\(deleted.json)")
        }
    }

    @Test("publicServerURL is the base of file URLs", arguments: Backend.all)
    func publicURL(_ database: Backend) async throws {
        try await FilesHarness.with(.filesystem, database: database, { $0.publicServerURL = "https://api.example.com/parse/" }) { f in
            let r = try await f.upload("a.txt", Array("a".utf8))
            let name = try #require(r["name"]?.stringValue)
            #expect(r["url"] == .string("https://api.example.com/parse/files/test-app/\(name)"))
            let id = try await f.client.createId("Doc", ["file": ["__type": "File", "name": .string(name)]])
            let got = try await f.client.get("Doc", id)
            #expect(got["file"]?["url"] == .string("https://api.example.com/parse/files/test-app/\(name)"))
        }
    }
}
