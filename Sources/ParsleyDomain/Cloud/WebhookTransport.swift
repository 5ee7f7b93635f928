public import NIOCore

/// How a webhook call reaches its URL: one `POST` of JSON, one answer. The domain decides what to send and what
/// an answer means (`Webhooks`); the HTTP client that carries it lives in ParsleyAdapters (`HTTPWebhookTransport`).
public protocol WebhookTransport: Sendable {
    /// POSTs `body` to `url` with `headers`.
    /// - Parameters:
    ///   - timeout: the whole call, connection included.
    ///   - maxBytes: the longest answer body accepted.
    /// - Returns: the answer's status code and body.
    /// - Throws: `WebhookTransportError.timedOut` when no answer came within `timeout`; any other error when the URL
    ///   could not be reached or the answer was longer than `maxBytes` (its description is shown in the 141).
    func post(_ url: String, headers: [(name: String, value: String)], body: ByteBuffer, timeout: Duration, maxBytes: Int) async throws
        -> WebhookReply
}

/// A webhook receiver's answer, before the domain reads it.
public struct WebhookReply: Sendable {
    public var status: Int
    public var body: ByteBuffer

    public init(status: Int, body: ByteBuffer) {
        self.status = status
        self.body = body
    }
}

public enum WebhookTransportError: Error, Sendable, Equatable {
    /// No answer within the call's timeout.
    case timedOut
}
