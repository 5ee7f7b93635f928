import GraphQL
import ParsleyCore
public import ParsleyDomain
import Synchronization

/// One WebSocket of the `graphql-transport-ws` protocol (the `graphql-ws` library's, which Apollo Client and urql
/// speak) in front of one LiveQuery connection: `connection_init` becomes LiveQuery's `connect` with the same keys
/// and session, a subscription becomes a LiveQuery `subscribe` of its class and `where`, and each event the hub
/// sends (after its ACL, CLP and protected-field rules) runs the subscription's selection and goes out as `next`.
/// Queries and mutations sent on the socket run once (`next`, then `complete`).
///
/// The transport feeds it the client's text frames (`receive`) and the hub's frames for this connection
/// (`hubFrame`), and sends or closes as told.
public final class GraphQLWSSession: Sendable {
    /// What the transport does next.
    public enum Output: Sendable, Equatable {
        case text(String)
        /// Close the socket with a `graphql-transport-ws` close code (4400 bad message, 4401 unauthorised, 4403
        /// forbidden, 4409 duplicate id, 4429 a second `connection_init`).
        case close(code: Int, reason: String)
    }

    /// The socket's subprotocol.
    public static let subprotocol = "graphql-transport-ws"

    let service: GraphQLService
    let hub: LiveQueryHub
    let connection: LiveConnection
    let authenticate: @Sendable ([String: String]) async throws -> Auth

    struct Subscription: Sendable {
        let id: String
        let query: String
        let variables: [String: Map]
        let operationName: String?
        let className: String
    }

    struct State: Sendable {
        var initialised = false
        var acknowledged = false
        var auth: Auth?
        var sessionToken: String?
        var byRequest: [Int: Subscription] = [:]
        var requests: [String: Int] = [:]
        var nextRequest = 1
    }

    let state = Mutex(State())

    /// `authenticate` turns `connection_init`'s keys (as REST headers: `X-Parse-Application-Id`, ...) into the
    /// caller's `Auth`, as a REST request's headers would be, or throws.
    public init(
        service: GraphQLService, hub: LiveQueryHub, connection: LiveConnection,
        authenticate: @escaping @Sendable ([String: String]) async throws -> Auth
    ) {
        (self.service, self.hub, self.connection, self.authenticate) = (service, hub, connection, authenticate)
    }

    // MARK: From the client

    public func receive(_ text: String) async -> [Output] {
        guard case .object(let message)? = try? JSONParser.parse(text), case .string(let type)? = message["type"] else {
            return [.close(code: 4400, reason: "Invalid message received")]
        }
        switch type {
        case "connection_init": return await initialise(message["payload"])
        case "ping": return [.text(#"{"type":"pong"}"#)]
        case "pong": return []
        case "subscribe":
            guard case .string(let id)? = message["id"], !id.isEmpty, case .object(let payload)? = message["payload"] else {
                return [.close(code: 4400, reason: "Invalid message received")]
            }
            return await subscribe(id, payload)
        case "complete":
            guard case .string(let id)? = message["id"] else { return [.close(code: 4400, reason: "Invalid message received")] }
            let request = state.withLock { s -> Int? in
                guard let request = s.requests.removeValue(forKey: id) else { return nil }
                s.byRequest[request] = nil
                return request
            }
            if let request { await hub.receive(#"{"op":"unsubscribe","requestId":\#(request)}"#, from: connection) }
            return []
        default: return [.close(code: 4400, reason: "Invalid message received")]
        }
    }

    /// The keys Parsley reads from `connection_init`'s payload, by REST header and by LiveQuery name.
    static let keys: [(header: String, liveQuery: String)] = [
        ("X-Parse-Application-Id", "applicationId"), ("X-Parse-Session-Token", "sessionToken"), ("X-Parse-Master-Key", "masterKey"),
        ("X-Parse-Client-Key", "clientKey"), ("X-Parse-Javascript-Key", "javascriptKey"), ("X-Parse-REST-API-Key", "restAPIKey"),
        ("X-Parse-Windows-Key", "windowsKey"), ("X-Parse-Installation-Id", "installationId"),
    ]

    func initialise(_ payload: JSONValue?) async -> [Output] {
        let first = state.withLock { s in
            defer { s.initialised = true }
            return !s.initialised
        }
        guard first else { return [.close(code: 4429, reason: "Too many initialisation requests")] }
        // Keys at the top of the payload or under `headers` (Apollo's `connectionParams`), by either name.
        var given: [String: String] = [:]
        for source in [payload, payload?["headers"]] {
            guard case .object(let object)? = source else { continue }
            for (name, value) in object {
                guard case .string(let text) = value, !text.isEmpty else { continue }
                if let key = Self.keys.first(where: { $0.header.lowercased() == name.lowercased() || $0.liveQuery == name }) {
                    given[key.header] = text
                }
            }
        }
        let auth: Auth
        do {
            auth = try await authenticate(given)
        } catch {
            return [.close(code: 4403, reason: "Forbidden")]
        }
        var connect: [String: JSONValue] = ["op": "connect"]
        for key in Self.keys { if let value = given[key.header] { connect[key.liveQuery] = .string(value) } }
        if connect["applicationId"] == nil { return [.close(code: 4403, reason: "Forbidden")] }
        state.withLock {
            $0.auth = auth
            $0.sessionToken = given["X-Parse-Session-Token"]
        }
        // The hub answers `connected` (→ `connection_ack`) or an error (→ 4403) through `hubFrame`.
        await hub.receive(JSONWriter.string(.object(connect)), from: connection)
        return []
    }

    func subscribe(_ id: String, _ payload: [String: JSONValue]) async -> [Output] {
        let (acknowledged, taken, known) = state.withLock { ($0.acknowledged, $0.requests[id] != nil, $0.auth) }
        guard acknowledged, let auth = known else { return [.close(code: 4401, reason: "Unauthorized")] }
        if taken { return [.close(code: 4409, reason: "Subscriber for \(id) already exists")] }
        guard case .string(let query)? = payload["query"] else { return [Self.error(id, [Self.message("Must provide a query.")])] }
        var variables: [String: Map] = [:]
        if case .object(let values)? = payload["variables"] { for (name, value) in values { variables[name] = MapJSON.map(value) } }
        let operationName = payload["operationName"]?.stringValue
        guard let document = try? service.parsed(query),
            let operation = OperationGuard(document).operation(named: operationName), operation.operation == .subscription
        else {
            // A query or a mutation (or a document GraphQL refuses): answered once, as over HTTP.
            let answer = await service.execute(.object(payload), auth: auth)
            if answer.status == 200 { return [.text(Self.next(id, answer.body)), .text(Self.complete(id))] }
            let errors = (try? JSONParser.parse(answer.body))?["errors"] ?? .array([Self.message("Bad request")])
            return [Self.error(id, errors.arrayValue ?? [])]
        }
        let probe = SubscriptionProbe()
        let checked = await service.run(
            document, query: query, variables: variables, operationName: operationName, auth: auth, rootValue: probe)
        guard let (className, whereValue) = probe.found.withLock({ $0 }) else {
            let errors = (try? JSONParser.parse(checked.body))?["errors"]?.arrayValue ?? [Self.message("Invalid subscription")]
            return [Self.error(id, errors)]
        }
        let subscription = Subscription(id: id, query: query, variables: variables, operationName: operationName, className: className)
        let (request, token) = state.withLock { s in
            let request = s.nextRequest
            s.nextRequest += 1
            s.requests[id] = request
            s.byRequest[request] = subscription
            return (request, s.sessionToken)
        }
        var subscribe: [String: JSONValue] = [
            "op": "subscribe", "requestId": .int(Int64(request)),
            "query": ["className": .string(className), "where": .object(whereValue)],
        ]
        if let token { subscribe["sessionToken"] = .string(token) }
        await hub.receive(JSONWriter.string(.object(subscribe)), from: connection)
        return []
    }

    // MARK: From the hub

    /// A frame the LiveQuery hub queued for this connection, as `graphql-transport-ws` messages.
    public func hubFrame(_ text: String) async -> [Output] {
        guard case .object(let frame)? = try? JSONParser.parse(text), case .string(let op)? = frame["op"] else { return [] }
        let request = frame["requestId"]?.integerValue
        switch op {
        case "connected":
            state.withLock { $0.acknowledged = true }
            return [.text(#"{"type":"connection_ack"}"#)]
        case "error":
            guard let request, let subscription = forget(request) else {
                return state.withLock({ $0.acknowledged }) ? [] : [.close(code: 4403, reason: "Forbidden")]
            }
            let message = frame["error"]?.stringValue ?? "LiveQuery error"
            return [Self.error(subscription.id, [["message": .string(message), "extensions": ["code": frame["code"] ?? .int(1)]]])]
        case "create", "enter", "update", "leave", "delete":
            guard let request, let subscription = state.withLock({ $0.byRequest[request] }), let auth = state.withLock({ $0.auth }) else {
                return []
            }
            func object(_ value: JSONValue?) -> ParseObjectValue? {
                guard case .object(var fields)? = value else { return nil }
                fields["className"] = nil
                return ParseObjectValue(className: subscription.className, fields: fields)
            }
            let event = LiveEventValue(
                className: subscription.className, event: op, object: object(frame["object"]), original: object(frame["original"]))
            guard let document = try? service.parsed(subscription.query) else { return [] }
            let answer = await service.run(
                document, query: subscription.query, variables: subscription.variables, operationName: subscription.operationName, auth: auth,
                rootValue: event)
            return [.text(Self.next(subscription.id, answer.body))]
        default: return []
        }
    }

    func forget(_ request: Int) -> Subscription? {
        state.withLock { s in
            guard let subscription = s.byRequest.removeValue(forKey: request) else { return nil }
            s.requests[subscription.id] = nil
            return subscription
        }
    }

    // MARK: Messages

    static func next(_ id: String, _ result: String) -> String {
        #"{"type":"next","id":"# + JSONWriter.string(.string(id)) + #","payload":"# + result + "}"
    }

    static func complete(_ id: String) -> String { #"{"type":"complete","id":"# + JSONWriter.string(.string(id)) + "}" }

    static func error(_ id: String, _ errors: [JSONValue]) -> Output {
        .text(JSONWriter.string(["type": "error", "id": .string(id), "payload": .array(errors)]))
    }

    static func message(_ text: String) -> JSONValue { ["message": .string(text)] }
}
