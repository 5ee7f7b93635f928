import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Parse Server 9's file changes on the wire: `beforeFind`/`afterFind(Parse.File)` around downloads, and
/// `fileUpload.allowedFileUrlDomains` for the File values objects save.
@Suite("Parse Server 9 files")
struct ParseServer9FilesTests {
    static func download(_ p: ParseClient, _ name: String, token: String? = nil) async throws -> Reply {
        var headers = HTTPFields()
        if let token { headers = p.headers(master: false, extra: ["X-Parse-Session-Token": token]) }
        return try await p.raw(.get, p.mount + "/files/\(TestServer.appId)/\(name)", headers: headers)
    }

    @Test(
        "beforeFind(Parse.File) may refuse a download (403 with its error) or set headers; afterFind may refuse or force a download",
        arguments: Backend.all)
    func findTriggers(_ backend: Backend) async throws {
        let seen = CloudCodeTests.AfterLog()
        var cloud = CloudCode()
        cloud.beforeFindFile { req in
            seen.add("beforeFind \(req.user?["username"]?.stringValue ?? "public")")
            if req.file.name.hasSuffix("private.txt"), req.user == nil { throw ParseError(.operationForbidden, "sign in to download") }
            try req.file.setHeader("Cache-Control", "private, max-age=60")
        }
        cloud.afterFindFile { req in
            if req.file.name.hasSuffix(".csv") { req.file.forceDownload = true }
            if req.file.name.hasSuffix("gone.txt") { throw ParseError(.objectNotFound, "withdrawn") }
        }
        try await TestServer.with(backend: backend, cloud: cloud) { p in
            let ann = try await p.signUp("ann")
            let file = try await p.uploadFile(ann.token, "private.txt", "secret words", contentType: "text/plain")
            let name = try #require(file["name"]?.stringValue)

            let refused = try await Self.download(p, name)
            #expect(refused.status == 403)
            #expect(refused.json == ["code": 119, "error": "sign in to download"], "\(refused.json)")
            let allowed = try await Self.download(p, name, token: ann.token)
            #expect(allowed.status == 200)
            #expect(allowed.json == .string("secret words"))
            #expect(allowed.headers[.cacheControl] == "private, max-age=60")
            #expect(allowed.headers[.contentDisposition] == nil)
            #expect(seen.all == ["beforeFind public", "beforeFind ann"])

            let csv = try #require(try await p.uploadFile(ann.token, "report.csv", "a,b", contentType: "text/csv")["name"]?.stringValue)
            let forced = try await Self.download(p, csv)
            #expect(forced.status == 200)
            #expect(forced.headers[.contentDisposition] == "attachment;filename=\(csv)")

            let gone = try #require(try await p.uploadFile(ann.token, "gone.txt", "x", contentType: "text/plain")["name"]?.stringValue)
            let withdrawn = try await Self.download(p, gone)
            #expect(withdrawn.status == 403)
            #expect(withdrawn.json == ["code": 101, "error": "withdrawn"])
            // An unknown file is still a plain 404.
            #expect(try await Self.download(p, "nothing.txt").status == 404)
        }
    }

    @Test("file webhooks on class @File: beforeFind may refuse a download, afterFind may force it; both get the file", arguments: Backend.all)
    func findWebhooks(_ backend: Backend) async throws {
        try await WebhookReceiver.with { hooks in
            try await TestServer.with(backend: backend, WebhooksTests.options) { p in
                hooks.respond(
                    "/beforeFind",
                    .compute { body in
                        body["file"]?["name"]?.stringValue?.hasSuffix("secret.txt") == true ? ["error": "not for you"] : ["success": [:]]
                    })
                hooks.respond("/afterFind", .json(["success": ["forceDownload": true]]))
                for trigger in ["beforeFind", "afterFind"] {
                    let made = try await p.request(
                        .post, "/hooks/triggers", ["className": "@File", "triggerName": .string(trigger), "url": .string(hooks.url("/\(trigger)"))])
                    #expect(made.status == 200)
                }
                let ann = try await p.signUp("ann")
                let secret = try #require(try await p.uploadFile(ann.token, "secret.txt", "psst", contentType: "text/plain")["name"]?.stringValue)
                let refused = try await Self.download(p, secret)
                #expect(refused.status == 403)
                #expect(refused.json == ["code": 141, "error": "not for you"], "\(refused.json)")
                let notes = try #require(try await p.uploadFile(ann.token, "notes.txt", "hello", contentType: "text/plain")["name"]?.stringValue)
                let forced = try await Self.download(p, notes)
                #expect(forced.status == 200)
                #expect(forced.json == .string("hello"))
                #expect(forced.headers[.contentDisposition] == "attachment;filename=\(notes)")
                let call = try #require(hooks.calls(to: "/afterFind").first)
                #expect(call.body["file"]?["name"] == .string(notes))
                #expect(call.body["triggerName"] == "afterFind")
                #expect(call.body["fileSize"] == 5)
            }
        }
    }

    @Test("fileUpload.allowedFileUrlDomains: a saved File value's url must name a listed host; the default * allows any", arguments: Backend.all)
    func allowedFileUrlDomains(_ backend: Backend) async throws {
        @Sendable func file(_ url: String) -> JSONValue { ["__type": "File", "name": "a.txt", "url": .string(url)] }
        let options = TestServer.options { $0.files.upload.allowedFileUrlDomains = ["files.example.com", "*.cdn.example.com"] }
        try await TestServer.with(backend: backend, options) { p in
            let refused = try await p.create("Doc", ["f": file("https://evil.example.net/a.txt")])
            #expect(refused.status == 400)
            #expect(refused.json == ["code": 130, "error": "File URL domain 'evil.example.net' is not allowed."], "\(refused.json)")
            #expect(try await p.create("Doc", ["list": [file("http://x.cdn.example.com.evil.net/a")]]).code == 130)
            #expect(try await p.create("Doc", ["nested": ["f": file("https://attacker.test/a")]]).code == 130)
            #expect(try await p.create("Doc", ["f": file("not a url")]).json == ["code": 130, "error": "Invalid file URL."])
            let id = try await p.createId("Doc", ["f": file("https://FILES.example.com/a.txt")])
            #expect(try await p.create("Doc", ["f": file("https://img.cdn.example.com:8443/a.txt")]).status == 201)
            #expect(try await p.update("Doc", id, ["f": file("https://evil.example.net/b.txt")]).code == 130)
            #expect(try await p.create("Doc", ["f": ["__type": "File", "name": "no-url.txt"]]).status == 201)
        }
        #expect(FileUploadOptions().allowedFileUrlDomains == ["*"])
        try await TestServer.with(backend: backend) { p in
            let anywhere = try await p.create("Doc", ["f": file("https://anywhere.test/a.txt")])
            #expect(anywhere.status == 201)
        }
    }
}

extension ParseServer9FilesTests {
    static func upload(_ p: ParseClient, _ bytes: Int, limit: String?, master: Bool) async throws -> Reply {
        var h = p.headers(master: master)
        h[.contentType] = "application/octet-stream"
        if let limit { h[HTTPField.Name("X-Parse-Upload-Max-Size")!] = limit }
        return try await p.raw(.post, p.mount + "/files/blob.bin", body: String(repeating: "x", count: bytes), headers: h)
    }

    @Test("a per-file maxUploadSize (X-Parse-Upload-Max-Size) with the master key replaces maxUploadSize for that upload", arguments: Backend.all)
    func perFileLimit(_ backend: Backend) async throws {
        let options = TestServer.options {
            $0.maxRequestBytes = 1000
            $0.files.upload.enableForPublic = true
        }
        try await TestServer.with(backend: backend, options) { p in
            #expect(try await Self.upload(p, 2000, limit: nil, master: true).status == 413)
            let raised = try await Self.upload(p, 2000, limit: "3kb", master: true)
            #expect(raised.status == 201, "\(raised.json)")
            let lowered = try await Self.upload(p, 600, limit: "500", master: true)
            #expect(lowered.status == 413)
            #expect(lowered.json == ["code": 130, "error": "File is larger than the maximum upload size of 500 bytes."])
            let client = try await Self.upload(p, 10, limit: "3kb", master: false)
            #expect(client.json == ["code": 119, "error": "Permission denied"], "\(client.json)")
            #expect(try await Self.upload(p, 10, limit: "lots", master: true).json == ["code": 130, "error": "Invalid maxUploadSize: lots."])
            #expect(try await Self.upload(p, 10, limit: nil, master: false).status == 201)
        }
    }
}
