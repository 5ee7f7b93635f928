import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import ParsleyCore
import ParsleyDomain

/// One call to a provider's API (Facebook's Graph API, an OAuth 2.0 introspection endpoint) made while a log-in waits:
/// the status and the JSON answer, or `unreachable` when no complete answer came within `timeout` (connection refused,
/// a provider that hangs, a body larger than `limit`). The whole exchange, body included, has the one deadline.
enum ProviderCall {
    struct Answer: Sendable {
        let status: UInt
        /// The body as JSON; nil when it is not JSON.
        let json: JSONValue?
    }

    struct Unreachable: Error {
        let reason: String
    }

    static let timeout: Duration = .seconds(5)

    static func send(_ request: HTTPClientRequest, timeout: Duration = timeout, limit: Int = 1 << 16) async throws(Unreachable) -> Answer {
        do {
            return try await withThrowingTaskGroup(of: Answer?.self) { group in
                group.addTask {
                    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(timeout.components.seconds) + 1))
                    let body = try await response.body.collect(upTo: limit)
                    return Answer(status: response.status.code, json: try? JSONParser.parse(body.readableBytesView))
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let answer = first else { throw Unreachable(reason: "no answer within \(timeout)") }
                return answer
            }
        } catch let error as Unreachable {
            throw error
        } catch {
            throw Unreachable(reason: "\(error)")
        }
    }

    /// `text` percent-encoded for a query string or a form body: everything but RFC 3986's unreserved characters.
    static func formEncoded(_ text: String) -> String { EmailTemplates.percentEncode(text) }

    /// A URL option without its trailing slashes.
    static func trimmed(_ url: String) -> String {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}
