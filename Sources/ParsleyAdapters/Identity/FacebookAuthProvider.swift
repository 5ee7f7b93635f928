import AsyncHTTPClient
import Crypto
import NIOHTTP1
public import ParsleyCore
public import ParsleyDomain

/// `authData.facebook`, in either of the shapes Facebook's SDKs produce, as Parse Server's facebook adapter reads them:
///
/// - `{id, token}` (Limited Login, when the user declined tracking): the token is a JWT checked against Facebook's keys
///   and `clientId` (`IdentityTokenAuthProvider.facebookLimitedLogin`).
/// - `{id, access_token}` (classic log-in): checked by the Graph API. `GET <graphURL>/app?access_token=` must name one
///   of `appIds` (a token some other app obtained for the user does not sign in here), then
///   `GET <graphURL>/me?fields=id&access_token=` must name `id`. With `appSecret`, both calls carry `appsecret_proof`
///   (HMAC-SHA256 of the token keyed with the secret), which Facebook checks when the app requires it.
///
/// A data with a `token` is Limited Login, any other the Graph API, as Parse Server tells them apart. A shape whose
/// settings are missing answers 101 `Facebook auth is not configured.`; every check that fails answers 101 `Facebook auth
/// is invalid for this user.`, whatever failed; a Graph API that does not answer within 5 seconds answers 101 saying so.
public struct FacebookAuthProvider: AuthProvider {
    public let name = "facebook"
    let limitedLogin: IdentityTokenAuthProvider?
    let graph: Graph?

    /// The Graph API side: where it is, the app ids its tokens must belong to, and the app secret.
    struct Graph: Sendable {
        let url: String
        let appIds: Set<String>
        let appSecret: String?
    }

    /// Parse Server calls `https://graph.facebook.com/` without a version (the app's own default version).
    public static let defaultGraphURL = "https://graph.facebook.com"

    /// `clientIds` nil: no Limited Login; `appIds` nil: no Graph API log-ins.
    public init(
        clientIds: [String]?, jwksURL: String? = nil, appIds: [String]?, appSecret: String? = nil, graphURL: String = defaultGraphURL
    ) {
        limitedLogin = clientIds.map { ids in
            jwksURL.map { IdentityTokenAuthProvider.facebookLimitedLogin(clientIds: ids, jwksURL: $0) }
                ?? IdentityTokenAuthProvider.facebookLimitedLogin(clientIds: ids)
        }
        graph = appIds.map { Graph(url: ProviderCall.trimmed(graphURL), appIds: Set($0), appSecret: appSecret) }
    }

    static let invalid = ParseError(.objectNotFound, "Facebook auth is invalid for this user.")
    static let notConfigured = ParseError(.objectNotFound, "Facebook auth is not configured.")

    public func validate(_ data: JSONValue) async throws -> String {
        if let token = data["token"], token != .null, token != .string("") {
            guard let limitedLogin else { throw Self.notConfigured }
            return try await limitedLogin.validate(data)
        }
        guard let graph else { throw Self.notConfigured }
        guard case .string(let id)? = data["id"], !id.isEmpty, case .string(let token)? = data["access_token"], !token.isEmpty else {
            throw Self.invalid
        }
        // The app first (Parse Server checks `appIds` before the user), then the user.
        guard case .string(let appId)? = try await graph.call("app", token: token)?["id"], graph.appIds.contains(appId) else {
            throw Self.invalid
        }
        guard case .string(let userId)? = try await graph.call("me", fields: "id", token: token)?["id"], userId == id else {
            throw Self.invalid
        }
        return id
    }
}

extension FacebookAuthProvider.Graph {
    /// `GET <url>/<path>`: the JSON object a 200 answers, nil for any other answer (Graph API errors are 400s).
    func call(_ path: String, fields: String? = nil, token: String) async throws -> JSONValue? {
        var query = fields.map { "fields=\($0)&" } ?? ""
        query += "access_token=" + ProviderCall.formEncoded(token)
        if let appSecret { query += "&appsecret_proof=" + Self.proof(token, secret: appSecret) }
        var request = HTTPClientRequest(url: "\(url)/\(path)?\(query)")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "parsley")
        let answer: ProviderCall.Answer
        do {
            answer = try await ProviderCall.send(request)
        } catch {
            throw ParseError(.objectNotFound, "Facebook auth could not be verified: the Graph API did not answer.")
        }
        guard answer.status == 200, case .object? = answer.json else { return nil }
        return answer.json
    }

    /// `appsecret_proof`: HMAC-SHA256 of the access token keyed with the app secret, in lower-case hex.
    static func proof(_ token: String, secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(token.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return code.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
