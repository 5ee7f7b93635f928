import AsyncHTTPClient
import NIOCore
import NIOHTTP1
public import ParsleyCore
public import ParsleyDomain

/// A provider configured with `"oauth2": true` (Parse Server's oauth2 adapter), under any name:
/// `authData.<name> = {id, access_token}`, the access token checked by the authorization server's RFC 7662 token
/// introspection endpoint. Parsley `POST`s `token=<access_token>` (`application/x-www-form-urlencoded`, with
/// `Authorization: <authorizationHeader>` when configured) and takes the token when the answer is a JSON object with
/// `"active": true`, its `useridField` (default `sub`) equal to `id`, and, with `appidField`, that field (a string, or a
/// list of which one is enough) one of `appIds`.
///
/// Answers, all 101 as Parse Server's: an inactive token or another user's `OAuth2 access token is invalid for this
/// user.`, another client's `OAuth2: Invalid app ID.`, an endpoint that refuses the call, answers something other than
/// JSON, or does not answer within 5 seconds `OAuth2 token introspection request failed.`
public struct OAuth2AuthProvider: AuthProvider {
    public let name: String
    let endpoint: String
    let useridField: String
    let appidField: String?
    let appIds: Set<String>
    let authorizationHeader: String?

    public init(
        name: String, tokenIntrospectionEndpointUrl: String, useridField: String = "sub", appidField: String? = nil, appIds: [String] = [],
        authorizationHeader: String? = nil
    ) {
        self.name = name
        self.endpoint = tokenIntrospectionEndpointUrl
        self.useridField = useridField
        self.appidField = appidField
        self.appIds = Set(appIds)
        self.authorizationHeader = authorizationHeader
    }

    static let invalid = ParseError(.objectNotFound, "OAuth2 access token is invalid for this user.")
    static let invalidApp = ParseError(.objectNotFound, "OAuth2: Invalid app ID.")
    static let failed = ParseError(.objectNotFound, "OAuth2 token introspection request failed.")

    public func validate(_ data: JSONValue) async throws -> String {
        guard case .string(let id)? = data["id"], !id.isEmpty, case .string(let token)? = data["access_token"], !token.isEmpty else {
            throw Self.invalid
        }
        let answer = try await introspect(token)
        // RFC 7662: an inactive token's answer need carry nothing else, so `active` comes first.
        guard answer["active"] == .bool(true) else { throw Self.invalid }
        if let appidField {
            let value = answer[appidField]
            let named: [String] =
                switch value {
                case .string(let one)?: [one]
                case .array(let list)?: list.compactMap(\.stringValue)
                default: []
                }
            guard named.contains(where: appIds.contains) else { throw Self.invalidApp }
        }
        guard answer[useridField] == .string(id) else { throw Self.invalid }
        return id
    }

    /// The endpoint's answer for `token`: a JSON object, or 101 `OAuth2 token introspection request failed.`
    func introspect(_ token: String) async throws -> JSONValue {
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "parsley")
        if let authorizationHeader { request.headers.add(name: "Authorization", value: authorizationHeader) }
        request.body = .bytes(ByteBuffer(string: "token=" + ProviderCall.formEncoded(token)))
        let answer: ProviderCall.Answer
        do {
            answer = try await ProviderCall.send(request)
        } catch {
            throw Self.failed
        }
        guard (200..<300).contains(answer.status), let json = answer.json, case .object = json else { throw Self.failed }
        return json
    }
}
