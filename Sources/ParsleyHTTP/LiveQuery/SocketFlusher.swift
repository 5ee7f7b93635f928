import DequeModule
import NIOCore
import Synchronization

/// Writes the sockets' waiting frames on one event loop, a few sockets at a time: an event for a thousand subscribers
/// becomes a few dozen short turns of the loop with its other I/O (HTTP requests and answers) handled between them,
/// rather than a thousand tasks run back to back ahead of it.
final class SocketFlusher: Sendable {
    let eventLoop: any EventLoop
    private let waiting = Mutex<(peers: Deque<SocketPeer>, scheduled: Bool)>(([], false))

    /// Sockets written per turn of the loop.
    static let batch = 32

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// `peer` has frames to write and no flush pending.
    func schedule(_ peer: SocketPeer) {
        let start = waiting.withLock { w in
            w.peers.append(peer)
            defer { w.scheduled = true }
            return !w.scheduled
        }
        if start { eventLoop.execute { self.run() } }
    }

    private func run() {
        let (peers, more) = waiting.withLock { w -> ([SocketPeer], Bool) in
            let count = min(Self.batch, w.peers.count)
            let peers = Array(w.peers.prefix(count))
            w.peers.removeFirst(count)
            w.scheduled = !w.peers.isEmpty
            return (peers, w.scheduled)
        }
        for peer in peers { peer.flush() }
        // The rest in a later turn, after the loop's I/O.
        if more { eventLoop.execute { self.run() } }
    }
}

/// One flusher per event loop, made when the loop's first socket needs one.
final class SocketFlushers: Sendable {
    private let byLoop = Mutex<[ObjectIdentifier: SocketFlusher]>([:])

    func flusher(for eventLoop: any EventLoop) -> SocketFlusher {
        byLoop.withLock { all in
            let id = ObjectIdentifier(eventLoop)
            if let known = all[id] { return known }
            let made = SocketFlusher(eventLoop: eventLoop)
            all[id] = made
            return made
        }
    }
}
