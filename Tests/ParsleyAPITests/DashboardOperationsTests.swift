import Foundation
import HTTPTypes
import NIOCore
import ParsleyCore
import ParsleyDomain
import Testing

/// The dashboard's operator endpoints over HTTP: the per-second figures behind the health charts, and a class's
/// export (JSON lines, CSV, through find's rules) and import (checked against the schema, written in batches, refused
/// rows reported), each with the session's CSRF token and the read-only rule. (The log table is checked on the
/// `parsley` executable, whose log handler feeds the ring: DashboardLogsProcessTests.)
@Suite("Dashboard operations")
struct DashboardOperationsTests {
    struct Session {
        let cookie: String?
        let csrf: String?
    }

    static func signIn(_ p: ParseClient, key: String = TestServer.masterKey) async throws -> Session {
        let (reply, cookie, csrf) = try await DashboardTests.signIn(p, ["masterKey": .string(key)])
        #expect(reply.status == 200, "\(reply.json)")
        return Session(cookie: cookie, csrf: csrf)
    }

    /// A call to `/dashboard/api<path>`: status, headers and the body's text.
    static func call(
        _ p: ParseClient, _ method: HTTPRequest.Method, _ path: String, body: String? = nil, _ s: Session, csrf: Bool = true
    ) async throws -> (status: Int, headers: HTTPFields, text: String) {
        var h = HTTPFields()
        if let cookie = s.cookie { h[.cookie] = cookie }
        if csrf, let token = s.csrf { h[DashboardTests.header("X-Parsley-Dashboard-CSRF")] = token }
        let (status, headers, buffer) = try await p.send("/dashboard/api" + path, method, h, body.map { ByteBuffer(string: $0) })
        return (status, headers, String(buffer: buffer))
    }

    static func json(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    static func numbers(_ value: JSONValue?) -> [Double] {
        (value?.arrayValue ?? []).map { v in
            switch v {
            case .int(let n): return Double(n)
            case .double(let d): return d
            default: return .nan
            }
        }
    }

    @Test(
        "health charts: one sample a second of requests, 4xx, 5xx, latency and the pool; signed in with the CSRF token only", arguments: Backend.all)
    func metrics(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, DashboardTests.options()) { p in
            let s = try await Self.signIn(p)
            for i in 0..<5 { _ = try await p.createId("Beat", ["n": .int(Int64(i))]) }
            for _ in 0..<3 { #expect(try await p.request(.get, "/classes/Beat/doesNotExist").status == 404) }
            try await Task.sleep(for: .milliseconds(2300))
            let r = try await Self.call(p, .get, "/metrics", s)
            #expect(r.status == 200, "\(r.text)")
            let m = try Self.json(r.text)
            #expect(m["step"] == 1)
            let times = Self.numbers(m["time"])
            #expect(times.count >= 2)
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 > $0 }, "one point a second, in order")
            for column in [
                "requests", "clientErrors", "serverErrors", "p50", "p99", "writesQueued", "readersBusy", "readers", "liveQueryEvents", "pushSent",
            ] {
                #expect(Self.numbers(m[column]).count == times.count, "\(column)")
            }
            #expect(Self.numbers(m["requests"]).reduce(0, +) >= 8)
            #expect(Self.numbers(m["clientErrors"]).reduce(0, +) >= 3)
            #expect(Self.numbers(m["serverErrors"]).reduce(0, +) == 0)
            #expect(Self.numbers(m["p99"]).contains { $0 > 0 })
            #expect(Self.numbers(m["readers"]).allSatisfy { $0 >= 1 })
            // Later points only, and since the start (the last hour, for a process younger than that).
            let last = try #require(times.last)
            let later = try Self.json(try await Self.call(p, .get, "/metrics?since=\(Int(last))", s).text)
            #expect(Self.numbers(later["time"]).allSatisfy { $0 > last })
            #expect(try Self.json(try await Self.call(p, .get, "/metrics?range=all", s).text)["step"] == 1)
            #expect(try await Self.call(p, .get, "/metrics", s, csrf: false).status == 401)
            #expect(try await Self.call(p, .get, "/logs", s, csrf: false).status == 401)
        }
    }

    /// 620 objects of Item (two pages of the export and a bit), with a text that needs CSV quoting on one.
    static func populate(_ p: ParseClient) async throws {
        var requests: [JSONValue] = []
        for i in 0..<620 {
            let title: JSONValue = i == 7 ? "a \"quoted\", multi\nline title" : .string("item \(i)")
            requests.append([
                "method": "POST", "path": "/parse/classes/Item", "body": ["n": .int(Int64(i)), "title": title, "done": .bool(i % 2 == 0)],
            ])
            if requests.count == 50 || i == 619 {
                let r = try await p.request(.post, "/batch", ["requests": .array(requests)])
                #expect(r.status == 200)
                requests = []
            }
        }
    }

    @Test(
        "export: a class as JSON lines or CSV, page by page in objectId order, filtered by where; read-only sessions may export",
        arguments: Backend.all)
    func export(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, DashboardTests.options()) { p in
            try await Self.populate(p)
            let s = try await Self.signIn(p)
            let lines = try await Self.call(p, .get, "/classes/Item/export?format=jsonl", s)
            #expect(lines.status == 200)
            #expect(lines.headers[.contentType]?.hasPrefix("application/x-ndjson") == true)
            #expect(lines.headers[.contentDisposition] == "attachment; filename=\"Item.jsonl\"")
            #expect(lines.headers[DashboardTests.header("Content-Security-Policy")] != nil)
            let objects = try lines.text.split(separator: "\n").map { try Self.json(String($0)) }
            #expect(objects.count == 620)
            let ids = objects.compactMap { $0["objectId"]?.stringValue }
            #expect(ids == ids.sorted() && Set(ids).count == 620)
            #expect(Set(objects.compactMap { $0["n"]?.integerValue }) == Set(0..<620))
            let some = try await Self.call(p, .get, "/classes/Item/export?where=" + ParseClient.encode(#"{"n":{"$gte":610}}"#), s)
            #expect(some.text.split(separator: "\n").count == 10)

            let csv = try await Self.call(p, .get, "/classes/Item/export?format=csv&where=" + ParseClient.encode(#"{"n":{"$lte":9}}"#), s)
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            var reader = CSV.Reader()
            let records = reader.feed(Array(csv.text.utf8)).map(\.fields)
            #expect(records.first == ["objectId", "createdAt", "updatedAt", "ACL", "done", "n", "title"])
            #expect(records.count == 11)
            let seven = try #require(records.first { $0.count > 6 && $0[5] == "7" })
            #expect(seven[6] == "a \"quoted\", multi\nline title")
            #expect(seven[4] == "false")
            #expect(csv.text.contains("\"a \"\"quoted\"\", multi\nline title\""))

            let readOnly = try await Self.signIn(p, key: DashboardTests.readOnlyKey)
            #expect(try await Self.call(p, .get, "/classes/Item/export", readOnly).text.split(separator: "\n").count == 620)
            let missing = try await Self.call(p, .get, "/classes/Nothing/export", s)
            #expect(try Self.json(missing.text)["code"] == 103)
            #expect(try await Self.call(p, .get, "/classes/Item/export?format=xml", s).status == 400)
            #expect(try await Self.call(p, .get, "/classes/Item/export", s, csrf: false).status == 401)
        }
    }

    static func makeItemClass(_ p: ParseClient) async throws -> (userId: String, existingId: String) {
        let schema = try await p.request(
            .post, "/schemas/Item",
            [
                "className": "Item",
                "fields": [
                    "title": ["type": "String"], "n": ["type": "Number"], "done": ["type": "Boolean"], "when": ["type": "Date"],
                    "owner": ["type": "Pointer", "targetClass": "_User"], "tags": ["type": "Array"],
                ],
            ])
        #expect(schema.status == 200, "\(schema.json)")
        let (userId, _) = try await p.newUser("owner")
        let existing = try await p.createId("Item", ["title": "already here"])
        return (userId, existing)
    }

    @Test(
        "import JSON lines: rows checked against the schema, a row the write refuses leaves its batch unwritten and the batch is written without it",
        arguments: Backend.all)
    func importLines(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, DashboardTests.options()) { p in
            let (userId, existing) = try await Self.makeItemClass(p)
            let s = try await Self.signIn(p)
            let owner = #"{"__type":"Pointer","className":"_User","objectId":"\#(userId)"}"#
            let input = [
                #"{"objectId":"imported01","title":"one","n":1,"owner":\#(owner),"createdAt":"2020-01-01T00:00:00.000Z"}"#,
                #"{"title":"two","n":2.5,"done":true,"when":{"__type":"Date","iso":"2024-05-01T10:00:00.000Z"},"tags":["a","b"]}"#,
                #"{"title":"three","n":"not a number"}"#,
                #"{"title":"four","color":"red"}"#,
                #"{"title":"five""#,
                #"{"objectId":"\#(existing)","title":"six"}"#,
                "",
                #"{"title":"eight","done":false}"#,
            ].joined(separator: "\n")
            let r = try await Self.call(p, .post, "/classes/Item/import?format=jsonl", body: input, s)
            #expect(r.status == 200, "\(r.text)")
            let report = try Self.json(r.text)
            #expect(report["imported"] == 3)
            #expect(report["batches"] == 1)
            #expect(report["refusedCount"] == 4)
            let refused = report["refused"]?.arrayValue ?? []
            #expect(refused.map { $0["line"]?.integerValue ?? 0 } == [3, 4, 5, 6])
            #expect(refused.map { $0["code"]?.integerValue ?? 0 } == [111, 105, 107, 137])
            // The rows that passed are there once each; the one whose id was taken changed nothing.
            let titles = try await p.find("Item", ["limit": "100"]).results.compactMap { $0["title"]?.stringValue }.sorted()
            #expect(titles == ["already here", "eight", "one", "two"])
            let one = try await p.get("Item", "imported01")
            #expect(one["owner"]?["objectId"] == .string(userId))
            #expect(one["createdAt"]?.stringValue?.hasPrefix("2020") == false)
            let two = try #require(try await p.find("Item", where: ["title": "two"]).results.first)
            #expect(two["n"] == .double(2.5) && two["done"] == true && two["tags"] == ["a", "b"])
            #expect(two["when"]?["iso"] == "2024-05-01T10:00:00.000Z")
            // Batches of one: each row alone.
            let many = (0..<5).map { #"{"title":"batch \#($0)"}"# }.joined(separator: "\n")
            let again = try Self.json(try await Self.call(p, .post, "/classes/Item/import", body: many, s).text)
            #expect(again["imported"] == 5 && again["batches"] == 1)
        }
    }

    @Test(
        "import CSV: cells read as their column's type, quoted cells, unknown columns refused before anything is written; read-only and system classes refused",
        arguments: Backend.all)
    func importCSV(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, DashboardTests.options()) { p in
            let (userId, _) = try await Self.makeItemClass(p)
            let s = try await Self.signIn(p)
            let csv = """
                objectId,title,n,done,when,owner,tags,createdAt
                csvrow0001,"plain, with comma",3,true,2024-02-03T04:05:06.000Z,\(userId),"[""x"",1]",2019-01-01T00:00:00.000Z
                ,"two
                lines",-4.25,false,,,,
                ,bad boolean,1,maybe,,,,
                ,bad date,1,true,yesterday,,,

                """
            let r = try await Self.call(p, .post, "/classes/Item/import?format=csv", body: csv, s)
            #expect(r.status == 200, "\(r.text)")
            let report = try Self.json(r.text)
            #expect(report["imported"] == 2)
            #expect(report["refused"]?.arrayValue?.map { $0["line"]?.integerValue ?? 0 } == [5, 6])
            #expect(report["refused"]?.arrayValue?.allSatisfy { $0["code"] == 111 } == true)
            let first = try await p.get("Item", "csvrow0001")
            #expect(first["title"] == "plain, with comma" && first["n"] == 3 && first["done"] == true)
            #expect(first["when"]?["iso"] == "2024-02-03T04:05:06.000Z")
            #expect(first["owner"]?["objectId"] == .string(userId) && first["owner"]?["className"] == "_User")
            #expect(first["tags"] == ["x", 1])
            let second = try #require(try await p.find("Item", where: ["n": -4.25]).results.first)
            #expect(second["title"] == "two\nlines" && second["done"] == false && second["when"] == nil)

            let before = try await p.find("Item", ["count": "1", "limit": "0"])["count"]
            let unknown = try await Self.call(p, .post, "/classes/Item/import?format=csv", body: "title,colour\nx,red\n", s)
            #expect(unknown.status == 400)
            #expect(try Self.json(unknown.text)["code"] == 105)
            #expect(try await p.find("Item", ["count": "1", "limit": "0"])["count"] == before)

            let readOnly = try await Self.signIn(p, key: DashboardTests.readOnlyKey)
            let refused = try await Self.call(p, .post, "/classes/Item/import?format=csv", body: "title\nsneaky\n", readOnly)
            #expect(refused.status == 403)
            #expect(try Self.json(refused.text)["code"] == 119)
            #expect(try Self.json(try await Self.call(p, .post, "/classes/_User/import", body: #"{"username":"x"}"#, s).text)["code"] == 119)
            #expect(try await Self.call(p, .post, "/classes/Item/import", body: #"{"title":"x"}"#, s, csrf: false).status == 401)
            #expect(try await p.find("Item", ["count": "1", "limit": "0"])["count"] == before)
        }
    }
}
