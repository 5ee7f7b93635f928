import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ParsleyDomain
import ParsleyGraphQL

/// LiveQuery's transport: a WebSocket upgrade on any path of the API port (Parse Server accepts it anywhere; SDKs
/// use the server URL with `ws://`), when LiveQuery is on. Each socket is one `LiveConnection` of the hub: its text
/// frames go to the hub, the hub's frames go out in order, and the hub's pings keep it honest.
enum LiveQuerySocket {
    /// The HTTP server: plain HTTP/1.1, with the WebSocket upgrade when any class is live.
    /// The client's address is the TCP peer's, or what the proxies `trustProxy` trusts forward (as for HTTP requests).
    /// With `graphQL` (the GraphQL API is mounted), a socket at its path asking for `graphql-transport-ws` is a
    /// `GraphQLWSSession` over its own hub connection instead.
    static func server(
        _ hub: LiveQueryHub, options: LiveQueryOptions, trustProxy: TrustProxy = .none, graphQL: GraphQLSockets? = nil
    ) -> HTTPServerBuilder {
        guard hub.isEnabled else { return .http1() }
        let ws = WebSocketServerConfiguration(
            maxFrameSize: options.maxMessageBytes, autoPing: .enabled(timePeriod: options.pingInterval), closeTimeout: .seconds(5),
            validateUTF8: true)
        return .http1WebSocketUpgrade(configuration: .init(ws: ws)) { head, channel, _ in
            let address = trustProxy.clientAddress(
                peer: channel.remoteAddress?.ipAddress, forwardedFor: head.headerFields[values: ParsleyResponder.forwardedFor])
            if let graphQL, graphQL.accepts(head) {
                var headers = HTTPFields()
                headers[.secWebSocketProtocol] = GraphQLWSSession.subprotocol
                return .upgrade(headers) { inbound, outbound, _ in
                    await graphQL.serve(
                        hub, channel: channel, address: address, inbound: inbound, outbound: outbound, maxMessage: options.maxMessageBytes)
                }
            }
            return .upgrade([:]) { inbound, outbound, _ in
                await serve(hub, channel: channel, address: address, inbound: inbound, outbound: outbound, maxMessage: options.maxMessageBytes)
            }
        }
    }

    static func serve(
        _ hub: LiveQueryHub, channel: any Channel, address: String?, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        maxMessage: Int
    ) async {
        let connection = hub.open(address: address)
        // A client too far behind is cut off at once (its socket may not be draining at all).
        connection.onOverflow { channel.close(promise: nil) }
        defer { hub.close(connection) }
        await withTaskGroup(of: Void.self) { group in
            // The hub's frames, in order; when they end (the hub let the client go) the socket closes.
            group.addTask {
                do {
                    for await frame in connection.frames { try await outbound.write(.text(frame)) }
                } catch {}
                channel.close(promise: nil)
            }
            // The client's messages, in this task (one task less per connection than a reader of its own).
            do {
                for try await message in inbound.messages(maxSize: maxMessage) {
                    guard case .text(let text) = message else { continue }
                    await hub.receive(text, from: connection)
                }
            } catch {}
            connection.finish()
            group.cancelAll()
        }
    }
}
