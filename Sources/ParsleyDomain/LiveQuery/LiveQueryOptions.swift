/// Parse Server's `liveQuery` option (`{"classNames": [...]}`) and its LiveQuery server's settings.
public struct LiveQueryOptions: Sendable {
    /// Classes whose writes reach subscribers: exact names or regular expressions matched against the whole name
    /// (Parse Server anchors them). Empty: LiveQuery is off and WebSocket upgrades are refused.
    public var classNames: [String] = []
    /// How often the server pings each connection; one that has not answered the previous ping is closed
    /// (`websocketTimeout`, Parse Server's default 10 s).
    public var pingInterval: Duration = .seconds(10)
    /// Frames waiting for one connection; a client that falls further behind is disconnected (never slows others).
    public var queueLimit = 1_000
    /// The largest message a client may send.
    public var maxMessageBytes = 1 << 20

    public init(classNames: [String] = []) {
        self.classNames = classNames
    }

    /// Whether any class is live.
    public var isEnabled: Bool { !classNames.isEmpty }

    /// Whether writes of `className` are published to subscribers (the hub caches the answer per class).
    public func isLive(_ className: String) -> Bool {
        classNames.contains { name in
            name == className || ((try? Regex("^(?:\(name))$").wholeMatch(in: className)) ?? nil) != nil
        }
    }
}
