import NIOCore
import NIOPosix
import Synchronization

/// A WebSocket client at the frame level, for testing the server's side of RFC 6455: it sends any frame (masked, as
/// a client must), reads the server's frames in order, and sees the socket close.
final class RawWebSocket: Sendable {
    struct Frame: Equatable {
        var fin = true
        var opcode: UInt8
        var payload: [UInt8] = []

        var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's status code.
        var closeCode: Int? { payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil }
    }

    static let text: UInt8 = 0x1
    static let binary: UInt8 = 0x2
    static let continuation: UInt8 = 0x0
    static let close: UInt8 = 0x8
    static let ping: UInt8 = 0x9
    static let pong: UInt8 = 0xA

    final class Received: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let closed = Atomic<Bool>(false)
    }

    final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let received: Received
        init(_ received: Received) { self.received = received }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            received.bytes.withLock { $0 += buffer.readableBytesView }
        }

        func channelInactive(context: ChannelHandlerContext) { received.closed.store(true, ordering: .relaxed) }
    }

    let channel: any Channel
    private let received: Received
    /// The server's answer to the upgrade (status line and headers).
    let response: String

    private init(channel: any Channel, received: Received, response: String) {
        (self.channel, self.received, self.response) = (channel, received, response)
    }

    /// Connects and asks for the upgrade at `path`; `response` holds the server's answer.
    static func open(port: Int, path: String = "/parse", headers: [String] = []) async throws -> RawWebSocket {
        try await open(port: port, request: upgradeRequest(path: path, headers: headers))
    }

    /// A well-formed upgrade request for `path`, with extra header lines.
    static func upgradeRequest(path: String = "/parse", headers: [String] = []) -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// Connects and sends `request` as it is; `response` holds the head of the server's first answer.
    static func open(port: Int, request: String) async throws -> RawWebSocket {
        let received = Received()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(received)) }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await channel.writeAndFlush(channel.allocator.buffer(string: request)).get()
        let end = Array("\r\n\r\n".utf8)
        for _ in 0..<500 {
            let head = received.bytes.withLock { bytes -> String? in
                guard let at = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == end }) else { return nil }
                defer { bytes.removeFirst(at + 4) }
                return String(decoding: bytes[0..<at], as: UTF8.self)
            }
            if let head { return RawWebSocket(channel: channel, received: received, response: head) }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Failure("no answer to the upgrade")
    }

    /// A client that asks for the upgrade and then never reads (reading off, a 4 KB receive buffer): the server's
    /// frames pile up in its way. Messages sent after the upgrade reach the server.
    static func openNeverReading(port: Int) async throws -> RawWebSocket {
        let received = Received()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: false)
            .channelOption(.socketOption(.so_rcvbuf), value: 4096)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(received)) }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await channel.writeAndFlush(channel.allocator.buffer(string: upgradeRequest())).get()
        // Not reading, it cannot see the 101: the server upgrades within this.
        try await Task.sleep(for: .milliseconds(200))
        return RawWebSocket(channel: channel, received: received, response: "")
    }

    /// Sends one frame, masked with a random key.
    func send(_ frame: Frame) async throws {
        var buffer = channel.allocator.buffer(capacity: frame.payload.count + 14)
        buffer.writeInteger(UInt8(frame.fin ? 0x80 : 0) | frame.opcode)
        let count = frame.payload.count
        if count < 126 {
            buffer.writeInteger(UInt8(0x80 | count))
        } else if count <= 0xFFFF {
            buffer.writeInteger(UInt8(0x80 | 126))
            buffer.writeInteger(UInt16(count))
        } else {
            buffer.writeInteger(UInt8(0x80 | 127))
            buffer.writeInteger(UInt64(count))
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        buffer.writeBytes(mask)
        buffer.writeBytes(frame.payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
        try await channel.writeAndFlush(buffer).get()
    }

    func sendText(_ text: String, fin: Bool = true) async throws { try await send(Frame(fin: fin, opcode: Self.text, payload: Array(text.utf8))) }

    /// The server's next frame; fails after `timeout`.
    func next(timeout: Duration = .seconds(10)) async throws -> Frame {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let frame = received.bytes.withLock({ Self.parse(&$0) }) { return frame }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw Failure("no frame within \(timeout)")
    }

    /// Waits until what the server sent after `response` contains `text`; returns all of it as text.
    func receivedText(containing text: String, timeout: Duration = .seconds(10)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let sofar = received.bytes.withLock { String(decoding: $0, as: UTF8.self) }
            if sofar.contains(text) { return sofar }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw Failure("no \(text) within \(timeout)")
    }

    /// Whether the socket closed (a closed server side may not show here while a child process holds the socket).
    var isClosed: Bool { received.closed.load(ordering: .relaxed) }

    func close() async { try? await channel.close().get() }

    /// Shuts the client's sending side only (TCP half-close), without a close frame.
    func shutOutput() async throws { try await channel.close(mode: .output).get() }

    /// Takes one whole (unmasked, server-sent) frame off the front of `bytes`, if one is there.
    static func parse(_ bytes: inout [UInt8]) -> Frame? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7F)
        var at = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            at = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
            at = 10
            // A length RFC 6455 forbids (top bit set) or beyond any test's: a frame with a reserved opcode, which fails
            // the test that reads it, instead of a trap that would end every test in the process.
            guard bytes[2] & 0x80 == 0, length <= Int(Int32.max) else {
                bytes.removeAll()
                return Frame(fin: true, opcode: 0xF, payload: [])
            }
        }
        guard bytes.count >= at + length else { return nil }
        let frame = Frame(fin: bytes[0] & 0x80 != 0, opcode: bytes[0] & 0x0F, payload: Array(bytes[at..<at + length]))
        bytes.removeFirst(at + length)
        return frame
    }
}
