import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore
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

    func accepts(_ head: HTTPRequest) -> Bool {
        let requestPath = head.path.map { $0.split(separator: "?", maxSplits: 1).first.map(String.init) ?? $0 } ?? ""
        guard requestPath == path else { return false }
        return head.headerFields[values: .secWebSocketProtocol].contains { value in
            value.split(separator: ",").contains { $0.filter { $0 != " " } == GraphQLWSSession.subprotocol }
        }
    }

    func serve(
        _ hub: LiveQueryHub, channel: any Channel, address: String?, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        maxMessage: Int
    ) async {
        let connection = hub.open(address: address)
        connection.onOverflow { channel.close(promise: nil) }
        defer { hub.close(connection) }
        let authenticate = self.authenticate
        let session = GraphQLWSSession(service: service, hub: hub, connection: connection) { keys in try await authenticate(keys, address) }
        /// Sends what the session says; false once the socket is to close.
        @Sendable func perform(_ outputs: [GraphQLWSSession.Output]) async -> Bool {
            for output in outputs {
                switch output {
                case .text(let text):
                    do { try await outbound.write(.text(text)) } catch { return false }
                case .close(let code, let reason):
                    try? await outbound.close(.init(codeNumber: code), reason: reason)
                    return false
                }
            }
            return true
        }
        await withTaskGroup(of: Void.self) { group in
            // The hub's frames for this connection, translated, in order.
            group.addTask {
                for await frame in connection.frames {
                    guard await perform(await session.hubFrame(frame)) else { break }
                }
                channel.close(promise: nil)
            }
            do {
                for try await message in inbound.messages(maxSize: maxMessage) {
                    guard case .text(let text) = message else { continue }
                    guard await perform(await session.receive(text)) else { break }
                }
            } catch {}
            connection.finish()
            group.cancelAll()
        }
    }
}
