import ParsleyCore
import ParsleyDomain

/// A resource's routes, declared as a table and mounted on the server's one Hummingbird `Router`
/// (`ParseRoutes.build`), where every route runs behind the same middleware chain.
protocol ParseRouter: Sendable {
    var routes: RouteTable { get }
}

/// A route's path parameters (`:className`, `:objectId`), percent-decoded.
struct PathParameters: Sendable {
    let values: [String: String]

    /// The parameter the route's pattern names; a Parse error, never a trap, when it is missing.
    func require(_ name: String) throws(ParseError) -> String {
        guard let value = values[name] else { throw ParseError.invalidJSON("Missing path parameter \(name)") }
        return value
    }
}

/// `(method, pattern) -> handler` rows, the way each resource declares its routes. Patterns are below the mount
/// (`classes/:className/:objectId`); `master` rows are mounted in the group whose middleware requires the master key
/// (`RequireMasterKey`), so no handler repeats that check.
struct RouteTable: Sendable {
    typealias Handler = @Sendable (ParseRequest, PathParameters) async throws -> ParseResponse

    struct Route: Sendable {
        let method: ParseRequest.Method
        let pattern: String
        let masterOnly: Bool
        let handler: Handler
    }

    private(set) var rows: [Route] = []

    mutating func on(_ method: ParseRequest.Method, _ pattern: String, _ handler: @escaping Handler) {
        rows.append(Route(method: method, pattern: pattern, masterOnly: false, handler: handler))
    }

    /// A route only the master key (or the read-only one) may call: 403 `unauthorized: master key is required` otherwise.
    mutating func master(_ method: ParseRequest.Method, _ pattern: String, _ handler: @escaping Handler) {
        rows.append(Route(method: method, pattern: pattern, masterOnly: true, handler: handler))
    }
}
