import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Testing

/// Parse Server's options about the HTTP edge, through the real server: `trustProxy` (who the client is behind a load
/// balancer) and `allowOrigin` / `allowHeaders` (CORS answers, preflight included).
@Suite("Options: trustProxy, allowOrigin, allowHeaders")
struct EdgeOptionsTests {
    static func cloud() -> CloudCode {
        var cloud = CloudCode()
        cloud.define("ip") { req in JSONValue.string(req.ip ?? "none") }
        return cloud
    }

    static func ip(_ p: ParseClient, forwardedFor: String?) async throws -> JSONValue? {
        try await p.request(.post, "/functions/ip", [:], master: false, extra: forwardedFor.map { ["X-Forwarded-For": $0] } ?? [:])["result"]
    }

    @Test("trustProxy unset: X-Forwarded-For is not believed; the client is the TCP peer (req.ip, masterKeyIps)", arguments: Backend.all)
    func noTrust(_ backend: Backend) async throws {
        let options = TestServer.options {
            $0.security.masterKeyIps = [IPRange("10.1.2.3")!]
            $0.allowClientClassCreation = true
        }
        try await TestServer.with(backend: backend, options, cloud: Self.cloud()) { p in
            #expect(try await Self.ip(p, forwardedFor: "10.1.2.3") == "127.0.0.1")
            // A forged header does not make the master key count.
            let schemas = try await p.request(.get, "/schemas", extra: ["X-Forwarded-For": "10.1.2.3"])
            #expect(schemas.status == 403)
            let create = try await p.request(.post, "/classes/Doc", ["a": 1], extra: ["X-Forwarded-Proto": "https"])
            #expect(create.status == 201, "\(create.json)")
            #expect(create.headers[.location]?.hasPrefix("http://") == true)
        }
    }

    @Test(
        "trustProxy true: the leftmost X-Forwarded-For entry is the client (req.ip, masterKeyIps); X-Forwarded-Proto https makes URLs https",
        arguments: Backend.all)
    func trustAll(_ backend: Backend) async throws {
        let options = TestServer.options {
            $0.security.trustProxy = .all
            $0.security.masterKeyIps = [IPRange("10.1.2.3")!]
        }
        try await TestServer.with(backend: backend, options, cloud: Self.cloud()) { p in
            #expect(try await Self.ip(p, forwardedFor: "10.1.2.3, 192.168.0.7") == "10.1.2.3")
            #expect(try await Self.ip(p, forwardedFor: nil) == "127.0.0.1")
            #expect(try await p.request(.get, "/schemas", extra: ["X-Forwarded-For": "10.1.2.3"]).status == 200)
            // From the proxy's own address the master key is refused: masterKeyIps sees the forwarded client.
            #expect(try await p.request(.get, "/schemas").status == 403)
            #expect(try await p.request(.get, "/schemas", extra: ["X-Forwarded-For": "10.9.9.9"]).status == 403)
            let create = try await p.request(
                .post, "/classes/Doc", ["a": 1], extra: ["X-Forwarded-For": "10.1.2.3", "X-Forwarded-Proto": "https, http"])
            #expect(create.status == 201)
            #expect(create.headers[.location]?.hasPrefix("https://") == true, "\(create.headers)")
        }
    }

    @Test("trustProxy as hops and as trusted ranges: the walk stops at the first untrusted hop", arguments: Backend.all)
    func trustHopsAndRanges(_ backend: Backend) async throws {
        let oneHop = TestServer.options { $0.security.trustProxy = .hops(1) }
        try await TestServer.with(backend: backend, oneHop, cloud: Self.cloud()) { p in
            // One hop trusted (the TCP peer): the client is the rightmost entry, whatever the client put before it.
            let forwarded = try await Self.ip(p, forwardedFor: "1.1.1.1, 10.0.0.5")
            let direct = try await Self.ip(p, forwardedFor: nil)
            #expect(forwarded == "10.0.0.5")
            #expect(direct == "127.0.0.1")
        }
        let ranges = TrustProxy.list(["loopback", "10.0.0.0/8"])
        #expect(ranges != nil)
        let trusted = TestServer.options { $0.security.trustProxy = ranges ?? .none }
        try await TestServer.with(backend: backend, trusted, cloud: Self.cloud()) { p in
            // 10.0.0.5 is a trusted proxy, 172.16.0.1 is not: it is the client; 1.1.1.1 (claimed by it) is not believed.
            let stopped = try await Self.ip(p, forwardedFor: "1.1.1.1, 172.16.0.1, 10.0.0.5")
            let walked = try await Self.ip(p, forwardedFor: "10.0.0.9, 10.0.0.5")
            #expect(stopped == "172.16.0.1")
            #expect(walked == "10.0.0.9")
        }
        let untrusted = TestServer.options { $0.security.trustProxy = TrustProxy.list(["10.0.0.0/8"]) ?? .none }
        try await TestServer.with(backend: backend, untrusted, cloud: Self.cloud()) { p in
            // The TCP peer (127.0.0.1) is not in the list: nothing it forwards is believed.
            let peer = try await Self.ip(p, forwardedFor: "10.0.0.5")
            #expect(peer == "127.0.0.1")
        }
    }

    @Test("trustProxy: rate limits count per forwarded client, not per proxy", arguments: Backend.all)
    func rateLimitsPerForwardedClient(_ backend: Backend) async throws {
        let rules = try RateLimitRule.parse(
            JSONParser.parse(#"[{"requestPath":"/classes/*","requestTimeWindow":60000,"requestCount":2,"requestMethods":["POST"]}]"#))
        let options = TestServer.options {
            $0.security.trustProxy = .all
            $0.allowClientClassCreation = true
        }
        try await OperationsTests.with(backend: backend, options: options, rateLimits: rules) { p, _ in
            for client in ["10.0.0.1", "10.0.0.2"] {
                for i in 1...2 {
                    let r = try await p.request(.post, "/classes/Limited", ["n": .int(Int64(i))], master: false, extra: ["X-Forwarded-For": client])
                    #expect(r.status == 201, "\(client) \(i): \(r.json)")
                }
            }
            let third = try await p.request(.post, "/classes/Limited", ["n": 3], master: false, extra: ["X-Forwarded-For": "10.0.0.1"])
            #expect(third.status == 429)
            let other = try await p.request(.post, "/classes/Limited", ["n": 3], master: false, extra: ["X-Forwarded-For": "10.0.0.3"])
            #expect(other.status == 201)
        }
    }

    @Test("allowOrigin: the request's Origin when listed, else the first; preflight too; allowHeaders extend Parse's", arguments: Backend.all)
    func cors(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let r = try await p.request(.get, "/classes/Doc", extra: ["Origin": "https://app.example"])
            #expect(r.headers[.accessControlAllowOrigin] == "*")
            #expect(r.headers[.accessControlAllowHeaders]?.contains("X-Custom") == false)
        }
        let options = TestServer.options {
            $0.security.allowOrigin = ["https://app.example", "https://admin.example"]
            $0.security.allowHeaders = ["X-Custom", "X-Other"]
        }
        try await TestServer.with(backend: backend, options) { p in
            let listed = try await p.request(.get, "/classes/Doc", extra: ["Origin": "https://admin.example"])
            #expect(listed.status == 200)
            #expect(listed.headers[.accessControlAllowOrigin] == "https://admin.example")
            let elsewhere = try await p.request(.get, "/classes/Doc", extra: ["Origin": "https://evil.example"])
            #expect(elsewhere.headers[.accessControlAllowOrigin] == "https://app.example")
            let none = try await p.request(.get, "/classes/Doc")
            #expect(none.headers[.accessControlAllowOrigin] == "https://app.example")
            // Errors carry the same answer.
            let error = try await p.request(.get, "/classes/Doc/missing", extra: ["Origin": "https://admin.example"])
            #expect(error.status == 404)
            #expect(error.headers[.accessControlAllowOrigin] == "https://admin.example")
            var h = HTTPFields()
            h[.origin] = "https://admin.example"
            h[.accessControlRequestMethod] = "POST"
            let preflight = try await p.raw(.options, "/parse/classes/Doc", headers: h)
            #expect(preflight.status == 200)
            #expect(preflight.headers[.accessControlAllowOrigin] == "https://admin.example")
            let allowed = preflight.headers[.accessControlAllowHeaders] ?? ""
            #expect(allowed.hasPrefix("X-Parse-Master-Key, X-Parse-REST-API-Key"))
            #expect(allowed.hasSuffix(", X-Custom, X-Other"), "\(allowed)")
            h[.origin] = "https://evil.example"
            let refused = try await p.raw(.options, "/parse/classes/Doc", headers: h)
            #expect(refused.headers[.accessControlAllowOrigin] == "https://app.example")
        }
    }
}
