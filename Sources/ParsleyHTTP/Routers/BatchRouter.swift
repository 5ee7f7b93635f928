import Logging
import ParsleyCore
import ParsleyDomain

/// `POST /batch`: runs each sub-request through the server's router and its middleware, in order, answering
/// `[{"success":...}|{"error":...}]`. With `"transaction": true` every sub-request runs inside one database
/// transaction: all of them are stored, or (on the first error) none, and the call fails with that error.
struct BatchRouter: Sendable {
    let options: ParseServerOptions
    let transactions: Transactions
    let schemas: SchemaService
    /// Counts one sub-request against the rate limits as the same request sent alone.
    let limit: @Sendable (ParseRequest) async throws -> Void

    /// Answers one sub-request (through the router, with the batch's credentials).
    typealias Dispatch = @Sendable (ParseRequest) async throws -> ParseResponse

    struct SubRequestFailed: Error {
        let error: ParseError
    }

    func run(_ request: ParseRequest, dispatch: @escaping Dispatch) async throws -> ParseResponse {
        guard case .array(let items)? = request.bodyObject["requests"] else {
            throw ParseError.invalidJSON("requests must be an array")
        }
        try options.requestComplexity.checkBatch(items.count, auth: request.auth)
        guard items.count <= options.maxBatchSize else {
            throw ParseError.invalidJSON("Batch request limit exceeded: at most \(options.maxBatchSize) requests")
        }
        let subRequests = items.map { subRequest($0, parent: request) }
        // Every sub-request counts against the rate limits before any runs (as Parse Server does): a batch over a limit
        // runs nothing and answers as the request over it would alone (429, code 100).
        for case .success(let sub) in subRequests { try await limit(sub) }
        if request.bodyObject["transaction"]?.boolValue == true {
            do {
                // The sub-requests' writes join this transaction (Transaction.current); their change events and
                // other after-commit actions run once it has committed, in order, and not at all if it rolls back.
                let results: [JSONValue] = try await transactions.run(hookBudget: options.webhookTimeout) {
                    var out: [JSONValue] = []
                    for sub in subRequests {
                        switch await answer(sub, dispatch) {
                        case .object(let o) where o["error"] != nil:
                            let code = o["error"]?["code"]?.integerValue ?? 1
                            throw SubRequestFailed(error: ParseError(.init(rawValue: code), o["error"]?["error"]?.stringValue ?? ""))
                        case let v: out.append(v)
                        }
                    }
                    return out
                }
                return ParseResponse(body: .array(results))
            } catch let failed as SubRequestFailed {
                try await schemas.reload()
                throw failed.error
            }
        }
        // Creates alone (the SDKs' saveAll of new objects) are independent: run them together. Anything else runs
        // in order, so a read or update after a write in the same batch sees it.
        let onlyCreates = subRequests.allSatisfy { sub in
            guard case .success(let r) = sub else { return false }
            return r.method == .post && r.path.count == 2 && r.path[0] == "classes"
        }
        if onlyCreates { return ParseResponse(body: .array(await answerConcurrently(subRequests, dispatch))) }
        var results: [JSONValue] = []
        for sub in subRequests { results.append(await answer(sub, dispatch)) }
        return ParseResponse(body: .array(results))
    }

    /// Independent sub-requests (Parse Server runs a batch's sub-requests all at once) up to `width` at a time, so
    /// SQLite commits them in groups instead of with one fsync each; answers in order.
    func answerConcurrently(_ subRequests: [Result<ParseRequest, ParseError>], _ dispatch: @escaping Dispatch, width: Int = 16) async -> [JSONValue] {
        await withTaskGroup(of: (Int, JSONValue).self) { group in
            var results = [JSONValue](repeating: .null, count: subRequests.count)
            var next = 0
            while next < min(width, subRequests.count) {
                let (i, sub) = (next, subRequests[next])
                group.addTask { (i, await answer(sub, dispatch)) }
                next += 1
            }
            while let (i, result) = await group.next() {
                results[i] = result
                if next < subRequests.count {
                    let (j, sub) = (next, subRequests[next])
                    group.addTask { (j, await answer(sub, dispatch)) }
                    next += 1
                }
            }
            return results
        }
    }

    func subRequest(_ item: JSONValue, parent: ParseRequest) -> Result<ParseRequest, ParseError> {
        guard let methodName = item["method"]?.stringValue, let method = ParseRequest.Method(rawValue: methodName.uppercased()),
            let path = item["path"]?.stringValue
        else { return .failure(ParseError.invalidJSON("batch request must have a method and a path")) }
        let mount = options.mountPath.hasSuffix("/") ? options.mountPath : options.mountPath + "/"
        guard path.hasPrefix(mount) else { return .failure(ParseError.invalidJSON("cannot route batch path \(path)")) }
        let segments = path.dropFirst(mount.count).split(separator: "?")[0].split(separator: "/").map { String($0).removingPercentEncoding() }
        let body = item["body"]
        var params: [String: JSONValue] = [:]
        if method == .get, case .object(let o)? = body { params = o }
        return .success(
            ParseRequest(
                method: method, path: segments, params: params, body: method == .get ? nil : body, auth: parent.auth, mountURL: parent.mountURL))
    }

    func answer(_ sub: Result<ParseRequest, ParseError>, _ dispatch: Dispatch) async -> JSONValue {
        switch sub {
        case .failure(let e): return ["error": e.json]
        case .success(let request):
            guard request.path.first != "batch" else { return ["error": ParseError.invalidJSON("cannot nest batch requests").json] }
            do {
                let response = try await dispatch(request)
                return ["success": response.body]
            } catch let e as ParseError {
                let answered = e.answered(sanitize: options.enableSanitizedErrorResponse)
                if answered.message != e.message { Logger(label: "parsley.batch").info("Sanitized error: \(e.message)") }
                return ["error": answered.json]
            } catch let e as AccessDenied {
                let message = e.answered(sanitize: options.enableSanitizedErrorResponse)
                if message != e.message { Logger(label: "parsley.batch").info("Sanitized error: \(e.message)") }
                return ["error": ParseError(.operationForbidden, message).json]
            } catch let e as RateLimitExceeded {
                return ["error": ParseError(.connectionFailed, e.message).json]
            } catch is RouteNotFound {
                // Parse Server's words for a sub-request no route takes.
                let path = "/" + request.path.joined(separator: "/")
                return ["error": ParseError.invalidJSON("cannot route \(request.method.rawValue) \(path)").json]
            } catch {
                Logger(label: "parsley.batch").error("batch sub-request failed: \(String(reflecting: error))")
                return ["error": ParseError(.internalServerError, "Internal server error.").json]
            }
        }
    }
}
