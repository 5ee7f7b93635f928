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

/// A real Parsley server on a fresh database (SQLite in a temporary folder, or a fresh PostgreSQL database on
/// the test cluster), listening on 127.0.0.1 with an ephemeral port, and a small Parse REST client for it.
enum TestServer {
    static let appId = "test-app"
    static let masterKey = "test-master-key"

    static func options(_ configure: (inout ParseServerOptions) -> Void = { _ in }) -> ParseServerOptions {
        var o = ParseServerOptions(applicationId: appId, masterKey: masterKey)
        configure(&o)
        return o
    }

    /// Runs `body` against a live server on a fresh database of `backend`.
    static func with(
        backend: Backend = .sqlite, _ options: ParseServerOptions = options(), cloud: CloudCode = CloudCode(),
        rateLimits: [RateLimitRule] = [], _ body: @escaping @Sendable (ParseClient) async throws -> Void
    ) async throws {
        try await withAPI(backend: backend, options, cloud: cloud, rateLimits: rateLimits) { _, _, parse in try await body(parse) }
    }

    /// As `with`, also handing over the server's API object and its database (to subscribe to change events,
    /// or to open a second node on the same PostgreSQL database).
    static func withAPI(
        backend: Backend = .sqlite, _ options: ParseServerOptions = options(), cloud: CloudCode = CloudCode(),
        rateLimits: [RateLimitRule] = [], _ body: @escaping @Sendable (ParseAPI, TestDatabase, ParseClient) async throws -> Void
    ) async throws {
        let logger = TestDatabase.logger
        try await TestDatabase.with(backend, logger: logger) { db in
            let api = ParseAPI(
                services: try await ParseServices.open(options: options, database: db.database, cloud: cloud, adapters: .standard),
                rateLimits: rateLimits)
            let app = ParsleyApplication.application(api: api, host: "127.0.0.1", port: 0, logger: logger)
            try await app.test(.live) { client in
                var parse = ParseClient(client: client, options: options)
                parse.backend = backend
                try await body(api, db, parse)
            }
        }
    }
}

/// One HTTP answer: status, headers and the parsed JSON body.
struct Reply: Sendable {
    let status: Int
    let headers: HTTPFields
    let json: JSONValue

    subscript(key: String) -> JSONValue? { json[key] }
    var results: [JSONValue] { json["results"]?.arrayValue ?? [] }
    var code: Int? { json["code"]?.integerValue }
}

/// Parse REST calls with the master key by default, or as a plain client (`master: false`).
struct ParseClient: Sendable {
    typealias Send = @Sendable (String, HTTPRequest.Method, HTTPFields, ByteBuffer?) async throws -> (Int, HTTPFields, ByteBuffer)
    let send: Send
    let port: Int?
    let options: ParseServerOptions
    var mount = "/parse"
    /// The storage backend of the server under test.
    var backend: Backend = .sqlite

    init(client: any TestClientProtocol, options: ParseServerOptions) {
        self.send = { uri, method, headers, body in
            let r = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
            return (Int(r.status.code), r.headers, r.body)
        }
        self.port = client.port
        self.options = options
    }

    /// A client on its own connection (for concurrent requests).
    init(connection: TestClient, options: ParseServerOptions) {
        self.send = { uri, method, headers, body in
            let r = try await connection.execute(TestClient.Request(uri, method: method, headers: headers, body: body))
            return (Int(r.status.code), r.head.headerFields, r.body ?? ByteBuffer())
        }
        self.port = nil
        self.options = options
    }

    func headers(master: Bool, extra: [String: String] = [:]) -> HTTPFields {
        var h = HTTPFields()
        h[HTTPField.Name("X-Parse-Application-Id")!] = options.applicationId
        if master { h[HTTPField.Name("X-Parse-Master-Key")!] = options.masterKey }
        h[.contentType] = "application/json"
        for (k, v) in extra { h[HTTPField.Name(k)!] = v }
        return h
    }

    func raw(_ method: HTTPRequest.Method, _ path: String, body: String? = nil, headers: HTTPFields) async throws -> Reply {
        let started = ContinuousClock.now
        let answer: (Int, HTTPFields, ByteBuffer)
        do {
            answer = try await send(path, method, headers, body.map { ByteBuffer(string: $0) })
        } catch {
            // Names the request that failed (a read timeout alone does not say which one).
            throw Failure("\(method) \(path) failed after \(ContinuousClock.now - started): \(error)")
        }
        let (status, responseHeaders, responseBody) = answer
        let text = String(buffer: responseBody)
        let json = (try? JSONParser.parse(text)) ?? .string(text)
        return Reply(status: status, headers: responseHeaders, json: json)
    }

    func request(_ method: HTTPRequest.Method, _ path: String, _ body: JSONValue? = nil, master: Bool = true, extra: [String: String] = [:])
        async throws -> Reply
    {
        try await raw(method, mount + path, body: body.map(JSONWriter.string), headers: headers(master: master, extra: extra))
    }

    /// The Parse error code of a create (nil on success).
    func createCode(_ className: String, _ body: JSONValue, master: Bool = true) async throws -> Int? {
        try await create(className, body, master: master).code
    }

    func create(_ className: String, _ body: JSONValue, master: Bool = true) async throws -> Reply {
        try await request(.post, "/classes/\(className)", body, master: master)
    }

    /// Creates an object and returns its id (expects success).
    func createId(_ className: String, _ body: JSONValue) async throws -> String {
        let r = try await create(className, body)
        guard r.status == 201, let id = r["objectId"]?.stringValue else { throw Failure("create \(className) failed: \(r.status) \(r.json)") }
        return id
    }

    func get(_ className: String, _ id: String, _ query: String = "", master: Bool = true) async throws -> Reply {
        try await request(.get, "/classes/\(className)/\(id)\(query)", master: master)
    }

    func update(_ className: String, _ id: String, _ body: JSONValue, master: Bool = true) async throws -> Reply {
        try await request(.put, "/classes/\(className)/\(id)", body, master: master)
    }

    func delete(_ className: String, _ id: String, master: Bool = true) async throws -> Reply {
        try await request(.delete, "/classes/\(className)/\(id)", master: master)
    }

    /// `GET /classes/<className>?where=...&<params>` with URL-encoded values.
    func find(_ className: String, where w: JSONValue? = nil, _ params: [String: String] = [:], master: Bool = true) async throws -> Reply {
        var items: [String] = []
        if let w { items.append("where=" + Self.encode(JSONWriter.string(w))) }
        for (k, v) in params.sorted(by: { $0.key < $1.key }) { items.append("\(k)=\(Self.encode(v))") }
        return try await request(.get, "/classes/\(className)" + (items.isEmpty ? "" : "?" + items.joined(separator: "&")), master: master)
    }

    /// objectIds of a find, sorted.
    func ids(_ className: String, where w: JSONValue) async throws -> [String] {
        let r = try await find(className, where: w)
        guard r.status == 200 else { throw Failure("find failed: \(r.status) \(r.json)") }
        return r.results.compactMap { $0["objectId"]?.stringValue }.sorted()
    }

    static func encode(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
