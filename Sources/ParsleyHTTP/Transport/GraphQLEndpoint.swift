import Hummingbird
import HTTPTypes
import NIOCore
import ParsleyCore
import ParsleyDomain
import ParsleyGraphQL

/// `POST <graphQLPath>` (`mountGraphQL`): on the server's root, not under the mount. The same headers as REST say who
/// is asking (`handleParseHeaders` and `handleParseSession` in Parse Server): a missing or wrong application id is 403
/// `{"error":"unauthorized"}` and a bad session token 400 `{"code":209,...}`, both before any GraphQL runs; then
/// `GraphQLService` answers under that `Auth` (docs/graphql-contract.md §1).
extension ParseTransport {
    /// The GraphQL path as requests name it: a leading `/`, no trailing one.
    static func graphQLPath(_ options: ParseServerOptions) -> String {
        var path = options.graphQLPath
        if !path.hasPrefix("/") { path = "/" + path }
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    func answerGraphQL(_ request: Request, context: Context, service: GraphQLService) async -> Response {
        do {
            guard request.method == .post || request.method == .get else {
                return Self.json(405, ["errors": [["message": "GraphQL requests are POST requests with a JSON body, or GET queries."]]])
            }
            var headers = request.headers
            // An empty token is no token: the request goes on anonymously (Parse Server's GraphQL spec).
            if headers[Self.sessionToken]?.isEmpty == true { headers[Self.sessionToken] = nil }
            let auth = try await authenticate(headers, [:], ignoresSession: false, clientAddress: context.clientAddress)
            let viaGET = request.method == .get
            let body = try await viaGET ? Self.graphQLQueryParameters(request) : graphQLBody(request)
            let info = RequestInfo(mountURL: mountURL(request), requestId: request.headers[Self.requestId], ip: context.clientAddress)
            let answer = await RequestInfo.$current.withValue(info) { await service.execute(body, auth: auth, viaGET: viaGET) }
            return Response(
                status: .init(code: answer.status), headers: Self.baseHeaders, body: .init(byteBuffer: ByteBuffer(string: answer.body)))
        } catch {
            return AnswerErrors.answer(AnswerErrors.normalized(error), request: request, logger: context.logger)
        }
    }

    /// A POST's JSON body (nil when empty).
    func graphQLBody(_ request: Request) async throws -> JSONValue? {
        let bytes: ByteBuffer
        do {
            bytes = try await request.body.collect(upTo: options.maxRequestBytes)
        } catch {
            throw BodyTooLarge(limit: options.maxRequestBytes)
        }
        do {
            return bytes.readableBytes == 0 ? nil : try bytes.withUnsafeReadableBytes { raw in try JSONParser.parse(raw) }
        } catch {
            throw ParseError.invalidJSON("Invalid JSON")
        }
    }

    /// A GET's `?query=…&variables=<JSON>&operationName=…` as the object a POST would send.
    static func graphQLQueryParameters(_ request: Request) throws -> JSONValue {
        var object: [String: JSONValue] = [:]
        let parameters = request.uri.queryParameters
        if let query = parameters["query"] { object["query"] = .string(String(query)) }
        if let name = parameters["operationName"] { object["operationName"] = .string(String(name)) }
        if let variables = parameters["variables"], !variables.isEmpty {
            do {
                object["variables"] = try JSONParser.parse(String(variables))
            } catch {
                throw ParseError.invalidJSON("Invalid JSON")
            }
        }
        return .object(object)
    }
}
