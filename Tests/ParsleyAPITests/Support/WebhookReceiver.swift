import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ParsleyCore
import Synchronization

/// A real HTTP server on 127.0.0.1 that answers webhook calls as an app's webhook service would: each path's answer
/// is chosen by the test (`respond`), every call is recorded (path, JSON body, `X-Parse-Webhook-Key`).
final class WebhookReceiver: Sendable {
    enum Answer: Sendable {
        case json(JSONValue)
        /// Bytes that are not JSON.
        case garbage
        /// Answers `{"success": true}` after this long.
        case slow(Duration)
        /// A function of the call's body.
        case compute(@Sendable (JSONValue) -> JSONValue)
    }

    struct Call: Sendable {
        var path: String
        var body: JSONValue
        var key: String?
    }

    private let answers = Mutex<[String: Answer]>([:])
    private let recorded = Mutex<[Call]>([])
    let port: Int

    private init(port: Int) { self.port = port }

    func respond(_ path: String, _ answer: Answer) { answers.withLock { $0[path] = answer } }
    var calls: [Call] { recorded.withLock { $0 } }
    func calls(to path: String) -> [Call] { calls.filter { $0.path == path } }
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Waits (up to 10 s) until `path` was called `count` times.
    func wait(for path: String, count: Int) async throws -> [Call] {
        for _ in 0..<200 {
            if calls(to: path).count >= count { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return calls(to: path)
    }

    static let webhookKey = HTTPField.Name("X-Parse-Webhook-Key")!

    /// Runs a receiver beside `body`.
    static func with(_ body: (WebhookReceiver) async throws -> Void) async throws {
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        let box = Mutex<WebhookReceiver?>(nil)
        let router = Router()
        router.post("**") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let json = (try? bytes.withUnsafeReadableBytes { try JSONParser.parse($0) }) ?? .null
            guard let receiver = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            let path = request.uri.path
            receiver.recorded.withLock { $0.append(Call(path: path, body: json, key: request.headers[Self.webhookKey])) }
            let answer = receiver.answers.withLock { $0[path] } ?? .json(["success": true])
            let out: JSONValue
            switch answer {
            case .json(let value): out = value
            case .compute(let f): out = f(json)
            case .garbage: return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "<html>not json")))
            case .slow(let delay):
                try await Task.sleep(for: delay)
                out = ["success": true]
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(out))))
        }
        var logger = Logger(label: "webhook-receiver")
        logger.logLevel = .warning
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { return }
            let receiver = WebhookReceiver(port: port)
            box.withLock { $0 = receiver }
            let outcome: Result<Void, any Error>
            do { outcome = .success(try await body(receiver)) } catch { outcome = .failure(error) }
            group.cancelAll()
            try outcome.get()
        }
    }
}
