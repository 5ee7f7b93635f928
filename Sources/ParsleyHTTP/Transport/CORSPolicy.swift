import HTTPTypes
import ParsleyDomain

/// Parse Server's CORS answer (`allowOrigin`, `allowHeaders`): `Access-Control-Allow-Origin` is the request's `Origin`
/// when it is one of the allowed origins, else the first allowed origin (so a browser on another origin is refused);
/// `Access-Control-Allow-Headers` lists Parse's headers and then `allowHeaders`. Preflight (`OPTIONS`) answers the same.
struct CORSPolicy: Sendable {
    let origins: [String]
    let allowHeaders: String?

    init(_ security: SecurityOptions) {
        origins = security.allowOrigin.isEmpty ? ["*"] : security.allowOrigin
        allowHeaders =
            security.allowHeaders.isEmpty
            ? nil : ParseTransport.defaultAllowedHeaders + ", " + security.allowHeaders.joined(separator: ", ")
    }

    /// Whether answers differ from the default (`*`, Parse's headers), which `ParseTransport.baseHeaders` already carry.
    var configured: Bool { origins != ["*"] || allowHeaders != nil }

    func apply(to headers: inout HTTPFields, origin: String?) {
        if let origin, origins.contains(origin) {
            headers[.accessControlAllowOrigin] = origin
        } else {
            headers[.accessControlAllowOrigin] = origins.first ?? "*"
        }
        if origins != ["*"] { headers[.vary] = "Origin" }
        if let allowHeaders { headers[.accessControlAllowHeaders] = allowHeaders }
    }
}
