import Foundation
import Logging
import ParsleyCore
import ParsleyIdentityFakes

/// `--logins`: log-ins per second on the `parsley` executable as the README starts it, in the same run: Sign in with
/// Apple (`POST /users` with `authData.apple`, an identity token checked against a JWKS the server fetched once and
/// caches; the key set is served by a local fake identity provider) against password log-ins (`POST /login`, bcrypt
/// at the default cost). Both create a session per log-in.
enum LoginBench {
    static let users = 64
    static let rounds = 3

    static func run(work: URL, wrk: Wrk, arguments: BenchArguments, logger: Logger) async throws {
        try await FakeIdentityProvider.with(maxAge: 3600) { fake in
            let auth: JSONValue = ["apple": ["clientId": "com.example.bench", "jwksURL": .string(fake.jwksURL)]]
            let server = try ServerProcess(work: work, port: arguments.port, environment: ["PARSE_SERVER_AUTH_PROVIDERS": JSONWriter.string(auth)])
            defer { server.stop() }
            try await server.waitUntilHealthy()
            var appleBodies: [String] = []
            var passwordBodies: [String] = []
            for i in 0..<users {
                let id = "bench.\(i)"
                let token = fake.mint(sub: id, aud: "com.example.bench", iss: "https://appleid.apple.com", expiresIn: 3 * 3600)
                let body: JSONValue = ["authData": ["apple": ["id": .string(id), "token": .string(token)]]]
                _ = try await server.call("POST", "/users", body, master: false)
                appleBodies.append(JSONWriter.string(body))
                let credentials: JSONValue = ["username": .string("user\(i)"), "password": "bench-password"]
                _ = try await server.call("POST", "/users", credentials, master: false)
                passwordBodies.append(JSONWriter.string(credentials))
            }
            print(
                "Parsley log-in benchmark: \(ProcessInfo.processInfo.activeProcessorCount) cores, wrk -t2 -c16 -d\(arguments.seconds)s, "
                    + "\(users) users each, \(rounds) rounds in turns, medians; JWKS fetches before: \(fake.jwksFetches)")
            let headers = ["X-Parse-Application-Id": "bench-app", "Content-Type": "application/json"]
            var apple: [Measure] = []
            var password: [Measure] = []
            let url = "http://127.0.0.1:\(arguments.port)"
            for round in 1...rounds {
                print("round \(round)")
                let appleScript = randomBody(path: "/parse/users", bodies: appleBodies, headers: headers)
                apple.append(
                    try wrk.run(name: "apple", url: url, seconds: arguments.seconds, script: appleScript, directory: work, connections: 16))
                let passwordScript = randomBody(path: "/parse/login", bodies: passwordBodies, headers: headers)
                password.append(
                    try wrk.run(name: "password", url: url, seconds: arguments.seconds, script: passwordScript, directory: work, connections: 16))
            }
            func median(_ all: [Measure]) -> Measure { all.sorted { $0.requestsPerSecond < $1.requestsPerSecond }[all.count / 2] }
            let (a, p) = (median(apple), median(password))
            print("")
            print("| log-in | log-ins/s | p50 ms | p99 ms |")
            print("|---|---:|---:|---:|")
            print("| Sign in with Apple (identity token, cached JWKS) | \(fmt(a.requestsPerSecond)) | \(ms(a.p50)) | \(ms(a.p99)) |")
            print("| password (bcrypt, cost 10) | \(fmt(p.requestsPerSecond)) | \(ms(p.p50)) | \(ms(p.p99)) |")
            print("")
            print(
                "ratio apple/password: \(String(format: "%.1f", a.requestsPerSecond / max(p.requestsPerSecond, 1)))x; JWKS fetches in all: \(fake.jwksFetches)"
            )
        }
    }

    /// POSTs to `path` with a body picked at random from `bodies` each request.
    static func randomBody(path: String, bodies: [String], headers: [String: String]) -> String {
        """
        \(WrkScript.headerLines(headers))
        local bodies = {\(bodies.map(WrkScript.luaString).joined(separator: ","))}
        request = function()
          return wrk.format("POST", "\(path)", nil, bodies[math.random(#bodies)])
        end
        """
    }
}
