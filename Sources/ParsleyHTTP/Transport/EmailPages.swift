import Hummingbird
import HTTPTypes
import NIOCore
import ParsleyCore
import ParsleyDomain

extension ParseTransport {
    /// A page under `/apps/...` (opened from an emailed link): no application id or keys (the app id is in the path),
    /// parameters and form bodies as plain strings, and the route's HTML (or JSON) answer. Pages carry tokens, so they
    /// are neither cached nor passed on as referrer.
    func page(_ request: Request, route: RouteTable.Route, parameters: PathParameters) async throws -> Response {
        var params: [String: JSONValue] = [:]
        if let query = request.uri.query {
            for (k, v) in FormEncoding.decode(query) { params[k] = .string(v) }
        }
        var body: JSONValue?
        if route.method == .post {
            let limit = min(options.maxRequestBytes, 1 << 20)
            guard let bytes = try? await request.body.collect(upTo: limit) else {
                return Self.json(413, ["code": 130, "error": .string("Request body is larger than \(limit) bytes")])
            }
            let text = String(buffer: bytes)
            if case .object(let o)? = try? JSONParser.parse(text) {
                body = .object(o)
            } else {
                var fields: [String: JSONValue] = [:]
                for (k, v) in FormEncoding.decode(text) where fields[k] == nil { fields[k] = .string(v) }
                body = .object(fields)
            }
        }
        let segments = Self.segments(request.uri.path, below: mountPrefix)?.map { $0.removingPercentEncoding() } ?? []
        var call = ParseRequest(
            method: route.method, path: segments, params: params, body: body, auth: .nobody, mountURL: mountURL(request))
        for name in ["x-requested-with", "x-parse-page-param-locale"] {
            if let field = HTTPField.Name(name), let value = request.headers[field] { call.headers[name] = value }
        }
        let response = try await route.handler(call, parameters)
        var headers = Self.baseHeaders
        headers[.cacheControl] = "no-store"
        headers[.init("Referrer-Policy")!] = "no-referrer"
        headers[.init("X-Frame-Options")!] = "DENY"
        if let location = response.location { headers[.location] = location }
        for (name, value) in response.headers {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        var buffer = ByteBuffer(bytes: JSONWriter.bytes(response.body))
        if let type = response.contentType, case .string(let text) = response.body {
            headers[.contentType] = type
            buffer = ByteBuffer(string: text)
        }
        if let type = response.contentType, let raw = response.rawBody {
            headers[.contentType] = type
            buffer = ByteBuffer(bytes: raw)
        }
        return Response(status: .init(code: response.status), headers: headers, body: .init(byteBuffer: buffer))
    }
}
