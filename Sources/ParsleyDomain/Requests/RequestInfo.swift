public import ParsleyCore

/// Where a request came from and what it carried besides who is asking (that is `Auth`): the mount URL it came in on,
/// its `X-Parse-Request-Id`, the client's address, its headers and cloud code's context.
///
/// The pipeline sets it once per request as a task-local (`RequestInfo.$current`, in the `Authenticate` middleware;
/// an in-process call keeps its caller's and names its own mount URL), and the few domain places that need it read
/// `RequestInfo.current`: change events (`requestId`), cloud code's requests and webhook bodies (`ip`, `headers`,
/// `context`) and links in mails (`mountURL`). A task-local rather than a parameter because it would otherwise
/// thread through every write, hook and trigger signature only to reach those places. After-triggers, which run
/// from a committed change event in another task, set it again from the event.
public struct RequestInfo: Sendable, Equatable {
    /// The absolute URL of the mount the request came in on (`http://host:1337/parse`), for links in mails.
    public var mountURL: String?
    /// The request's `X-Parse-Request-Id` (for change events and logs).
    public var requestId: String?
    /// The client's address.
    public var ip: String?
    /// The request's headers (lower-case names; kept only when cloud code runs).
    public var headers: [String: String]
    /// Cloud code's context (`X-Parse-Cloud-Context` or the body's `_context`).
    public var context: [String: JSONValue]

    public init(
        mountURL: String? = nil, requestId: String? = nil, ip: String? = nil, headers: [String: String] = [:],
        context: [String: JSONValue] = [:]
    ) {
        self.mountURL = mountURL
        self.requestId = requestId
        self.ip = ip
        self.headers = headers
        self.context = context
    }

    /// The request being answered; empty outside one (server-side work: push delivery, jobs' schedules, ...).
    @TaskLocal public static var current = RequestInfo()
}
