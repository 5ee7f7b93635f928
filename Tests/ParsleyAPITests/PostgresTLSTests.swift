import Foundation
import ParsleyCore
import ParsleyPostgres
import ParsleyStorage
import Testing

/// TLS to PostgreSQL, chosen by the database URL as libpq and node-postgres read it (`sslmode`, `sslrootcert`).
/// The test cluster runs with `ssl=on` and a certificate from a throwaway CA (PostgresCluster.swift, or
/// scripts/pg-test-cluster.sh in CI, which passes the CA in PARSLEY_TEST_POSTGRES_CA).
@Suite("PostgreSQL over TLS", .serialized, .enabled(if: PostgresCluster.offersTLS, "needs a PostgreSQL test server with TLS and a known CA"))
struct PostgresTLSTests {
    static func caFile() async throws -> String {
        try #require(try await PostgresCluster.shared.rootCertificate(), "the test server's CA is not known")
    }

    /// `url` with another host and a query.
    static func url(_ url: String, host: String? = nil, query: String) throws -> String {
        var components = try #require(URLComponents(string: url))
        if let host { components.host = host }
        components.percentEncodedQuery = query
        return try #require(components.string)
    }

    /// Starts a `parsley` process on `url`, creates an object of `className` and reads it back, then runs
    /// `whileUp` with the process still serving.
    static func servesObjects(_ url: String, className: String, whileUp: () async throws -> Void = {}) async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let node = try await PostgresProcessTests.node(url, dataDir: dir)
        defer { node.kill() }
        try await ProcessTests.client(node.port, PostgresProcessTests.key) { client in
            let id = try await client.createId(className, ["name": "secret"])
            let got = try await client.get(className, id)
            #expect(got.status == 200, "\(got.json)")
            #expect(got["name"] == "secret")
        }
        try await whileUp()
    }

    /// Starts a `parsley` process on `url` and expects it to stop at once with exit status 2, saying `message`.
    static func refusedAtStart(_ url: String, saying message: String, _ comment: String) async throws {
        let dir = try ProcessTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ProcessTests.Server(dataDir: dir, environment: PostgresProcessTests.environment(url))
        await server.process.exited(killAfter: .seconds(30))
        let status = server.process.terminationStatus
        #expect(status == 2, "\(comment): exit status \(status)")
        #expect(server.outputText().contains(message), "\(comment): \(server.outputText())")
    }

    /// Whether the connection a read runs on is encrypted, as PostgreSQL itself reports it.
    static func encrypted(_ database: PostgresDatabase) async throws -> Bool {
        let rows = try await database.read { executor in
            try await executor.query(SQLFragment("SELECT CASE WHEN ssl THEN 'on' ELSE 'off' END FROM pg_stat_ssl WHERE pid = pg_backend_pid()"))
        }
        return rows.first?.first?.text == "on"
    }

    @Test("a parsley process with sslmode=verify-full and the cluster's CA serves requests, every connection encrypted")
    func verifyFullProcess() async throws {
        let ca = try await Self.caFile()
        try await PostgresCluster.shared.withFreshDatabase { plain in
            let name = try #require(try PostgresConnectionSettings(url: plain).database)
            let url = try Self.url(plain, host: "localhost", query: "sslmode=verify-full&sslrootcert=\(ca)")
            try await Self.servesObjects(url, className: "OverTLS") {
                // The pool's connections and the change-feed listener, as PostgreSQL sees them.
                // (Asked from the maintenance database, so this connection and its own listener are not counted.)
                let maintenance = try #require(try await PostgresCluster.shared.serverURL())
                let admin = try await PostgresDatabase.open(url: maintenance, poolSize: 1, logger: TestDatabase.logger)
                let rows = try await admin.serving {
                    try await admin.read { executor in
                        try await executor.query(
                            SQLFragment(
                                unsafeSQL: """
                                    SELECT count(*)::text, count(*) FILTER (WHERE s.ssl)::text FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
                                    WHERE a.datname = ? AND a.backend_type = 'client backend'
                                    """, [.text(name)]))
                    }
                }
                let row = try #require(rows.first)
                try #require(row.count == 2)
                let total = Int(row[0].text ?? "") ?? 0
                let tls = Int(row[1].text ?? "") ?? -1
                #expect(total >= 2, "the node's pool and its listener should be connected")
                #expect(tls == total, "\(tls) of \(total) connections encrypted")
            }
        }
    }

    @Test("sslmode=require encrypts without checking the certificate; no sslmode means no TLS, as with Parse Server")
    func requireAndDefault() async throws {
        try await PostgresCluster.shared.withFreshDatabase { plain in
            let required = try await PostgresDatabase.open(
                url: try Self.url(plain, query: "sslmode=require"), poolSize: 1, logger: TestDatabase.logger)
            let requiredEncrypted = try await required.serving { try await Self.encrypted(required) }
            #expect(requiredEncrypted)

            let preferred = try await PostgresDatabase.open(
                url: try Self.url(plain, query: "sslmode=prefer"), poolSize: 1, logger: TestDatabase.logger)
            let preferredEncrypted = try await preferred.serving { try await Self.encrypted(preferred) }
            #expect(preferredEncrypted)

            let unencrypted = try await PostgresDatabase.open(url: plain, poolSize: 1, logger: TestDatabase.logger)
            let defaultEncrypted = try await unencrypted.serving { try await Self.encrypted(unencrypted) }
            #expect(!defaultEncrypted)
        }
    }

    @Test("sslcert and sslkey log in a role that PostgreSQL admits by client certificate only; without them the start is refused")
    func clientCertificate() async throws {
        let ca = try await Self.caFile()
        let folder = URL(fileURLWithPath: ca).deletingLastPathComponent()
        let (cert, key) = (folder.appendingPathComponent("client.crt").path, folder.appendingPathComponent("client.key").path)
        try #require(
            FileManager.default.fileExists(atPath: cert) && FileManager.default.fileExists(atPath: key),
            "no client certificate next to the test CA (the test cluster makes one, as scripts/pg-test-cluster.sh does)")
        let role = LocalCluster.certificateRole
        let maintenance = try #require(try await PostgresCluster.shared.serverURL())
        let admin = try await PostgresDatabase.open(url: maintenance, poolSize: 1, logger: TestDatabase.logger)
        _ = try await admin.serving {
            try await admin.write { executor in
                try await executor.query(
                    SQLFragment(
                        unsafeSQL:
                            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(role)') THEN CREATE ROLE \(role) LOGIN SUPERUSER; "
                            + "END IF; END $$"
                    ))
            }
        }
        try await PostgresCluster.shared.withFreshDatabase { plain in
            var components = try #require(URLComponents(string: plain))
            components.user = role
            let asRole = try #require(components.string)
            let tls = "sslmode=verify-full&sslrootcert=\(ca)"
            let withCertificate = try Self.url(asRole, host: "localhost", query: "\(tls)&sslcert=\(cert)&sslkey=\(key)")
            // A parsley process logs in with the certificate and serves requests.
            try await Self.servesObjects(withCertificate, className: "ByCertificate")
            // PostgreSQL saw the certificate on the connection.
            let database = try await PostgresDatabase.open(url: withCertificate, poolSize: 1, logger: TestDatabase.logger)
            let rows = try await database.serving {
                try await database.read { executor in
                    try await executor.query(SQLFragment("SELECT client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()"))
                }
            }
            #expect(rows.first?.first?.text == "/CN=\(role)")
            // Without the certificate PostgreSQL turns the role away, and the start says why.
            try await Self.refusedAtStart(try Self.url(asRole, host: "localhost", query: tls), saying: "certificate", "no sslcert")
        }
    }

    @Test("a certificate that cannot be verified, or a bad sslmode, stops the server at start with a clear message")
    func refusals() async throws {
        try await PostgresCluster.shared.withFreshDatabase { plain in
            // The system's roots do not know the test CA.
            for (query, message) in [
                ("sslmode=verify-full", "CERTIFICATE_VERIFY_FAILED"), ("sslmode=sometimes", "unknown sslmode 'sometimes'"),
                ("sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem", "could not be read"),
                ("sslmode=require&sslcert=/tmp/client.pem", "sslcert and sslkey go together"), ("ssl=maybe", "ssl must be true or false"),
                ("ssl=true", "CERTIFICATE_VERIFY_FAILED"),
            ] {
                try await Self.refusedAtStart(try Self.url(plain, host: "localhost", query: query), saying: message, query)
            }
        }
    }
}
