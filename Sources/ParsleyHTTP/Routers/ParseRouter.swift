/// A resource's routes: it answers the requests whose path it owns.
public protocol ParseRouter: Sendable {
    /// Returns the handler for a request, or nil when the path is not this router's.
    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)?
}

/// Matches a path against a pattern such as `classes/:className/:objectId`.
struct PathPattern: Sendable {
    let segments: [String]
    init(_ pattern: String) { segments = pattern.split(separator: "/").map(String.init) }

    func match(_ path: [String]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var params: [String: String] = [:]
        for (s, p) in zip(segments, path) {
            if s.hasPrefix(":") { params[String(s.dropFirst())] = p } else if s != p { return nil }
        }
        return params
    }
}

/// A table of `(method, pattern) -> handler`, the way each router declares its routes.
struct RouteTable: Sendable {
    typealias Handler = @Sendable (ParseRequest, [String: String]) async throws -> ParseResponse
    private var routes: [(ParseRequest.Method, PathPattern, Handler)] = []

    mutating func on(_ method: ParseRequest.Method, _ pattern: String, _ handler: @escaping Handler) {
        routes.append((method, PathPattern(pattern), handler))
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        for (method, pattern, handler) in routes where method == request.method {
            if let params = pattern.match(request.path) {
                return { try await handler($0, params) }
            }
        }
        return nil
    }
}
