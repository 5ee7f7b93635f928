import AsyncHTTPClient
import NIOCore
import NIOHTTP1
public import ParsleyCore
public import ParsleyDomain

/// `authData.github`: `{"id": "...", "access_token": "..."}`, valid when GitHub's `/user` endpoint, called with the
/// token, answers the same id. The API base URL is configurable so tests (and GitHub Enterprise) can point it
/// elsewhere.
public struct GitHubAuthProvider: AuthProvider {
    public let name = "github"
    public let apiURL: String

    public init(apiURL: String = "https://api.github.com") {
        self.apiURL = apiURL.hasSuffix("/") ? String(apiURL.dropLast()) : apiURL
    }

    public func validate(_ data: JSONValue) async throws -> String {
        guard let id = data["id"].flatMap(Self.idString), case .string(let token)? = data["access_token"], !token.isEmpty else {
            throw ParseError(.objectNotFound, "GitHub auth is invalid for this user.")
        }
        var request = HTTPClientRequest(url: apiURL + "/user")
        request.headers.add(name: "Authorization", value: "bearer \(token)")
        request.headers.add(name: "User-Agent", value: "parsley")
        request.headers.add(name: "Accept", value: "application/json")
        let body: ByteBuffer
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            guard response.status == .ok else { throw ParseError(.objectNotFound, "GitHub auth is invalid for this user.") }
            body = try await response.body.collect(upTo: 1 << 20)
        } catch let error as ParseError {
            throw error
        } catch {
            throw ParseError(.init(rawValue: 251), "GitHub auth could not be verified: the provider did not answer.")
        }
        guard let json = try? JSONParser.parse(body.readableBytesView), let remote = json["id"].flatMap(Self.idString), remote == id else {
            throw ParseError(.objectNotFound, "GitHub auth is invalid for this user.")
        }
        return id
    }

    /// GitHub ids are numbers; clients send them as numbers or strings.
    static func idString(_ value: JSONValue) -> String? {
        switch value {
        case .string(let s): return s.isEmpty ? nil : s
        case .int(let i): return String(i)
        default: return nil
        }
    }
}
