import ServiceLifecycle

/// Runs the WebSocket sessions' work: each socket's messages in order (`SocketPeer.drain`), different sockets side by
/// side, each on a child task that ends when its socket has nothing waiting. An idle socket holds no task, which is
/// what keeps 10,000 idle LiveQuery connections small. A service of the server's ServiceGroup.
final class SocketInbox: Service {
    private let (peers, continuation) = AsyncStream<SocketPeer>.makeStream()
    /// Where the sockets' frames are written, per event loop.
    let flushers = SocketFlushers()

    init() {}

    /// `peer` has work and no task on it.
    func schedule(_ peer: SocketPeer) { continuation.yield(peer) }

    func run() async {
        await withDiscardingTaskGroup { group in
            for await peer in peers.cancelOnGracefulShutdown() {
                group.addTask { await peer.drain() }
            }
        }
    }
}
