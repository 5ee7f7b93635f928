import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyPushFakes
import ParsleyDomain
import Synchronization
import Testing

/// The push queue across a restart of the `parsley` process: stopped (SIGTERM) in the middle of a large push, the
/// server finishes and records the page in hand; started again, it sends the rest. Every device gets the
/// notification once.
@Suite("Push across a restart", .serialized)
struct PushRestartTests {
    static let key = "push-restart-master-key"
    static let installations = 2_400

    @Test("a push to 2,400 devices interrupted by a restart reaches every device exactly once", arguments: Backend.all)
    func restartMidPush(_ backend: Backend) async throws {
        let apnsKey = PushTestKeys.apnsKey()
        let keyFile = try PushTestKeys.temporaryFile(apnsKey.pem, suffix: ".p8")
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        try await FakeAPNs.with(key: apnsKey) { apns in
            let push: JSONValue = [
                "ios": [
                    "token": ["key": .string(keyFile), "keyId": .string(apnsKey.keyId), "teamId": .string(apnsKey.teamId)],
                    "topic": "com.example.app", "host": .string(apns.url), "caFile": .string(apns.certificateFile),
                ]
            ]
            let dir = try ProcessTests.tempDir()
            defer { try? FileManager.default.removeItem(at: dir) }
            var environment = ["PARSE_SERVER_MASTER_KEY": Self.key, "PARSE_SERVER_PUSH": JSONWriter.string(push)]
            if backend == .postgres {
                try await PostgresCluster.shared.withFreshDatabase { url in
                    environment.merge(PostgresProcessTests.environment(url)) { $1 }
                    environment["PARSE_SERVER_MASTER_KEY"] = PostgresProcessTests.key
                    try await Self.run(apns, dir: dir, environment: environment, key: PostgresProcessTests.key)
                }
            } else {
                try await Self.run(apns, dir: dir, environment: environment, key: Self.key)
            }
        }
    }

    static func token(_ n: Int) -> String { PushTests.token(n) }

    static func run(_ apns: FakeAPNs, dir: URL, environment: [String: String], key: String) async throws {
        let first = try ProcessTests.Server(dataDir: dir, environment: environment)
        try await first.waitUntilHealthy()
        let statusId = Mutex<String?>(nil)
        try await ProcessTests.client(first.port, key) { p in
            for start in stride(from: 0, to: Self.installations, by: 50) {
                let requests: [JSONValue] = (start..<min(start + 50, Self.installations)).map { i in
                    [
                        "method": "POST", "path": "/parse/installations",
                        "body": [
                            "installationId": .string("inst-\(i)"), "deviceType": "ios", "deviceToken": .string(Self.token(i + 1)),
                            "channels": ["all"],
                        ],
                    ]
                }
                let batch = try await p.request(.post, "/batch", ["requests": .array(requests)])
                #expect(batch.status == 200)
            }
            // Slow enough that the stop lands in the middle of the push.
            apns.latency = .milliseconds(20)
            let answer = try await p.request(.post, "/push", ["channels": ["all"], "data": ["alert": "once"]])
            statusId.withLock { $0 = answer.headers[HTTPField.Name("X-Parse-Push-Status-Id")!] }
        }
        for _ in 0..<400 where apns.requests.count < 300 { try await Task.sleep(for: .milliseconds(25)) }
        let beforeStop = apns.requests.count
        #expect(beforeStop > 0 && beforeStop < Self.installations, "stopped in the middle (\(beforeStop) sent)")
        await first.stop()
        let sentByFirst = apns.requests.count
        #expect(sentByFirst < Self.installations, "the first process had not finished (\(sentByFirst))")
        apns.latency = .zero

        let second = try ProcessTests.Server(dataDir: dir, environment: environment)
        defer { second.kill() }
        try await second.waitUntilHealthy()
        let id = try #require(statusId.withLock { $0 })
        try await ProcessTests.client(second.port, key) { p in
            // A debug build on a machine busy with the rest of the suite sends slowly: a generous wait.
            let status = try await PushTests.status(p, id, within: 120)
            #expect(status["status"] == "succeeded")
            #expect(status["numSent"] == .int(Int64(Self.installations)))
        }
        let counts = Dictionary(apns.requests.map { ($0.deviceToken, 1) }, uniquingKeysWith: +)
        #expect(counts.count == Self.installations, "every device")
        #expect(counts.values.allSatisfy { $0 == 1 }, "once: \(counts.values.filter { $0 > 1 }.count) devices got it twice")
    }
}
