import Hummingbird
import HTTPTypes
import Logging
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
            // `rateLimit` rules whose `requestPath` is the GraphQL path count these requests, as Parse Server's do.
            let caller = RateLimitCaller(isMaster: auth.isMaster, ip: context.clientAddress, sessionToken: auth.sessionToken)
            try await api.checkRateLimits(
                method: request.method.rawValue, path: graphQLPath.split(separator: "/").map(String.init), caller: caller)
            let info = RequestInfo(mountURL: mountURL(request), requestId: request.headers[Self.requestId], ip: context.clientAddress)
            let answer: GraphQLService.Answer
            if request.method == .post, let boundary = MultipartForm.boundary(request.headers[.contentType]) {
                // The GraphQL multipart request spec (createFile): the file may be as large as a `/files` upload.
                let limit = options.maxRequestBytes + (1 << 20)
                let bytes: ByteBuffer
                do {
                    bytes = try await request.body.collect(upTo: limit)
                } catch {
                    throw BodyTooLarge(limit: limit)
                }
                let parsed: (body: JSONValue, uploads: [String: GraphQLUpload])
                do {
                    guard let form = MultipartForm(Array(bytes.readableBytesView), boundary: boundary) else {
                        throw GraphQLMultipartError("Invalid multipart/form-data body.")
                    }
                    parsed = try form.graphQLRequest()
                } catch {
                    let message = (error as? GraphQLMultipartError)?.message ?? "Invalid multipart/form-data body."
                    return Self.json(400, ["errors": [["message": .string(message), "extensions": ["code": "BAD_USER_INPUT"]]]])
                }
                let storeFile: GraphQLService.StoreFile = { upload, auth in try await self.storeGraphQLUpload(upload, request, auth: auth) }
                answer = await RequestInfo.$current.withValue(info) {
                    await service.execute(parsed.body, auth: auth, uploads: parsed.uploads, storeFile: storeFile)
                }
            } else {
                let viaGET = request.method == .get
                let body = try await viaGET ? Self.graphQLQueryParameters(request) : graphQLBody(request)
                answer = await RequestInfo.$current.withValue(info) { await service.execute(body, auth: auth, viaGET: viaGET) }
            }
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

    /// `createFile`'s upload, stored as `POST /files/:name` stores a body (`storeWhole`): the same `fileUpload` rules,
    /// size limit, file triggers and store. A file over the limit is Parse Server's GraphQL message.
    func storeGraphQLUpload(_ upload: GraphQLUpload, _ request: Request, auth: Auth) async throws -> (name: String, url: String) {
        let service = api.services.files
        do {
            try Self.refuseReadOnly(auth, "create")
            let file = try service.prepareUpload(filename: upload.filename, contentType: upload.contentType, by: try await uploader(auth))
            let stored = try await storeWhole(service, request, file, bytes: ByteBuffer(bytes: upload.bytes), auth: auth)
            return (stored.name, service.url(mountURL: mountURL(request), name: stored.name))
        } catch FileStoreError.tooLarge(let limit) {
            throw ParseError(.fileSaveError, "File truncated as it exceeds the \(limit) byte size limit.")
        } catch FileStoreError.incomplete {
            throw ParseError(.fileSaveError, "The upload was interrupted.")
        } catch FileStoreError.io(let reason) {
            Logger(label: "parsley.files").error("could not store \(upload.filename): \(reason)")
            throw ParseError(.fileSaveError, "Could not store file.")
        }
    }
}
