import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import ParsleyCore

/// What the APNs and FCM providers share about HTTP: the client they create when none is injected, and reading the
/// parts of an answer that decide an outcome (its JSON body, its `retry-after`).
enum PushHTTP {
    /// How long one request (connection included) may take before it counts as a transient failure.
    static let requestTimeout: TimeAmount = .seconds(30)
    /// How long making a connection may take when the provider is not told otherwise.
    static let connectTimeout: TimeAmount = .seconds(10)
    /// Answers are small JSON documents; anything longer is cut here.
    static let maxBodyBytes = 64 * 1024

    /// A client that speaks HTTP/2 when the server offers it (ALPN) and trusts the system roots plus the
    /// certificates in `caFiles` (PEM), for test servers and TLS-intercepting proxies. `connectTimeout` bounds making a
    /// connection (TCP, TLS, HTTP/2 settings), `PushHTTP.connectTimeout` when nil: past it the request fails as a timeout.
    static func makeClient(caFiles: [String], connectTimeout: TimeAmount?) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = try caFiles.map { .certificates(try NIOSSLCertificate.fromPEMFile($0)) }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: connectTimeout ?? Self.connectTimeout, read: requestTimeout)
        // A refused connection or a failed TLS handshake fails the request at once (its kind logged and counted as it
        // is): the delivery retries transient failures itself, with its own back-off, instead of the client re-dialling
        // until the connect timeout (which made every such message take 10 s and report a timeout).
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// The answer's body as JSON, nil when it is empty, too long, or not JSON.
    static func json(of response: HTTPClientResponse) async -> JSONValue? {
        guard let bytes = try? await response.body.collect(upTo: maxBodyBytes), bytes.readableBytes > 0 else { return nil }
        return try? JSONParser.parse(bytes.readableBytesView)
    }

    /// `retry-after` as seconds (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`); nil when absent or
    /// unreadable, zero for a date already past.
    static func retryAfter(_ headers: HTTPHeaders, now: ParseDate) -> Duration? {
        guard let value = headers.first(name: "retry-after")?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Double(value), seconds.isFinite, seconds >= 0 { return .milliseconds(Int64(seconds * 1000)) }
        guard let date = httpDate(value) else { return nil }
        return .milliseconds(max(0, date.milliseconds - now.milliseconds))
    }

    /// The IMF-fixdate form of RFC 9110 (`Sun, 06 Nov 1994 08:49:37 GMT`), the only one servers still send.
    static func httpDate(_ text: String) -> ParseDate? {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let month = months.firstIndex(of: String(parts[2])), parts[1].count == 2,
            parts[3].count == 4
        else { return nil }
        let monthText = month < 9 ? "0\(month + 1)" : "\(month + 1)"
        return ParseDate(iso: "\(parts[3])-\(monthText)-\(parts[1])T\(parts[4])Z")
    }

    /// The wall clock as a `ParseDate`.
    static func now() -> ParseDate {
        ParseDate(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// Shuts down the client a provider created itself (an injected one belongs to its owner).
    static func shutdown(_ client: HTTPClient, owned: Bool) async throws {
        if owned { try await client.shutdown() }
    }
}
