import NIOCore
import Synchronization

/// Pings the sockets of one event loop from one timer: every socket once each `interval`, the loop's sockets spread
/// over up to 64 slots of the interval, one slot per tick. A repeating timer per socket instead kept 10,000 tasks on
/// the loops' timer heaps, and keeping those heaps in order was about 7% of the server's CPU in a profile of 10,000
/// subscribers. Used on its event loop only; the timer runs while the loop has sockets.
///
/// Ticks are due at fixed times (`due`, a tick apart), not a tick after the previous one ran: on a busy loop a late
/// tick visits every slot whose time has come, so lateness never adds up into a longer interval. (A first wheel
/// scheduled each tick a tick after the previous turn: 64 slightly late ticks made a longer interval, and clients were
/// pinged less often than `websocketTimeout` says.)
final class SocketPingWheel {
    private let eventLoop: any EventLoop
    private let tick: TimeAmount
    private var slots: [[ObjectIdentifier: SocketFrames]]
    /// The slot visited last; the next one is due at `due`.
    private var cursor = 0
    private var due = NIODeadline.now()
    private var count = 0
    private var timer: Scheduled<Void>?

    init(eventLoop: any EventLoop, interval: TimeAmount) {
        // Ticks of 50 ms at least (a 100 ms interval: 2 slots), 64 slots at most (10 s: a tick every 156 ms).
        let slotCount = max(1, min(64, Int(interval.nanoseconds / 50_000_000)))
        self.eventLoop = eventLoop
        tick = .nanoseconds(max(1, interval.nanoseconds / Int64(slotCount)))
        slots = Array(repeating: [:], count: slotCount)
    }

    /// Pings `socket` from about one interval on; its slot, for `remove`.
    func add(_ socket: SocketFrames) -> Int {
        // The slot just visited comes round again after a whole interval.
        slots[cursor][ObjectIdentifier(socket)] = socket
        count += 1
        if timer == nil {
            due = .now() + tick
            schedule()
        }
        return cursor
    }

    func remove(_ socket: SocketFrames, slot: Int) {
        guard slots[slot].removeValue(forKey: ObjectIdentifier(socket)) != nil else { return }
        count -= 1
        if count == 0 {
            timer?.cancel()
            timer = nil
        }
    }

    private func schedule() {
        let wheel = NIOLoopBound(self, eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(deadline: due) { wheel.value.turn() }
    }

    private func turn() {
        let now = NIODeadline.now()
        var visited = 0
        while due <= now, count > 0, visited < slots.count {
            cursor = (cursor + 1) % slots.count
            due = due + tick
            visited += 1
            // A copy: a socket that has not answered is closed by its ping, and leaves its slot meanwhile.
            for socket in Array(slots[cursor].values) { socket.ping() }
        }
        // More than a whole interval late (a stalled loop): no slot twice in one turn, which would close every socket
        // of it before its pong could be read; the wheel goes on from now.
        if due <= now { due = now + tick }
        if count > 0 { schedule() } else { timer = nil }
    }
}

/// The ping wheels of one server, one per event loop, made when the loop's first socket needs one.
final class SocketPingWheels: Sendable {
    let interval: TimeAmount
    private let byLoop = Mutex<[ObjectIdentifier: NIOLoopBound<SocketPingWheel>]>([:])

    init(interval: TimeAmount) { self.interval = interval }

    /// The wheel of `eventLoop`; called on that loop.
    func wheel(for eventLoop: any EventLoop) -> SocketPingWheel {
        byLoop.withLock { all in
            let id = ObjectIdentifier(eventLoop)
            if let known = all[id] { return known.value }
            let made = SocketPingWheel(eventLoop: eventLoop, interval: interval)
            all[id] = NIOLoopBound(made, eventLoop: eventLoop)
            return made
        }
    }
}
