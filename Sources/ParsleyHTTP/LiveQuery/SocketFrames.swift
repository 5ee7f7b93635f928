import NIOCore
import NIOWebSocket

/// The WebSocket protocol of one upgraded socket, as a channel handler (RFC 6455): text messages, whole or in
/// fragments, go to the peer once checked (UTF-8, `maxMessage`); pings are answered; a close is answered and closes
/// the socket; binary messages are ignored. Every `pingInterval` the server pings, and a client that has not
/// answered the previous ping is closed (Parse Server's `websocketTimeout`); the pings come from the loop's
/// `SocketPingWheel`.
final class SocketFrames: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame

    private let peer: SocketPeer
    private let outlet: FrameOutlet
    private let maxMessage: Int
    private let pings: SocketPingWheels
    /// A message arriving in fragments, and whether it is text.
    private var fragments: ByteBuffer?
    private var fragmentsAreText = false
    private var awaitingPong = false
    /// This socket's wheel and slot while it is pinged; its context meanwhile.
    private var pinging: (wheel: SocketPingWheel, slot: Int, context: ChannelHandlerContext)?

    init(peer: SocketPeer, outlet: FrameOutlet, maxMessage: Int, pings: SocketPingWheels) {
        (self.peer, self.outlet, self.maxMessage, self.pings) = (peer, outlet, maxMessage, pings)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let wheel = pings.wheel(for: context.eventLoop)
        pinging = (wheel, wheel.add(self), context)
    }

    func handlerRemoved(context: ChannelHandlerContext) { stopPinging() }

    func channelInactive(context: ChannelHandlerContext) {
        stopPinging()
        fragments = nil
        peer.closedByChannel()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { peer.writable() }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is ChannelShouldQuiesceEvent:
            // The server is shutting down: sockets close after what is queued.
            peer.close(code: .goingAway, reason: nil)
        case ChannelEvent.inputClosed:
            // The client went away without a close frame (the server allows half-closed connections for HTTP).
            context.close(promise: nil)
        default: break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketError {
            peer.close(code: error == .invalidFrameLength ? .messageTooLarge : .protocolError, reason: nil)
        } else {
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary:
            guard fragments == nil else { return refuse(.protocolError) }
            if frame.fin {
                deliver(frame.unmaskedData, isText: frame.opcode == .text)
            } else {
                fragments = frame.unmaskedData
                fragmentsAreText = frame.opcode == .text
            }
        case .continuation:
            guard var message = fragments else { return refuse(.protocolError) }
            var data = frame.unmaskedData
            guard message.readableBytes + data.readableBytes <= maxMessage else { return refuse(.messageTooLarge) }
            message.writeBuffer(&data)
            if frame.fin {
                fragments = nil
                deliver(message, isText: fragmentsAreText)
            } else {
                fragments = message
            }
        case .ping:
            outlet.write(ServerFrame.frame(.pong, payload: frame.unmaskedData, allocator: context.channel.allocator))
            outlet.flush()
        case .pong:
            awaitingPong = false
        case .connectionClose:
            // Answer with the client's code (RFC 6455 5.5.1); the socket closes once it is written.
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode() ?? .normalClosure
            peer.close(code: code, reason: nil)
        default:
            refuse(.protocolError)
        }
    }

    private func deliver(_ data: ByteBuffer, isText: Bool) {
        guard isText else { return }
        guard let text = String(validating: data.readableBytesView, as: UTF8.self) else { return refuse(.dataInconsistentWithMessage) }
        peer.received(text)
    }

    private func refuse(_ code: WebSocketErrorCode) {
        fragments = nil
        peer.close(code: code, reason: nil)
    }

    /// The wheel's turn for this socket: a ping, or the end when the last one was not answered.
    func ping() {
        guard let context = pinging?.context else { return }
        guard !awaitingPong else {
            stopPinging()
            context.close(promise: nil)
            return
        }
        awaitingPong = true
        outlet.write(ServerFrame.frame(.ping, payload: ByteBuffer(), allocator: context.channel.allocator))
        outlet.flush()
    }

    private func stopPinging() {
        guard let (wheel, slot, _) = pinging else { return }
        pinging = nil
        wheel.remove(self, slot: slot)
    }
}
