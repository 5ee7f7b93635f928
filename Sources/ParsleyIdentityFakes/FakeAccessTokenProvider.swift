import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
public import ParsleyCore
import Synchronization

/// Providers that check an access token when asked, on 127.0.0.1, for the tests:
///
/// - Facebook's Graph API under `graphURL`: `GET /me?fields=id&access_token=` answers the token's user id,
///   `GET /app?access_token=` its app id, from the tokens `addGraphToken` registered; an unknown token answers Facebook's
///   400 `OAuthException`. With `setAppSecret`, a call's `appsecret_proof` must be the token's HMAC-SHA256 with the secret
///   (and, when `required`, be there at all), else 400 as Facebook answers.
/// - An OAuth 2.0 token introspection endpoint (RFC 7662) at `introspectionURL`: `POST` with the form `token=...`
///   answers the JSON `setIntrospection` gave for that token, `{"active": false}` for any other, and records each call's
///   `Authorization` and `Content-Type` headers.
///
/// `setBehaviour` makes both hang, fail with a 500, or answer HTML instead.
public final class FakeAccessTokenProvider: Sendable {
    public enum Behaviour: Sendable {
        case normal
        /// Never answers (until the fake stops, or after a minute).
        case hang
        /// 500 with an HTML body.
        case serverError
        /// 200 with an HTML body.
        case notJSON
    }

    /// One call the introspection endpoint received.
    public struct IntrospectionCall: Sendable, Equatable {
        public let authorization: String?
        public let contentType: String?
        /// The form's `token`.
        public let token: String?

        public init(authorization: String?, contentType: String?, token: String?) {
            self.authorization = authorization
            self.contentType = contentType
            self.token = token
        }
    }

    /// One call the Graph API received.
    public struct GraphCall: Sendable, Equatable {
        /// `me` or `app`.
        public let path: String
        public let accessToken: String?
        public let appSecretProof: String?

        public init(path: String, accessToken: String?, appSecretProof: String?) {
            self.path = path
            self.accessToken = accessToken
            self.appSecretProof = appSecretProof
        }
    }

    struct Values {
        var graphTokens: [String: (userId: String, appId: String)] = [:]
        var appSecret: (secret: String, required: Bool)?
        var introspections: [String: JSONValue] = [:]
        var behaviour = Behaviour.normal
        var graphCalls: [GraphCall] = []
        var introspectionCalls: [IntrospectionCall] = []
    }

    /// The state the routes and the tests share (the routes exist before the port, and so before the fake, does).
    final class State: Sendable {
        let values = Mutex(Values())
    }

    public let port: Int
    let state: State

    init(port: Int, state: State) {
        self.port = port
        self.state = state
    }

    public var url: String { "http://127.0.0.1:\(port)" }
    /// The Graph API's base URL (`graphURL` in `auth.facebook`).
    public var graphURL: String { url + "/graph" }
    /// The introspection endpoint (`tokenIntrospectionEndpointUrl` of an `oauth2` provider).
    public var introspectionURL: String { url + "/introspect" }

    /// A Graph API access token of user `userId`, obtained by the Facebook app `appId`.
    public func addGraphToken(_ token: String, userId: String, appId: String) {
        state.values.withLock { $0.graphTokens[token] = (userId, appId) }
    }

    /// The app secret `appsecret_proof` is checked against (nil: not checked); `required`: a call without one fails.
    public func setAppSecret(_ secret: String?, required: Bool = true) {
        state.values.withLock { $0.appSecret = secret.map { ($0, required) } }
    }

    /// What the introspection endpoint answers for `token`.
    public func setIntrospection(_ token: String, _ answer: JSONValue) {
        state.values.withLock { $0.introspections[token] = answer }
    }

    public func setBehaviour(_ behaviour: Behaviour) { state.values.withLock { $0.behaviour = behaviour } }

    public var graphCalls: [GraphCall] { state.values.withLock { $0.graphCalls } }
    public var introspectionCalls: [IntrospectionCall] { state.values.withLock { $0.introspectionCalls } }

    /// `appsecret_proof` for `token`: HMAC-SHA256 keyed with `secret`, lower-case hex.
    public static func appSecretProof(_ token: String, secret: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: SymmetricKey(data: Data(secret.utf8)))
            .map { String(format: "%02x", $0) }.joined()
    }

    /// Runs the fake beside `body`.
    public static func with(_ body: (FakeAccessTokenProvider) async throws -> Void) async throws {
        let state = State()
        let router = Router()
        router.get("/graph/{path}") { request, context -> Response in
            let path = context.parameters.get("path") ?? ""
            let query = request.uri.queryParameters
            let call = GraphCall(
                path: path, accessToken: query["access_token"].map(String.init), appSecretProof: query["appsecret_proof"].map(String.init))
            return try await serveGraph(call, fields: query["fields"].map(String.init), state: state)
        }
        router.post("/introspect") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 16)
            let token = form(String(buffer: body))["token"]
            let call = IntrospectionCall(authorization: request.headers[.authorization], contentType: request.headers[.contentType], token: token)
            return try await serveIntrospection(call, state: state)
        }
        try await LoopbackServer.run(router, label: "fake-access-token-provider") { port in
            try await body(FakeAccessTokenProvider(port: port, state: state))
        }
    }

    static func serveGraph(_ call: GraphCall, fields: String?, state: State) async throws -> Response {
        let (behaviour, token, appSecret) = state.values.withLock { values in
            values.graphCalls.append(call)
            return (values.behaviour, call.accessToken.flatMap { values.graphTokens[$0] }, values.appSecret)
        }
        if let failure = try await misbehave(behaviour) { return failure }
        guard let accessToken = call.accessToken, let token else {
            return json(.badRequest, ["error": ["message": "Invalid OAuth access token data.", "type": "OAuthException", "code": 190]])
        }
        if let appSecret, call.appSecretProof != nil || appSecret.required {
            guard call.appSecretProof == appSecretProof(accessToken, secret: appSecret.secret) else {
                return json(
                    .badRequest,
                    ["error": ["message": "Invalid appsecret_proof provided in the API argument", "type": "GraphMethodException", "code": 100]])
            }
        }
        switch call.path {
        case "me": return json(.ok, fields == "id" ? ["id": .string(token.userId)] : ["id": .string(token.userId), "name": "Fake User"])
        case "app": return json(.ok, ["id": .string(token.appId), "name": "Fake App", "link": "https://www.facebook.com/games/?app_id=1"])
        default:
            let message = "Unknown path components: /\(call.path)"
            return json(.badRequest, ["error": ["message": .string(message), "type": "OAuthException", "code": 2500]])
        }
    }

    static func serveIntrospection(_ call: IntrospectionCall, state: State) async throws -> Response {
        let (behaviour, answer) = state.values.withLock { values in
            values.introspectionCalls.append(call)
            return (values.behaviour, call.token.flatMap { values.introspections[$0] })
        }
        if let failure = try await misbehave(behaviour) { return failure }
        return json(.ok, answer ?? ["active": false])
    }

    /// The answer a misbehaving fake gives instead of its own; nil when it behaves.
    static func misbehave(_ behaviour: Behaviour) async throws -> Response? {
        switch behaviour {
        case .normal: return nil
        case .hang:
            try await Task.sleep(for: .seconds(60))
            return Response(status: .gatewayTimeout)
        case .serverError: return html(.internalServerError)
        case .notJSON: return html(.ok)
        }
    }

    static func json(_ status: HTTPResponse.Status, _ body: JSONValue) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(body))))
    }

    static func html(_ status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<html>oops</html>")))
    }

    /// An `application/x-www-form-urlencoded` body's fields.
    static func form(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }
}
