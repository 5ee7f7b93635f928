import Foundation
import NIOCore
import ParsleyCore
@testable import ParsleyDomain
import Synchronization
import Testing

/// The seam between the domain and its adapters (ParsleyAdapters): the domain keeps the rules, the adapters do the
/// talking, and no client of the outside world creeps back into the domain.
@Suite("Adapters")
struct AdaptersTests {
    /// A webhook receiver that answers from a list and records what it was sent.
    final class ScriptedTransport: WebhookTransport {
        struct Sent: Sendable {
            var url: String
            var headers: [String: String]
            var body: JSONValue?
        }
        private let answers: Mutex<[Result<WebhookReply, WebhookTransportError>]>
        private let sent = Mutex<[Sent]>([])

        init(_ answers: [Result<WebhookReply, WebhookTransportError>]) { self.answers = Mutex(answers) }

        var calls: [Sent] { sent.withLock { $0 } }

        func post(_ url: String, headers: [(name: String, value: String)], body: ByteBuffer, timeout: Duration, maxBytes: Int) async throws
            -> WebhookReply
        {
            let json = try? body.withUnsafeReadableBytes { try JSONParser.parse($0) }
            // A repeated header is joined (as HTTP does), an unscripted call throws: a failing test, not a trap.
            let fields = Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { "\($0), \($1)" })
            sent.withLock { $0.append(Sent(url: url, headers: fields, body: json)) }
            guard let answer = answers.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { throw Failure("no answer scripted for \(url)") }
            return try answer.get()
        }
    }

    static func reply(_ status: Int, _ json: String) -> Result<WebhookReply, WebhookTransportError> {
        .success(WebhookReply(status: status, body: ByteBuffer(string: json)))
    }

    static let hook = Webhooks.Hook(functionName: "hello", url: "http://hooks.example/hello")

    @Test("a webhook call sends Parse Server's body and headers through the transport and reads the success value")
    func callGoesThroughTheTransport() async throws {
        let transport = ScriptedTransport([Self.reply(200, #"{"success": {"greeting": "hi"}}"#)])
        let webhooks = Webhooks(key: "secret", timeout: .seconds(3), transport: transport)
        let answer = try await webhooks.call(Self.hook, ["functionName": .string("hello"), "params": .object([:])])
        #expect(answer == .object(["greeting": .string("hi")]))
        let sent = try #require(transport.calls.first)
        #expect(sent.url == "http://hooks.example/hello")
        #expect(sent.headers == ["Content-Type": "application/json", "X-Parse-Webhook-Key": "secret"])
        #expect(sent.body == .object(["functionName": .string("hello"), "params": .object([:])]))
    }

    @Test("the domain decides what an answer means: refusal, malformed, timeout, retries")
    func answersAreTheDomainsRules() async throws {
        let refusal = ScriptedTransport([Self.reply(200, #"{"error": "not today"}"#)])
        let refused = try await Webhooks(key: nil, timeout: .seconds(3), transport: refusal).call(Self.hook, [:])
        #expect(throws: ParseError(.scriptFailed, "not today")) { try Webhooks.unwrap(refused) }
        #expect(refusal.calls.first?.headers == ["Content-Type": "application/json"])

        let notOK = ScriptedTransport([Self.reply(500, #"{"success": 1}"#)])
        await #expect(throws: ParseError(.scriptFailed, "Malformed response")) {
            try await Webhooks(key: nil, timeout: .seconds(3), transport: notOK).call(Self.hook, [:])
        }

        let slow = ScriptedTransport([.failure(.timedOut)])
        await #expect(throws: ParseError(.scriptFailed, "Webhook http://hooks.example/hello timed out")) {
            try await Webhooks(key: nil, timeout: .seconds(3), transport: slow).call(Self.hook, [:])
        }

        let flaky = ScriptedTransport([.failure(.timedOut), Self.reply(200, #"{"success": true}"#)])
        let retried = try await Webhooks(key: nil, timeout: .seconds(3), transport: flaky).call(Self.hook, [:], attempts: 3)
        #expect(retried == .bool(true))
        #expect(flaky.calls.count == 2)
    }

    @Test("ParsleyDomain imports no client of the outside world and names no concrete adapter")
    func domainHasNoOutsideClients() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let clients = try Regex(
            #"^\s*(@preconcurrency\s+)?((public|package|internal)\s+)?import\s+(AsyncHTTPClient|NIOHTTP1|NIOHTTP2|NIOSSL|NIOWebSocket)\b"#)
        let concretes = [
            "HTTPClient.", "ClientBootstrap", "SMTPEmailAdapter", "HTTPWebhookTransport", "GitHubAuthProvider", "LocalFileStore", "APNsProvider",
            "FCMProvider", "PushConfiguration",
        ]
        let files = FileManager.default.enumerator(at: root.appendingPathComponent("Sources/ParsleyDomain"), includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 30)
        var offenders: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                if code.contains(clients) || concretes.contains(where: { code.contains($0) }) {
                    offenders.append("\(file.lastPathComponent):\(n + 1): \(line)")
                }
            }
        }
        #expect(offenders == [], "outside-world clients in the domain (they belong in ParsleyAdapters)")
    }
}
