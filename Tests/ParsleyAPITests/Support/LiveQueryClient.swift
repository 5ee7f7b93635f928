import Foundation
import HummingbirdWSClient
import Logging
import ParsleyCore
import ParsleyDomain
import Synchronization

/// A real WebSocket client speaking Parse's LiveQuery protocol to a test server: frames it receives are kept in
/// order; `next` takes the oldest (waiting for one), `nothing` checks that none arrives for a while.
final class LiveQueryClient: Sendable {
    final class State: Sendable {
        let received = Mutex<[JSONValue]>([])
        let ended = Atomic<Bool>(false)
    }
    private let state = State()
    private let outgoing: AsyncStream<String>.Continuation
    private let task: Task<Void, any Error>
    let appId: String

    private init(url: String, appId: String) {
        self.appId = appId
        let (stream, continuation) = AsyncStream<String>.makeStream()
        outgoing = continuation
        let state = self.state
        var logger = Logger(label: "livequery-test-client")
        logger.logLevel = .warning
        task = Task { [logger] in
            defer { state.ended.store(true, ordering: .relaxed) }
            try await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20), logger: logger) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // Ending the handler closes the socket.
                        for await text in stream { try await outbound.write(.text(text)) }
                    }
                    group.addTask {
                        for try await message in inbound.messages(maxSize: 1 << 22) {
                            guard case .text(let text) = message, let json = try? JSONParser.parse(text) else { continue }
                            state.received.withLock { $0.append(json) }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }

    /// A socket to the server on `port` (`path` as an SDK derives it from the server URL).
    static func open(port: Int, path: String = "/parse", appId: String = TestServer.appId) async throws -> LiveQueryClient {
        LiveQueryClient(url: "ws://127.0.0.1:\(port)\(path)", appId: appId)
    }

    /// Whether the socket is closed (by either side).
    var isClosed: Bool { state.ended.load(ordering: .relaxed) }

    func send(_ message: JSONValue) { outgoing.yield(JSONWriter.string(message)) }
    func sendText(_ text: String) { outgoing.yield(text) }

    func close() async {
        outgoing.finish()
        _ = try? await task.value
    }

    /// The oldest frame not taken yet; fails after `timeout`.
    func next(timeout: Duration = .seconds(15)) async throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let frame = state.received.withLock { q -> JSONValue? in
                if q.isEmpty { return Optional.none }
                return q.removeFirst()
            }
            if let frame { return frame }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw Failure("no LiveQuery frame within \(timeout)")
    }

    /// The next frame, which must have `op`.
    @discardableResult
    func expect(_ op: String, timeout: Duration = .seconds(15)) async throws -> JSONValue {
        let frame = try await next(timeout: timeout)
        guard frame["op"]?.stringValue == op else { throw Failure("expected \(op), got \(JSONWriter.string(frame))") }
        return frame
    }

    /// Drops the frames received so far that `predicate` picks.
    func discard(where predicate: (JSONValue) -> Bool) {
        state.received.withLock { $0.removeAll(where: predicate) }
    }

    /// Fails when any frame arrives within `time` (what was received is reported).
    func nothing(for time: Duration = .milliseconds(600)) async throws {
        try await Task.sleep(for: time)
        let extra = state.received.withLock { $0 }
        if !extra.isEmpty { throw Failure("unexpected LiveQuery frames: \(extra.map(JSONWriter.string))") }
    }

    /// `connect` and its `connected` answer.
    @discardableResult
    func connect(sessionToken: String? = nil, masterKey: String? = nil, extra: [String: JSONValue] = [:]) async throws -> JSONValue {
        var m: [String: JSONValue] = ["op": "connect", "applicationId": .string(appId)]
        if let sessionToken { m["sessionToken"] = .string(sessionToken) }
        if let masterKey { m["masterKey"] = .string(masterKey) }
        for (k, v) in extra { m[k] = v }
        send(.object(m))
        return try await next()
    }

    /// `subscribe` (or `update`) and the answer (`subscribed` or `error`).
    @discardableResult
    func subscribe(
        _ requestId: Int, _ className: String, where w: JSONValue = [:], keys: [String]? = nil, watch: [String]? = nil, sessionToken: String? = nil,
        op: String = "subscribe", include: JSONValue? = nil
    ) async throws -> JSONValue {
        var query: [String: JSONValue] = ["className": .string(className), "where": w]
        if let include { query["include"] = include }
        if let keys { query["keys"] = .array(keys.map(JSONValue.string)) }
        if let watch { query["watch"] = .array(watch.map(JSONValue.string)) }
        var m: [String: JSONValue] = ["op": .string(op), "requestId": .int(Int64(requestId)), "query": .object(query)]
        if let sessionToken { m["sessionToken"] = .string(sessionToken) }
        send(.object(m))
        return try await next()
    }
}

extension TestServer {
    /// Options with LiveQuery on for `classes`.
    static func liveOptions(_ classes: [String], _ configure: (inout ParseServerOptions) -> Void = { _ in }) -> ParseServerOptions {
        options {
            $0.liveQuery.classNames = classes
            $0.allowClientClassCreation = true
            configure(&$0)
        }
    }
}
