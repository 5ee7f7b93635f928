import AsyncHTTPClient
public import NIOCore
import NIOHTTP1
public import ParsleyDomain

/// Webhook calls over AsyncHTTPClient's shared client (pooled connections, TLS).
public struct HTTPWebhookTransport: WebhookTransport {
    public init() {}

    public func post(_ url: String, headers: [(name: String, value: String)], body: ByteBuffer, timeout: Duration, maxBytes: Int) async throws
        -> WebhookReply
    {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for header in headers { request.headers.add(name: header.name, value: header.value) }
        request.body = .bytes(body)
        let milliseconds = Int64(timeout.components.seconds) * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .milliseconds(max(1, milliseconds)))
            let bytes = try await response.body.collect(upTo: maxBytes)
            return WebhookReply(status: Int(response.status.code), body: bytes)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw WebhookTransportError.timedOut
        }
    }
}
