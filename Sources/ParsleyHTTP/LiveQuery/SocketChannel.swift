import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket
import ParsleyDomain

/// The API port's connections when sockets are on: plain HTTP/1.1 served by Hummingbird's responder, or a
/// WebSocket upgrade handed to `SocketFrames` on the channel itself. An upgraded socket keeps no task of its own
/// (Hummingbird's per-connection task ends with the upgrade), so an idle socket costs its channel, its handlers and
/// its session, not task stacks.
struct SocketChannel: ServerChildChannel, HTTPChannelHandler {
    /// A socket the server accepts: the response's extra headers (a subprotocol) and how to attach its session.
    struct Accepted: Sendable {
        var headers: HTTPHeaders = [:]
        /// Whether the hub's frames go through the session (GraphQL) or straight out (LiveQuery).
        var translatesHubFrames = false
        /// Makes the socket's session, once its peer exists.
        var attach: @Sendable (SocketPeer, _ address: String?) -> any SocketSession
    }

    enum Upgrade: Sendable {
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade asked for and refused: the request is answered 400 and the connection closed.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case socket
    }

    struct Value: ServerChildChannelValue {
        let upgrade: EventLoopFuture<Upgrade>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let inbox: SocketInbox
    let maxMessage: Int
    /// The sockets' pings, one timer per event loop.
    let pings: SocketPingWheels
    let queueLimit: Int
    let trustProxy: TrustProxy
    /// Whether (and how) a request asking for an upgrade is accepted.
    let accept: @Sendable (HTTPRequestHead) -> Accepted?

    init(
        responder: @escaping HTTPChannelHandler.Responder, inbox: SocketInbox, options: LiveQueryOptions, trustProxy: TrustProxy,
        accept: @escaping @Sendable (HTTPRequestHead) -> Accepted?
    ) {
        self.responder = Self.upgradeOnNewConnection(responder)
        (self.inbox, self.trustProxy, self.accept) = (inbox, trustProxy, accept)
        maxMessage = options.maxMessageBytes
        pings = SocketPingWheels(interval: TimeAmount(options.pingInterval))
        queueLimit = options.queueLimit
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // Until the first request decides what the connection is (then each side removes it).
            let waiting = NIOLoopBound(BeforeFirstRequest(), eventLoop: channel.eventLoop)
            let upgrader = NIOTypedWebSocketServerUpgrader<Upgrade>(
                maxFrameSize: maxMessage, enableAutomaticErrorHandling: false,
                shouldUpgrade: { channel, head in
                    return channel.eventLoop.makeSucceededFuture(accept(head)?.headers)
                },
                upgradePipelineHandler: { channel, head in
                    channel.eventLoop.makeCompletedFuture {
                        guard let accepted = accept(head) else { throw NIOWebSocketUpgradeError.unsupportedWebSocketTarget }
                        _ = channel.pipeline.syncOperations.removeHandler(waiting.value)
                        // Frames leave encoded (`ServerFrame`), header and payload in one buffer, where NIO's encoder
                        // would pass them on (anything nearer the socket still sees them).
                        let outlet = FrameOutlet()
                        let encoder = try channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
                        try channel.pipeline.syncOperations.addHandler(outlet, position: .before(encoder.handler))
                        let peer = SocketPeer(
                            channel: channel, outlet: outlet, inbox: inbox, translatesHubFrames: accepted.translatesHubFrames, queueLimit: queueLimit)
                        let address = trustProxy.clientAddress(
                            peer: channel.remoteAddress?.ipAddress, forwardedFor: head.headers[ParsleyResponder.forwardedFor.rawName])
                        peer.attach(accepted.attach(peer, address))
                        try channel.pipeline.syncOperations.addHandler(
                            SocketFrames(peer: peer, outlet: outlet, maxMessage: maxMessage, pings: pings))
                        return Upgrade.socket
                    }
                })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<Upgrade>(
                upgradeConfiguration: NIOTypedHTTPServerUpgradeConfiguration(
                    upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in
                        channel.eventLoop.makeCompletedFuture {
                            let sync = channel.pipeline.syncOperations
                            _ = channel.pipeline.syncOperations.removeHandler(waiting.value)
                            try sync.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                            try sync.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
                            let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                                wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                            return waiting.value.upgradeAsked ? .refused(http) : .http(http)
                        }
                    }))
            configuration.enablePipelining = false  // HTTP is pipelined by NIOAsyncChannel
            configuration.enableErrorHandling = false  // Hummingbird answers errors
            configuration.enableResponseHeaderValidation = false  // HTTPTypes validates them
            let upgrade = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            // Before NIO's upgrade handler, which drops the head of a request whose upgrade it cannot perform.
            let upgrading = try channel.pipeline.syncOperations.context(handlerType: NIOTypedHTTPServerUpgradeHandler<Upgrade>.self)
            try channel.pipeline.syncOperations.addHandler(waiting.value, position: .before(upgrading.handler))
            return Value(upgrade: upgrade, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgrade.get() {
            case .http(let http): await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http): await refuse(http)
            case .socket: break  // the channel's handlers serve it from now on
            }
        } catch {
            // Closed, or half-closed, before its first request: nothing else closes it.
            logger.debug("Connection ended before its first request", metadata: ["error": "\(error)"])
            value.channel.close(promise: nil)
        }
    }

    /// A refused upgrade: 400 naming the one WebSocket version served (RFC 6455 4.4), and the connection closes.
    private func refuse(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>) async {
        try? await http.executeThenClose { _, outbound in
            let head = HTTPResponse(
                status: .badRequest, headerFields: [.connection: "close", .contentLength: "0", .secWebSocketVersion: "13"])
            try await outbound.write(contentsOf: [.head(head), .end(nil)])
        }
    }

    /// NIO upgrades only a connection's first request: a later request asking for a WebSocket is sent back to the
    /// same URL with the connection closed, so the client asks again on a new one.
    static func upgradeOnNewConnection(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct Redirected: Error {}
        return { request, writer, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else { return try await responder(request, writer, channel) }
            let location = request.uri.query.map { request.uri.path + "?" + $0 } ?? request.uri.path
            try await writer.writeResponse(HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: location]))
            throw Redirected()
        }
    }
}

/// A connection before its first request, when it may still become a socket: closed if the client goes away or the
/// server shuts down meanwhile (nothing else would: HTTP's handlers come with the first request). Removed once the
/// request decides what the connection is.
final class BeforeFirstRequest: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    /// The first request asked for an upgrade (of any protocol). If it is not upgraded it is refused: NIO's upgrade
    /// handler does not pass such a request's head on, so it cannot be served as plain HTTP. (Parse Server's `ws`
    /// answers 400 to an upgrade it does not perform, too.)
    private(set) var upgradeAsked = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data), head.headers.contains(name: "upgrade") { upgradeAsked = true }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent || event as? ChannelEvent == .inputClosed { context.close(promise: nil) }
        context.fireUserInboundEventTriggered(event)
    }
}
