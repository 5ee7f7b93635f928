import NIOCore
import NIOPosix
import ParsleyCore

/// One LiveQuery client of the bench as a channel handler, with no task of its own: it asks for the upgrade, sends
/// `connect` and `subscribe` once the server answers 101, answers the server's pings, and hands each text frame to
/// `ClientStats`. The clients share the server's two cores, so the less they cost, the more the figures say about
/// the server (a client of swift-websocket, a few tasks per socket, took about as much CPU as the server).
final class LiveQueryBenchClient: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let messages: [String]
    private let stats: ClientStats
    private var upgraded = false
    private var pending: ByteBuffer?

    init(messages: [String], stats: ClientStats) { (self.messages, self.stats) = (messages, stats) }

    /// The clients' own event loops: the bench's REST writes (on the shared group) are not answered behind a burst of
    /// a thousand events being read here, so their latency is the server's.
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)

    /// Connects client `index` to the server on `port`.
    static func open(port: Int, messages: [String], stats: ClientStats) async throws -> any Channel {
        try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(LiveQueryBenchClient(messages: messages, stats: stats))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
    }

    func channelActive(context: ChannelHandlerContext) {
        let request =
            "GET /parse HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if var buffer = pending {
            buffer.writeBuffer(&incoming)
            incoming = buffer
        }
        if !upgraded {
            guard let end = incoming.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) else {
                pending = incoming
                return
            }
            incoming.moveReaderIndex(forwardBy: end.upperBound - incoming.readerIndex)
            upgraded = true
            for message in messages { send(context, opcode: 0x1, Array(message.utf8)) }
            context.flush()
        }
        while let (opcode, payload) = Self.frame(&incoming) {
            switch opcode {
            case 0x1: stats.record(bytes: payload)
            case 0x9:
                send(context, opcode: 0xA, Array(payload))
                context.flush()
            default: break
            }
        }
        pending = incoming.readableBytes > 0 ? incoming : nil
    }

    /// A client frame (masked with key 0, so the payload goes as it is).
    private func send(_ context: ChannelHandlerContext, opcode: UInt8, _ payload: [UInt8]) {
        var buffer = context.channel.allocator.buffer(capacity: payload.count + 8)
        buffer.writeInteger(0x80 | opcode)
        if payload.count < 126 {
            buffer.writeInteger(UInt8(0x80 | payload.count))
        } else {
            buffer.writeInteger(UInt8(0x80 | 126))
            buffer.writeInteger(UInt16(payload.count))
        }
        buffer.writeInteger(UInt32(0))
        buffer.writeBytes(payload)
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    /// Takes one whole server frame (unmasked) off `buffer`, if one is there.
    static func frame(_ buffer: inout ByteBuffer) -> (UInt8, ByteBufferView)? {
        let start = buffer.readerIndex
        guard let first = buffer.getInteger(at: start, as: UInt8.self), let second = buffer.getInteger(at: start + 1, as: UInt8.self) else {
            return nil
        }
        var length = Int(second & 0x7F)
        var header = 2
        if length == 126 {
            guard let l = buffer.getInteger(at: start + 2, as: UInt16.self) else { return nil }
            (length, header) = (Int(l), 4)
        } else if length == 127 {
            guard let l = buffer.getInteger(at: start + 2, as: UInt64.self) else { return nil }
            (length, header) = (Int(l), 10)
        }
        guard buffer.readableBytes >= header + length, let payload = buffer.viewBytes(at: start + header, length: length) else { return nil }
        buffer.moveReaderIndex(forwardBy: header + length)
        return (first & 0x0F, payload)
    }
}
