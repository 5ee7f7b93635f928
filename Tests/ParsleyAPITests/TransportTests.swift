import HTTPTypes
import NIOCore
import ParsleyCore
import ParsleyDomain
import Testing

@Suite("Transport")
struct TransportTests {
    @Test("health answers GET and POST without credentials", arguments: Backend.all)
    func health(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let get = try await p.raw(.get, "/parse/health", headers: [:])
            #expect(get.status == 200)
            #expect(get.json == ["status": "ok"])
            let post = try await p.raw(.post, "/parse/health", headers: [:])
            #expect(post.json == ["status": "ok"])
        }
    }

    @Test("a wrong or missing application id is 403 unauthorized", arguments: Backend.all)
    func unauthorized(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let none = try await p.raw(.get, "/parse/classes/A", headers: [:])
            #expect(none.status == 403)
            #expect(none.json == ["error": "unauthorized"])
            var h = HTTPFields()
            h[HTTPField.Name("X-Parse-Application-Id")!] = "other"
            let wrong = try await p.raw(.get, "/parse/classes/A", headers: h)
            #expect(wrong.status == 403)
            // A wrong master key is ignored, as in Parse Server: the request is a client's (no private object, no
            // master-only route, /loginAs 119).
            var m = p.headers(master: false)
            m[HTTPField.Name("X-Parse-Master-Key")!] = "not-the-key"
            _ = try await p.createId("A", ["x": 1, "ACL": [:]])
            let badMaster = try await p.raw(.get, "/parse/classes/A", headers: m)
            #expect(badMaster.status == 200)
            #expect(badMaster.results.isEmpty, "\(badMaster.json)")
            let schemas = try await p.raw(.get, "/parse/schemas", headers: m)
            #expect(schemas.status == 403)
            #expect(schemas.json == ["error": "Permission denied"])
            let user = try await p.signUp("forger")
            let loginAs = try await p.raw(.post, "/parse/loginAs", body: #"{"userId":"\#(user.id)"}"#, headers: m)
            #expect(loginAs.status == 400)
            #expect(loginAs.code == 119)
        }
    }

    @Test("configured client keys are enforced", arguments: Backend.all)
    func clientKeys(_ backend: Backend) async throws {
        try await TestServer.with(
            backend: backend,
            TestServer.options {
                $0.restAPIKey = "rest-key"; $0.allowClientClassCreation = true
            }
        ) { p in
            let without = try await p.create("A", ["x": 1], master: false)
            #expect(without.status == 403)
            let with = try await p.raw(
                .post, "/parse/classes/A", body: #"{"x":1}"#, headers: p.headers(master: false, extra: ["X-Parse-REST-API-Key": "rest-key"]))
            #expect(with.status == 201)
            let wrong = try await p.raw(
                .post, "/parse/classes/A", body: #"{"x":1}"#, headers: p.headers(master: false, extra: ["X-Parse-REST-API-Key": "nope"]))
            #expect(wrong.status == 403)
        }
    }

    @Test("JS SDK style: text/plain POST with _method and body credentials", arguments: Backend.all)
    func javascriptSDK(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            var h = HTTPFields()
            h[.contentType] = "text/plain"
            let create = try await p.raw(
                .post, "/parse/classes/GameScore",
                body: #"{"score":7,"_ApplicationId":"test-app","_MasterKey":"test-master-key","_ClientVersion":"js5.3.0","_InstallationId":"i-1"}"#,
                headers: h)
            #expect(create.status == 201)
            let id = try #require(create["objectId"]?.stringValue)
            let get = try await p.raw(
                .post, "/parse/classes/GameScore/\(id)", body: #"{"_method":"GET","_ApplicationId":"test-app","_MasterKey":"test-master-key"}"#,
                headers: h)
            #expect(get.status == 200)
            #expect(get["score"] == 7)
            #expect(get["_ApplicationId"] == nil)
            let put = try await p.raw(
                .post, "/parse/classes/GameScore/\(id)",
                body: #"{"_method":"PUT","score":{"__op":"Increment","amount":1},"_ApplicationId":"test-app","_MasterKey":"test-master-key"}"#,
                headers: h)
            #expect(put["score"] == 8)
            let find = try await p.raw(
                .post, "/parse/classes/GameScore",
                body: #"{"_method":"GET","where":{"score":8},"count":1,"_ApplicationId":"test-app","_MasterKey":"test-master-key"}"#, headers: h)
            #expect(find["count"] == 1)
            #expect(find.results.count == 1)
            let delete = try await p.raw(
                .post, "/parse/classes/GameScore/\(id)", body: #"{"_method":"DELETE","_ApplicationId":"test-app","_MasterKey":"test-master-key"}"#,
                headers: h)
            #expect(delete.json == [:])
            let noApp = try await p.raw(.post, "/parse/classes/GameScore", body: #"{"_method":"GET","_ApplicationId":"wrong"}"#, headers: h)
            #expect(noApp.status == 403)
        }
    }

    @Test("ParseSwift style: JSON-encoded query values are accepted", arguments: Backend.all)
    func parseSwiftQueryEncoding(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            for i in 0..<5 { _ = try await p.createId("Entry", ["mood": .string(i % 2 == 0 ? "happy" : "sad"), "n": .int(Int64(i))]) }
            let r = try await p.find("Entry", where: ["mood": "happy"], ["order": #"["-n"]"#, "keys": #"["mood"]"#, "limit": "2", "count": "true"])
            #expect(r.status == 200)
            #expect(r["count"] == 3)
            #expect(r.results.map { $0["n"] } == [nil, nil])
            #expect(r.results.count == 2)
            #expect(r.results.allSatisfy { $0["mood"] == "happy" && $0["objectId"] != nil && $0["createdAt"] != nil })
        }
    }

    @Test("CORS preflight and headers", arguments: Backend.all)
    func cors(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let pre = try await p.raw(.options, "/parse/classes/A", headers: [:])
            #expect(pre.status == 200)
            #expect(pre.headers[.accessControlAllowOrigin] == "*")
            #expect(pre.headers[.accessControlAllowHeaders]?.contains("X-Parse-Session-Token") == true)
            let err = try await p.raw(.get, "/parse/classes/A", headers: [:])
            #expect(err.headers[.accessControlAllowOrigin] == "*")
        }
    }

    @Test("bad input gets Parse errors and the server keeps serving", arguments: Backend.all)
    func badInput(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.maxRequestBytes = 64 * 1024 }) { p in
            let h = p.headers(master: true)
            let malformed = try await p.raw(.post, "/parse/classes/A", body: "{not json", headers: h)
            #expect(malformed.status == 400)
            #expect(malformed.code == 107)
            let notObject = try await p.raw(.post, "/parse/classes/A", body: "[1,2]", headers: h)
            #expect(notObject.code == 107)
            let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
            let nested = try await p.raw(.post, "/parse/classes/A", body: #"{"a":"# + deep + "}", headers: h)
            #expect(nested.status == 400)
            #expect(nested.code == 107)
            let huge = try await p.raw(.post, "/parse/classes/A", body: #"{"a":""# + String(repeating: "x", count: 100_000) + #""}"#, headers: h)
            #expect(huge.status == 413)
            #expect(huge.code != nil)
            let (badUTF8, _, badUTF8Body) = try await p.send(
                "/parse/classes/A", .post, h, ByteBuffer(bytes: [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D]))
            #expect(badUTF8 == 400)
            #expect(String(buffer: badUTF8Body).contains("107"))
            let sqlName = try await p.raw(.get, "/parse/classes/A%22%3B%20DROP%20TABLE%20x", headers: h)
            #expect(sqlName.code == 103)
            let unknownRoute = try await p.raw(.get, "/parse/nothing-here", headers: h)
            #expect(unknownRoute.status == 404)
            let ok = try await p.create("A", ["fine": true])
            #expect(ok.status == 201)
            let found = try await p.find("A")
            #expect(found.results.count == 1)
        }
    }

    @Test("serverInfo needs the master key", arguments: Backend.all)
    func serverInfo(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let master = try await p.request(.get, "/serverInfo")
            #expect(master.status == 200)
            #expect(master["parseServerVersion"]?.stringValue == "9.10.0")
            let client = try await p.request(.get, "/serverInfo", master: false)
            #expect(client.status == 403)
        }
    }
}
