import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPushFakes
import Testing

@testable import ParsleyPush

/// When APNs or FCM cannot be reached (connection refused, a TLS failure) or refuses the sender (401/403, 429, 5xx),
/// each provider logs one warning per kind of failure at most once a minute (with the repeats in between) and counts
/// every failure in `parsley_push_transport_failures_total{provider, kind}`.
@Suite("Push: transport failures logged once per kind and counted", .serialized)
struct PushTransportFailureTests {
    let key = PushTestKeys.apnsKey()

    /// A client set as the providers' own (no re-dialling: a refused connection or a failed handshake fails at once, as
    /// what it is), with a connect timeout long enough that a loaded machine does not turn those into timeouts (5 s
    /// was not: a CI run under full load counted a handshake that failed as a timeout).
    static func quickClient() -> HTTPClient {
        var settings = HTTPClient.Configuration()
        settings.timeout = .init(connect: .seconds(20), read: .seconds(20))
        settings.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
    }

    static func failureLines(_ log: LogCapture) -> [String] {
        log.lines.filter { $0.0 == .warning }.map(\.1).filter { $0.contains("push transport failure") }
    }

    static func metricsText(_ provider: any PushProvider) -> String {
        let metrics = ParsleyMetrics(pool: {
            var usage = ParsleyMetrics.PoolUsage(readersBusy: 0, readers: 1, writesQueued: 0)
            usage.pushTransportFailures = [provider.name: provider.transportFailures]
            return usage
        })
        return metrics.render()
    }

    /// Sends `count` messages to an APNs at `host` (trusting nothing but the system roots) and checks the one line
    /// and the count of `kind`.
    func apnsFailures(host: String, kind: String, count: Int = 4) async throws {
        let log = LogCapture()
        let client = Self.quickClient()
        let configuration = APNsConfiguration(privateKeyPEM: key.pem, keyId: key.keyId, teamId: key.teamId, topic: "com.example.app", host: host)
        let provider = try APNsProvider(configurations: [configuration], httpClient: client, logger: Logger(label: "parsley.push") { _ in log })
        try await PushTest.using(provider) { apns in
            for n in 1...count {
                let outcome = await apns.send(PushTest.message(PushTests.token(n), ["alert": "hi"]))
                guard case .failed(_, true, _) = outcome else {
                    Issue.record("expected a transient failure, got \(outcome)")
                    return
                }
            }
            let lines = Self.failureLines(log)
            #expect(lines.count == 1, "\(lines)")
            let line = lines.first ?? ""
            for part in ["provider=ios", "service=APNs", "kind=\(kind)", "host=\(PushTransportFailures.host(of: host))", "repeats=0"] {
                #expect(line.contains(part), "\(part) missing: \(line)")
            }
            #expect(!line.contains(PushTests.token(1)) && !line.contains(key.pem), "\(line)")
            #expect(apns.transportFailures == [kind: count])
            let text = Self.metricsText(apns)
            #expect(text.contains(#"parsley_push_transport_failures_total{provider="ios",kind="\#(kind)"} \#(count)"#), "\(text)")
        }
        try await client.shutdown()
    }

    @Test("APNs refusing connections: one line for four failures, four counted")
    func connectionRefused() async throws {
        let port = try await FakeAPNs.closedPort()
        try await apnsFailures(host: "https://127.0.0.1:\(port)", kind: "connection_refused")
    }

    @Test("APNs with a certificate nobody trusts: one TLS line for four failures, four counted")
    func untrustedCertificate() async throws {
        try await FakeAPNs.with(key: key) { fake in
            try await apnsFailures(host: fake.url, kind: "tls")
            #expect(fake.requests.isEmpty)
        }
    }

    @Test("FCM's token endpoint refusing connections: one line naming the android provider")
    func fcmTokenEndpointRefused() async throws {
        let port = try await FakeAPNs.closedPort()
        let log = LogCapture()
        let client = Self.quickClient()
        let account = try FCMServiceAccount(json: PushTestKeys.serviceAccount.json(tokenURI: "http://127.0.0.1:\(port)/token"))
        let configuration = FCMConfiguration(serviceAccount: account, endpoint: "http://127.0.0.1:\(port)")
        let provider = try FCMProvider(configuration: configuration, httpClient: client, logger: Logger(label: "parsley.push") { _ in log })
        try await PushTest.using(provider) { fcm in
            for n in 1...3 { _ = await fcm.send(PushTest.message("fcm-token-\(n)", ["alert": "hi"], deviceType: "android")) }
            let lines = Self.failureLines(log)
            #expect(lines.count == 1 && lines[0].contains("provider=android") && lines[0].contains("kind=connection_refused"), "\(lines)")
            #expect(!lines.joined().contains("fcm-token-1"))
            #expect(fcm.transportFailures == ["connection_refused": 3])
        }
        try await client.shutdown()
    }

    @Test("after the interval the next failure is logged again, with the repeats it stood for; kinds are apart")
    func rateLimitedPerKind() async throws {
        let log = LogCapture()
        let failures = PushTransportFailures(
            provider: "ios", service: "APNs", logger: Logger(label: "parsley.push") { _ in log }, interval: .milliseconds(300))
        for _ in 0..<3 { failures.record(.connectionRefused, url: "https://user:pw@api.push.apple.com/3/device/abc") }
        failures.record(.tls, url: "https://api.push.apple.com")
        #expect(Self.failureLines(log).count == 2)
        try await Task.sleep(for: .milliseconds(400))
        failures.record(.connectionRefused, url: "https://api.push.apple.com")
        let lines = Self.failureLines(log)
        #expect(lines.count == 3)
        #expect(lines.last?.contains("kind=connection_refused") == true && lines.last?.contains("repeats=2") == true, "\(lines)")
        #expect(!lines.joined().contains("pw") && !lines.joined().contains("abc"), "\(lines)")
        #expect(failures.counts == ["connection_refused": 4, "tls": 1])
        #expect(PushTransportFailures.host(of: "https://u:p/w@d@proxy.example:8443/3/device/abc") == "proxy.example:8443")
        #expect(PushTransportFailures.host(of: "http://127.0.0.1:9/token") == "127.0.0.1:9")
    }

    @Test("the parsley process: APNs answering 503 and 403 to three pushes logs one line per kind; /metrics counts every failure")
    func processLogsOnceAndCounts() async throws {
        try await FakeAPNs.with(key: key) { fake in
            let down = PushTests.token(0xd0d0)
            let refused = PushTests.token(0x4030)
            fake.answer(down, with: .status(503, reason: "ServiceUnavailable"))
            fake.answer(refused, with: .status(403, reason: "InvalidProviderToken"))
            let push: JSONValue = [
                "ios": [
                    "token": ["key": .string(key.pem), "keyId": .string(key.keyId), "teamId": .string(key.teamId)], "topic": "com.example.app",
                    "host": .string(fake.url), "caFile": .string(fake.certificateFile),
                ]
            ]
            let metricsReservation = try ReservedPort()
            defer { metricsReservation.release() }
            let metricsPort = metricsReservation.port
            let dir = try ProcessTests.tempDir()
            defer { try? FileManager.default.removeItem(at: dir) }
            let mount = ParseServerConfigProcessTests.mount
            let server = try ParseServerConfigProcessTests.Child(
                [],
                environment: [
                    "PORT": "0", "PARSE_SERVER_HOST": "127.0.0.1", "PARSE_SERVER_APPLICATION_ID": ParseServerConfigProcessTests.appId,
                    "PARSE_SERVER_MASTER_KEY": ParseServerConfigProcessTests.masterKey, "PARSE_SERVER_MOUNT_PATH": mount,
                    "PARSE_SERVER_PUSH": JSONWriter.string(push), "PARSLEY_METRICS_PORT": String(metricsPort),
                ], dataDir: dir)
            defer { server.process.killNow() }
            try await server.waitUntilHealthy(mount: mount)
            try await server.client { p in
                _ = try await PushTests.install(p, "inst-down", token: down)
                _ = try await PushTests.install(p, "inst-refused", token: refused)
                var ids: [String] = []
                for i in 0..<3 { ids.append(try await PushTests.push(p, ["where": [:], "data": ["alert": .string("hello \(i)")]])) }
                for id in ids {
                    let row = try await PushTests.status(p, id)
                    #expect(row["numFailed"] == 2, "\(row.json)")
                }
            }
            let scrape = try await TestClient.withClient(host: "127.0.0.1", port: metricsPort) { client in
                try await client.execute(TestClient.Request("/metrics", method: .get))
            }
            let text = String(buffer: scrape.body ?? ByteBuffer())
            // 503 is retried (three attempts a message), 403 is not.
            #expect(text.contains(#"parsley_push_transport_failures_total{provider="ios",kind="http_5xx"} 9"#), "\(text)")
            #expect(text.contains(#"parsley_push_transport_failures_total{provider="ios",kind="auth_rejected"} 3"#), "\(text)")
            let output = server.output
            let lines = output.split(separator: "\n").filter { $0.contains("push transport failure") }
            #expect(lines.filter { $0.contains("kind=http_5xx") }.count == 1, "\(lines)")
            #expect(lines.filter { $0.contains("kind=auth_rejected") }.count == 1, "\(lines)")
            #expect(!output.contains(down) && !output.contains(refused), "device tokens in the log: \(output)")
        }
    }
}
