import NIOCore
import ParsleyCore
import ParsleyDomain
import ParsleyPushFakes
import ParsleyPush
import Synchronization

/// A settable wall clock for providers (`now:`), to age cached tokens without waiting.
final class PushTestClock: Sendable {
    private let milliseconds: Mutex<Int64>

    init(_ start: ParseDate = ParseDate(milliseconds: 1_750_000_000_000)) { milliseconds = Mutex(start.milliseconds) }

    var date: ParseDate { ParseDate(milliseconds: milliseconds.withLock { $0 }) }
    var now: @Sendable () -> ParseDate { { self.date } }

    func advance(seconds: Int64) { milliseconds.withLock { $0 += seconds * 1000 } }
}

enum PushTest {
    /// The providers' connect timeout here. Their 10 s (the production value) was once too short for a TLS connection
    /// to a fake on loopback while the whole suite started at once on CI's two cores.
    static let connectTimeout: TimeAmount = .seconds(60)

    static let pushTime = ParseDate(milliseconds: 1_750_000_000_000)

    /// A message for one installation.
    static func message(
        _ token: String, _ data: [String: JSONValue], deviceType: String = "ios", appIdentifier: String? = "com.example.app",
        pushType: String? = nil, expiration: ParseDate? = nil
    ) -> PushMessage {
        PushMessage(
            deviceToken: token, deviceType: deviceType, appIdentifier: appIdentifier, pushType: pushType, data: data, pushId: "pushStatus1",
            pushTime: pushTime, expiration: expiration)
    }

    /// Runs `body` with `provider`, then shuts the provider down whatever happened (its HTTP client must be closed).
    static func using<Provider: PushProvider>(_ provider: Provider, _ body: (Provider) async throws -> Void) async throws {
        let outcome: Result<Void, any Error>
        do { outcome = .success(try await body(provider)) } catch { outcome = .failure(error) }
        try await provider.shutdown()
        try outcome.get()
    }

    /// An APNs provider for the fake, trusting its certificate through `caFile` as a configured server would.
    static func apns(
        _ fake: FakeAPNs, key: PushTestKeys.APNsKey, topic: String? = "com.example.app", clock: PushTestClock? = nil
    ) throws -> APNsProvider {
        let configuration = APNsConfiguration(
            privateKeyPEM: key.pem, keyId: key.keyId, teamId: key.teamId, topic: topic, host: fake.url, caFile: fake.certificateFile)
        return try APNsProvider(configurations: [configuration], connectTimeout: connectTimeout, now: clock?.now)
    }

    /// An FCM provider for the fake.
    static func fcm(
        _ fake: FakeFCM, account: PushTestKeys.ServiceAccount = PushTestKeys.serviceAccount, clock: PushTestClock? = nil
    ) throws -> FCMProvider {
        let json = account.json(tokenURI: fake.tokenURI)
        let serviceAccount = try FCMServiceAccount(json: json)
        return try FCMProvider(
            configuration: FCMConfiguration(serviceAccount: serviceAccount, endpoint: fake.url), connectTimeout: connectTimeout, now: clock?.now)
    }
}
