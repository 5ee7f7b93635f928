public import ParsleyCore

/// One notification for one device, as the push queue hands it to a provider: the installation's device and the
/// Parse `data` already resolved for it (its own badge number, the alert in its locale).
public struct PushMessage: Sendable, Equatable {
    /// The installation's `deviceToken`.
    public var deviceToken: String
    /// The installation's `deviceType`: `ios`, `osx`, `tvos`, `watchos` (APNs), `android` (FCM), ...
    public var deviceType: String
    /// The installation's `appIdentifier` (a bundle id: the APNs topic when the configuration names several).
    public var appIdentifier: String?
    /// The installation's `pushType` (`gcm`, `fcm`, ...), when it has one.
    public var pushType: String?
    /// Parse's push `data` for this device: `alert` (string or dictionary), `badge` (a number here), `sound`,
    /// `content-available`, `mutable-content`, `category`, `title`, `uri`, `threadId`/`thread-id`, `priority`,
    /// `pushType`, `collapseId`/`collapse_id`, and any custom keys.
    public var data: [String: JSONValue]
    /// The `_PushStatus` objectId (FCM's `push_id`).
    public var pushId: String
    /// When the push was sent (`pushTime`).
    public var pushTime: ParseDate
    /// The push expires at this time (APNs `apns-expiration`, FCM `ttl`); nil: no expiry.
    public var expiration: ParseDate?

    public init(
        deviceToken: String, deviceType: String, appIdentifier: String? = nil, pushType: String? = nil, data: [String: JSONValue], pushId: String,
        pushTime: ParseDate, expiration: ParseDate? = nil
    ) {
        self.deviceToken = deviceToken
        self.deviceType = deviceType
        self.appIdentifier = appIdentifier
        self.pushType = pushType
        self.data = data
        self.pushId = pushId
        self.pushTime = pushTime
        self.expiration = expiration
    }
}

/// What a provider made of one message.
public enum PushOutcome: Sendable, Equatable {
    /// Accepted by the provider.
    case sent
    /// The provider says the token is dead (APNs `Unregistered`/`BadDeviceToken`, FCM `UNREGISTERED`): the token is
    /// removed from its installation.
    case invalidToken(reason: String)
    /// Not delivered. `transient` failures (429, 5xx, connection errors) may be retried, after `retryAfter` if given.
    case failed(reason: String, transient: Bool, retryAfter: Duration? = nil)
}

/// A push service (APNs, FCM): sends one message at a time; many calls run at once. Built from configuration
/// (`PushConfiguration`), it says in one line what it sends through, and releases what it created on `shutdown()`.
public protocol PushProvider: Sendable {
    /// The `_PushStatus` `sentPerType`/`failedPerType` family it serves, and the log name: `ios`, `android`.
    var name: String { get }
    /// One line for the start-up log: `APNs token auth (key ABC123DEFG, team TEAM123456), topic com.example.app, sandbox`.
    var summary: String { get }
    /// Whether it sends to installations of this `deviceType`.
    func serves(deviceType: String) -> Bool
    /// Whether it sends this message: like `serves(deviceType:)`, and it may also look at the installation's `pushType`
    /// (FCM also sends to Apple devices registered through Firebase).
    func serves(_ message: PushMessage) -> Bool
    /// Sends one message; never throws (every failure is an outcome).
    func send(_ message: PushMessage) async -> PushOutcome
    /// Closes what the provider created (its HTTP client); an injected client is left to its owner.
    func shutdown() async throws
    /// Requests that could not get through to the service since the start, by `PushTransportFailureKind` raw value
    /// (`connection_refused`, `tls`, `http_5xx`, ...): `parsley_push_transport_failures_total`.
    var transportFailures: [String: Int] { get }
}

extension PushProvider {
    public var transportFailures: [String: Int] { [:] }
}
