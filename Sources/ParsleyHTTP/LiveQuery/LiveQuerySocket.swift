import Hummingbird
import HummingbirdCore
import NIOHTTP1
import ParsleyDomain
import ParsleyGraphQL

/// LiveQuery's transport: a WebSocket upgrade on any path of the API port (Parse Server accepts it anywhere; SDKs
/// use the server URL with `ws://`), when LiveQuery is on. Each socket is one `LiveConnection` of the hub: its text
/// messages go to the hub in order, and the hub's frames go straight to the socket's outbox (`SocketPeer`).
enum LiveQuerySocket {
    /// The HTTP server: plain HTTP/1.1, with the WebSocket upgrade when any class is live; either way each connection's
    /// work runs on the `RequestScheduler`, oldest request first.
    /// The client's address is the TCP peer's, or what the proxies `trustProxy` trusts forward (as for HTTP requests).
    /// With `graphQL` (the GraphQL API is mounted), a socket at its path asking for `graphql-transport-ws` is a
    /// `GraphQLWSSession` over its own hub connection instead.
    static func server(
        _ hub: LiveQueryHub, inbox: SocketInbox, options: LiveQueryOptions, trustProxy: TrustProxy = .none, graphQL: GraphQLSockets? = nil
    ) -> HTTPServerBuilder {
        let scheduler = RequestScheduler.shared
        guard hub.isEnabled else { return .scheduled(on: scheduler) { HTTP1Channel(responder: $0) } }
        return .scheduled(on: scheduler) { responder in
            SocketChannel(responder: responder, inbox: inbox, options: options, trustProxy: trustProxy) { head in
                if let graphQL, graphQL.accepts(uri: head.uri, protocols: head.headers[canonicalForm: "Sec-WebSocket-Protocol"].map(String.init)) {
                    return graphQL.accepted(hub)
                }
                return SocketChannel.Accepted { peer, address in Session(hub: hub, connection: hub.open(address: address, outlet: peer)) }
            }
        }
    }

    /// A LiveQuery socket's session: messages to the hub; the hub forgets the connection when the socket closes.
    struct Session: SocketSession {
        let hub: LiveQueryHub
        let connection: LiveConnection

        func receive(_ text: String, peer: SocketPeer) async { await hub.receive(text, from: connection) }
        func hubFrame(_ text: String, peer: SocketPeer) async {}
        func closed(peer: SocketPeer) async { hub.close(connection) }
    }
}
