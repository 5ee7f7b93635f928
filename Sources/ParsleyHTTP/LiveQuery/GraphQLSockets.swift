import NIOHTTP1
import NIOWebSocket
import ParsleyDomain
import ParsleyGraphQL

/// GraphQL subscriptions' transport: a WebSocket upgrade at `graphQLPath` that asks for `graphql-transport-ws`. Each
/// socket is one `GraphQLWSSession` over one LiveQuery hub connection, so events follow LiveQuery's rules.
struct GraphQLSockets: Sendable {
    let path: String
    let service: GraphQLService
    /// `connection_init`'s keys, as REST headers, to the caller's `Auth` (the REST transport's own check).
    let authenticate: @Sendable ([String: String], String?) async throws -> Auth

    /// Whether an upgrade request for `uri`, offering the subprotocols `protocols` (header values), is GraphQL's.
    func accepts(uri: String, protocols: [String]) -> Bool {
        guard (uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? uri) == path else {
            return false
        }
        return protocols.contains { $0.filter { $0 != " " } == GraphQLWSSession.subprotocol }
    }

    /// The socket's answer (its subprotocol) and session: the hub's frames for its connection go through the session.
    func accepted(_ hub: LiveQueryHub) -> SocketChannel.Accepted {
        let authenticate = self.authenticate
        let service = self.service
        return SocketChannel.Accepted(headers: ["Sec-WebSocket-Protocol": GraphQLWSSession.subprotocol], translatesHubFrames: true) {
            peer, address in
            let connection = hub.open(address: address, outlet: peer)
            let session = GraphQLWSSession(service: service, hub: hub, connection: connection) { keys in try await authenticate(keys, address) }
            return Session(hub: hub, connection: connection, session: session)
        }
    }

    /// One GraphQL socket: the client's messages and the hub's frames through `GraphQLWSSession`, its outputs sent.
    struct Session: SocketSession {
        let hub: LiveQueryHub
        let connection: LiveConnection
        let session: GraphQLWSSession

        func receive(_ text: String, peer: SocketPeer) async { perform(await session.receive(text), peer) }
        func hubFrame(_ text: String, peer: SocketPeer) async { perform(await session.hubFrame(text), peer) }
        func closed(peer: SocketPeer) async { hub.close(connection) }

        private func perform(_ outputs: [GraphQLWSSession.Output], _ peer: SocketPeer) {
            for output in outputs {
                switch output {
                case .text(let text): peer.send(text)
                case .close(let code, let reason):
                    peer.close(code: .init(codeNumber: code), reason: reason)
                    return
                }
            }
        }
    }
}
