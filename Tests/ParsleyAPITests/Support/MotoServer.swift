import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ParsleyAdapters

#if canImport(Glibc)
    import Glibc
#endif

/// A real S3-compatible server on loopback for the S3 files tests: moto's server mode
/// (`python3 -m moto.server -H 127.0.0.1 -p <free port>`), started once per test process on first use and
/// stopped at exit. When moto is missing it is installed with pip (`moto[server]`); when that fails too, the
/// tests that need it fail (they never skip silently).
actor MotoServer {
    static let shared = MotoServer()
    /// The one start (tests ask at once: the first starts it, the others wait for the same task); the child is
    /// kept here for the life of the process.
    private var starting: Task<(ChildProcess, String), any Error>?

    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// `http://127.0.0.1:<port>` of the shared server.
    func endpoint() async throws -> String {
        if starting == nil {
            starting = Task {
                let (child, url) = try await Self.launch()
                Self.registerStop(child.processIdentifier)
                return (child, url)
            }
        }
        guard let starting else { throw Unavailable(description: "moto did not start") }
        return try await starting.value.1
    }

    /// A server of its own (for a test that stops it), on `port` when given.
    static func launch(port: Int? = nil) async throws -> (ChildProcess, String) {
        guard let port else {
            // A port of its own, held until moto listens on it (moto binds beside the reservation).
            let reservation = try ReservedPort()
            defer { reservation.release() }
            return try await launch(port: reservation.port)
        }
        try await ensureInstalled()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("parsley-moto-\(port).log")
        let child = try ChildProcess("/usr/bin/env", ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)], output: log)
        let url = "http://127.0.0.1:\(port)"
        for _ in 0..<300 {
            if await isUp(url) { return (child, url) }
            if !child.isRunning { throw Unavailable(description: "moto.server exited: \(child.outputText().suffix(2000))") }
            try await Task.sleep(for: .milliseconds(100))
        }
        child.killNow()
        throw Unavailable(description: "moto.server did not answer on \(url) within 30 s: \(child.outputText().suffix(2000))")
    }

    static func isUp(_ url: String) async -> Bool {
        var request = HTTPClientRequest(url: url + "/moto-api/data.json")
        request.method = .GET
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(2)) else { return false }
        _ = try? await response.body.collect(upTo: 16 << 20)
        // moto's own page, not any server's answer: a 404 from another test's server is not moto being up.
        return response.status == .ok
    }

    /// moto with its server extras, else `pip install 'moto[server]'`.
    static func ensureInstalled() async throws {
        guard await PythonPackages.ensure(imports: "moto.server, flask, flask_cors", requirement: "moto[server]") else {
            throw Unavailable(description: "the S3 files tests need moto's server (pip install 'moto[server]'), and installing it failed")
        }
    }

    /// A store on the shared server in a bucket of its own (created by `prepare`), with the smallest part size.
    static func store(directAccess: Bool = false, configure: (inout S3FileOptions) -> Void = { _ in }) async throws -> S3FileStore {
        let endpoint = try await shared.endpoint()
        var options = S3FileOptions(bucket: "parsley-test-" + UUID().uuidString.lowercased().prefix(18), credentials: credentials)
        options.endpoint = endpoint
        options.partSize = 5 << 20
        options.directAccess = directAccess
        configure(&options)
        return S3FileStore(options: options)
    }

    static let credentials = S3Credentials(accessKeyId: "parsley-test-key", secretAccessKey: "parsley-test-secret-do-not-log")

    /// Stops the shared server when the test process exits.
    static func registerStop(_ pid: pid_t) {
        motoPID = pid
        atexit {
            if motoPID > 0 { kill(motoPID, SIGTERM) }
        }
    }
}

nonisolated(unsafe) private var motoPID: pid_t = 0
