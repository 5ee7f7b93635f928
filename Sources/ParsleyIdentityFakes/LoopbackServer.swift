import Hummingbird
import Logging

/// Runs a fake's router on 127.0.0.1 (a free port) beside `body`, which gets the port; the server stops when `body`
/// returns or throws.
enum LoopbackServer {
    static func run(_ router: Router<BasicRequestContext>, label: String, _ body: (Int) async throws -> Void) async throws {
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: label)
        // Stopping by cancellation makes Hummingbird log the cancelled connections as errors: not news here.
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { return }
            let outcome: Result<Void, any Error>
            do { outcome = .success(try await body(port)) } catch { outcome = .failure(error) }
            group.cancelAll()
            try outcome.get()
        }
    }
}
