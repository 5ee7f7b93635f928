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
            guard request.method == .post else {
                return Self.json(405, ["errors": [["message": "GraphQL requests are POST requests with a JSON body."]]])
            }
            var headers = request.headers
            // An empty token is no token: the request goes on anonymously (Parse Server's GraphQL spec).
            if headers[Self.sessionToken]?.isEmpty == true { headers[Self.sessionToken] = nil }
            let auth = try await authenticate(headers, [:], ignoresSession: false, clientAddress: context.clientAddress)
            let bytes: ByteBuffer
            do {
                bytes = try await request.body.collect(upTo: options.maxRequestBytes)
            } catch {
                throw BodyTooLarge(limit: options.maxRequestBytes)
            }
            let body: JSONValue?
            do {
                body = bytes.readableBytes == 0 ? nil : try bytes.withUnsafeReadableBytes { raw in try JSONParser.parse(raw) }
            } catch {
                throw ParseError.invalidJSON("Invalid JSON")
            }
            let info = RequestInfo(mountURL: mountURL(request), requestId: request.headers[Self.requestId], ip: context.clientAddress)
            let answer = await RequestInfo.$current.withValue(info) { await service.execute(body, auth: auth) }
            return Response(
                status: .init(code: answer.status), headers: Self.baseHeaders, body: .init(byteBuffer: ByteBuffer(string: answer.body)))
        } catch {
            return AnswerErrors.answer(AnswerErrors.normalized(error), request: request, logger: context.logger)
        }
    }
}
