import DequeModule
import NIOCore
import NIOWebSocket
import ParsleyDomain
import Synchronization

/// What a socket's messages go to: LiveQuery's hub, or a GraphQL subscription session. Its work for one socket runs
/// in order, one item at a time, on the `SocketInbox`'s tasks (an idle socket holds no task).
protocol SocketSession: Sendable {
    /// A text message from the client.
    func receive(_ text: String, peer: SocketPeer) async
    /// A frame the hub queued for this socket, when the session translates them (`SocketPeer.translatesHubFrames`).
    func hubFrame(_ text: String, peer: SocketPeer) async
    /// The socket closed: nothing more comes after this.
    func closed(peer: SocketPeer) async
}

/// One WebSocket after its upgrade, without a task of its own: the client's messages queue here and run in order on
/// the inbox's tasks; frames for the client queue here and are written on the channel's event loop, in order, while
/// the socket drains. A client `queueLimit` frames behind is cut off (`LiveOutletResult.overflow`).
final class SocketPeer: LiveOutlet, Sendable {
    enum Work: Sendable {
        case message(String)
        case hubFrame(String)
        case closed
    }

    struct State: Sendable {
        /// Work waiting for the session, and whether an inbox task is on it.
        var inbox = Deque<Work>()
        var running = false
        /// Frames (encoded) waiting for the event loop, and whether a flush is scheduled there.
        var outbox: [ByteBuffer] = []
        var flushScheduled = false
        /// Set when the client stopped reading fast enough: frames wait here until the channel is writable again.
        var paused = false
        /// No frame is accepted after `finish` or close.
        var finished = false
        var reading = true
        /// Set once after the peer is made (the session's connection has this peer as its outlet); let go at close.
        var session: (any SocketSession)?
    }

    let channel: any Channel
    /// Where encoded frames leave (on the channel's event loop).
    private let outlet: NIOLoopBound<FrameOutlet>
    let inbox: SocketInbox
    /// Writes this socket's frames on its event loop, among the loop's other sockets.
    private let flusher: SocketFlusher
    /// Whether the hub's frames go through `SocketSession.hubFrame` (GraphQL) rather than straight out (LiveQuery).
    let translatesHubFrames: Bool
    let queueLimit: Int
    private let state = Mutex(State())

    /// Messages waiting beyond this stop reading the socket until the session catches up.
    static let readLimit = 32

    init(channel: any Channel, outlet: FrameOutlet, inbox: SocketInbox, translatesHubFrames: Bool, queueLimit: Int) {
        (self.channel, self.inbox) = (channel, inbox)
        self.outlet = NIOLoopBound(outlet, eventLoop: channel.eventLoop)
        flusher = inbox.flushers.flusher(for: channel.eventLoop)
        (self.translatesHubFrames, self.queueLimit) = (translatesHubFrames, max(1, queueLimit))
    }

    /// Who the socket's work goes to (set once, before the first message).
    func attach(_ session: any SocketSession) { state.withLock { $0.session = session } }

    // MARK: The client's side (called on the event loop)

    /// A text message from the client.
    func received(_ text: String) {
        let stopReading = enqueue(.message(text))
        if stopReading { channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in } }
    }

    /// The channel closed: the session hears it after the messages before it.
    func closedByChannel() {
        state.withLock { $0.finished = true }
        _ = enqueue(.closed)
    }

    /// Queues work for the session and starts an inbox task when none is on this socket; true when reading should
    /// pause for a while.
    @discardableResult
    private func enqueue(_ work: Work) -> Bool {
        let (start, stopReading) = state.withLock { s -> (Bool, Bool) in
            s.inbox.append(work)
            let stop = s.reading && s.inbox.count > Self.readLimit
            if stop { s.reading = false }
            if s.running { return (false, stop) }
            s.running = true
            return (true, stop)
        }
        if start { inbox.schedule(self) }
        return stopReading
    }

    /// Runs the socket's waiting work in order (on an inbox task), until none is left.
    func drain() async {
        while true {
            let (next, session, resume) = state.withLock { s -> (Work?, (any SocketSession)?, Bool) in
                guard let work = s.inbox.popFirst() else {
                    s.running = false
                    return (nil, nil, false)
                }
                let resume = !s.reading && s.inbox.count <= Self.readLimit / 2
                if resume { s.reading = true }
                let session = s.session
                // The session's connection holds this peer: let it go once the socket is closed.
                if case .closed = work { s.session = nil }
                return (work, session, resume)
            }
            if resume { channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in } }
            guard let next else { return }
            guard let session else { continue }
            switch next {
            case .message(let text): await session.receive(text, peer: self)
            case .hubFrame(let text): await session.hubFrame(text, peer: self)
            case .closed: await session.closed(peer: self)
            }
        }
    }

    // MARK: Frames for the client

    /// LiveOutlet: the hub's frame for this socket.
    func push(_ text: String) -> LiveOutletResult {
        guard translatesHubFrames else { return send(text) }
        let accepted = state.withLock { s -> LiveOutletResult in
            if s.finished { return .closed }
            return s.inbox.count >= queueLimit ? .overflow : .queued
        }
        switch accepted {
        case .queued: enqueue(.hubFrame(text))
        case .overflow: abort()
        case .closed: break
        }
        return accepted
    }

    /// LiveOutlet: the hub let the client go.
    func finish() { close(code: .normalClosure, reason: nil) }

    /// Queues a text frame; `.overflow` (and the socket is cut off) when `queueLimit` frames already wait.
    @discardableResult
    func send(_ text: String) -> LiveOutletResult {
        send(frame: ServerFrame.text(text, allocator: channel.allocator))
    }

    /// Sends a close frame after what is queued, then closes the socket.
    func close(code: WebSocketErrorCode, reason: String?) {
        let first = state.withLock { s in
            defer { s.finished = true }
            return !s.finished
        }
        if first { channel.eventLoop.execute { self.flush(thenClose: (code, reason)) } }
    }

    private func send(frame: ByteBuffer) -> LiveOutletResult {
        let (result, schedule) = state.withLock { s -> (LiveOutletResult, Bool) in
            if s.finished { return (.closed, false) }
            if s.outbox.count >= queueLimit {
                s.finished = true
                return (.overflow, false)
            }
            s.outbox.append(frame)
            if s.flushScheduled || s.paused { return (.queued, false) }
            s.flushScheduled = true
            return (.queued, true)
        }
        switch result {
        case .queued: if schedule { flusher.schedule(self) }
        case .overflow: abort()
        case .closed: break
        }
        return result
    }

    /// A client too far behind is cut off at once (its socket may not be draining at all).
    private func abort() {
        state.withLock { s in
            s.finished = true
            s.outbox.removeAll()
        }
        channel.close(promise: nil)
    }

    /// The channel can take more again.
    func writable() {
        let resume = state.withLock { s in
            guard s.paused else { return false }
            s.paused = false
            return true
        }
        if resume { flush() }
    }

    /// Writes the waiting frames (on the event loop) while the channel takes them; with `thenClose`, a close frame
    /// follows and the socket closes once it is written.
    func flush(thenClose: (WebSocketErrorCode, String?)? = nil) {
        while true {
            let frames = state.withLock { s -> [ByteBuffer] in
                s.flushScheduled = false
                if s.paused, thenClose == nil { return [] }
                defer { s.outbox.removeAll(keepingCapacity: false) }
                return s.outbox
            }
            if frames.isEmpty { break }
            let outlet = self.outlet.value
            for frame in frames { outlet.write(frame) }
            outlet.flush()
            if thenClose == nil, !channel.isWritable {
                state.withLock { $0.paused = true }
                break
            }
        }
        guard let (code, reason) = thenClose else { return }
        var data = channel.allocator.buffer(capacity: 2 + (reason?.utf8.count ?? 0))
        data.write(webSocketErrorCode: code)
        if let reason { data.writeString(reason) }
        let channel = self.channel
        let frame = ServerFrame.frame(.connectionClose, payload: data, allocator: channel.allocator)
        outlet.value.writeAndFlush(frame, on: channel.eventLoop).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
