import Foundation
import Logging
import NIOCore
public import ParsleyCore
import Synchronization

/// Cloud code in any language: functions and triggers registered through `/hooks` (stored in `_Hooks`, shared by
/// every node) and called over HTTP with Parse Server's webhook protocol. A webhook for a name takes precedence
/// over a Swift handler of the same name. The HTTP call itself is the `WebhookTransport`'s (ParsleyAdapters); the
/// registry, the body, the answer's meaning, retries and the per-URL breaker are here.
public final class Webhooks: Sendable {
    /// One registered hook: a function (`functionName`) or a trigger (`className` + `triggerName`).
    public struct Hook: Sendable, Equatable {
        public var functionName: String?
        public var className: String?
        public var triggerName: String?
        public var url: String

        /// As `/hooks` answers it.
        public var json: JSONValue {
            var o: [String: JSONValue] = ["url": .string(url)]
            if let functionName { o["functionName"] = .string(functionName) }
            if let className { o["className"] = .string(className) }
            if let triggerName { o["triggerName"] = .string(triggerName) }
            return .object(o)
        }
    }

    struct Registry: Sendable {
        var functions: [String: Hook] = [:]
        var triggers: [String: Hook] = [:]  // "<className>/<triggerName>"
    }
    private let registry = Mutex(Registry())
    /// Whether any hook is registered (read on every request, so an atomic).
    private let any = Atomic<Bool>(false)
    let key: String?
    let timeout: Duration
    let transport: any WebhookTransport
    private let breakers = Mutex<[String: Breaker]>([:])
    private let logger = Logger(label: "parsley.webhooks")
    /// Calls per URL, and those that failed, for metrics.
    private let calls = Mutex<[String: Int]>([:])
    private let failures = Mutex<[String: Int]>([:])

    /// A URL that failed `threshold` times in a row is not called for `cooldown` (answers fail at once).
    struct Breaker: Sendable {
        var consecutiveFailures = 0
        var openUntil: ContinuousClock.Instant?
    }
    static let threshold = 5
    static let cooldown: Duration = .seconds(30)

    init(key: String?, timeout: Duration, transport: any WebhookTransport) {
        self.key = key
        self.timeout = timeout
        self.transport = transport
    }

    // MARK: Registry

    func replace(with hooks: [Hook]) {
        var r = Registry()
        for h in hooks {
            if let f = h.functionName { r.functions[f] = h }
            if let c = h.className, let t = h.triggerName { r.triggers["\(c)/\(t)"] = h }
        }
        registry.withLock { $0 = r }
        any.store(!r.functions.isEmpty || !r.triggers.isEmpty, ordering: .relaxed)
    }

    /// Whether no webhook is registered.
    public var isEmpty: Bool { !any.load(ordering: .relaxed) }

    public var functions: [Hook] { registry.withLock { Array($0.functions.values) }.sorted { ($0.functionName ?? "") < ($1.functionName ?? "") } }
    public var triggers: [Hook] {
        registry.withLock { Array($0.triggers.values) }.sorted {
            ($0.className ?? "", $0.triggerName ?? "") < ($1.className ?? "", $1.triggerName ?? "")
        }
    }
    func function(_ name: String) -> Hook? { registry.withLock { $0.functions[name] } }
    func trigger(_ name: TriggerName, _ className: String) -> Hook? { registry.withLock { $0.triggers["\(className)/\(name.rawValue)"] } }
    var hasAfterTriggers: Bool { registry.withLock { $0.triggers.values.contains { $0.triggerName?.hasPrefix("after") == true } } }

    /// Calls and failed calls per URL (for metrics and tests).
    public var callCounts: [String: Int] { calls.withLock { $0 } }
    public var failureCounts: [String: Int] { failures.withLock { $0 } }

    // MARK: Calls

    /// POSTs `body` to the hook's URL with `X-Parse-Webhook-Key`; returns the `success` value. An `error` answer, a
    /// non-JSON or non-200 answer, a timeout or a refused connection is a 141 Parse error. `attempts` > 1 retries
    /// failures of transport (after-triggers only).
    func call(_ hook: Hook, _ body: [String: JSONValue], attempts: Int = 1) async throws -> JSONValue {
        var lastError = ParseError(.scriptFailed, "webhook failed")
        for attempt in 1...max(1, attempts) {
            if attempt > 1 { try? await Task.sleep(for: .milliseconds(200 * (attempt - 1))) }
            if let openUntil = breakers.withLock({ $0[hook.url]?.openUntil }), ContinuousClock.now < openUntil {
                throw ParseError(.scriptFailed, "Webhook \(RedactedURL.string(hook.url)) is unavailable (too many failures)")
            }
            let outcome = await send(hook.url, body)
            switch outcome {
            case .success(let answer):
                record(hook.url, failed: false)
                return answer
            case .failure(let error):
                record(hook.url, failed: true)
                lastError = error
                logger.warning(
                    "webhook call failed", metadata: ["url": "\(RedactedURL.string(hook.url))", "attempt": "\(attempt)", "error": "\(error.message)"])
            }
        }
        throw lastError
    }

    private func send(_ url: String, _ body: [String: JSONValue]) async -> Result<JSONValue, ParseError> {
        var headers = [(name: "Content-Type", value: "application/json")]
        if let key { headers.append((name: "X-Parse-Webhook-Key", value: key)) }
        // Inside a transactional batch the hooks share one budget (Transactions.run(hookBudget:)).
        var limit = timeout
        if let deadline = Transactions.hookDeadline {
            let left = deadline - .now
            guard left > .zero else { return .failure(ParseError(.scriptFailed, "Webhook \(url) timed out")) }
            limit = min(limit, left)
        }
        do {
            let answer = try await transport.post(
                url, headers: headers, body: ByteBuffer(bytes: JSONWriter.bytes(.object(body))), timeout: limit, maxBytes: 16 << 20)
            let bytes = answer.body
            guard let json = try? bytes.withUnsafeReadableBytes({ try JSONParser.parse($0) }), case .object(let o) = json else {
                return .failure(ParseError(.scriptFailed, "Malformed response"))
            }
            // An answer the hook sent on purpose (`{"error": ...}`) is a refusal, not a failure of the URL.
            if let error = o["error"] {
                let message = error.stringValue ?? error["message"]?.stringValue ?? error["error"]?.stringValue ?? JSONWriter.string(error)
                return .success(.object(["__webhookError": .string(message)]))
            }
            guard answer.status == 200, let success = o["success"] else { return .failure(ParseError(.scriptFailed, "Malformed response")) }
            return .success(success)
        } catch WebhookTransportError.timedOut {
            return .failure(ParseError(.scriptFailed, "Webhook \(url) timed out"))
        } catch {
            return .failure(ParseError(.scriptFailed, "Webhook \(url) failed: \(error)"))
        }
    }

    private func record(_ url: String, failed: Bool) {
        calls.withLock { $0[url, default: 0] += 1 }
        if failed { failures.withLock { $0[url, default: 0] += 1 } }
        breakers.withLock { all in
            var b = all[url] ?? Breaker()
            if failed {
                b.consecutiveFailures += 1
                if b.consecutiveFailures >= Self.threshold {
                    b.openUntil = .now + Self.cooldown
                    b.consecutiveFailures = 0
                }
            } else {
                b = Breaker()
            }
            all[url] = b
        }
    }

    /// The `success` value of an answer, or the hook's own `error` as a 141.
    static func unwrap(_ answer: JSONValue) throws -> JSONValue {
        if let message = answer.objectValue?["__webhookError"]?.stringValue { throw ParseError(.scriptFailed, message) }
        return answer
    }
}
