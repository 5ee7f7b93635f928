import Foundation
import ParsleyStorage
import NIOSSL
public import PostgresNIO

/// How connections to PostgreSQL use TLS, read from the database URL's query the way libpq and node-postgres
/// (Parse Server's driver) read it:
/// - `sslmode=disable` (the default, as with Parse Server), `allow` or `prefer` (TLS when the server offers it),
///   `require` (TLS, certificate not checked unless `sslrootcert` is given, then as `verify-ca`), `verify-ca`
///   (certificate chain checked), `verify-full` (chain and host name checked), `no-verify` (node-postgres: TLS,
///   nothing checked);
/// - `ssl=true` (node-postgres: TLS with full verification) or `ssl=false`, when there is no `sslmode`;
/// - `sslrootcert=<PEM file>` (trusted roots instead of the system's; `system` means the system's),
///   `sslcert=<PEM file>` with `sslkey=<PEM file>` (a client certificate).
public struct PostgresTLSSettings: Sendable, Equatable {
    public enum Mode: String, Sendable {
        case disable, prefer, require, verifyCA = "verify-ca", verifyFull = "verify-full"
    }

    public var mode: Mode = .disable
    public var rootCertificate: String?
    public var clientCertificate: String?
    public var clientKey: String?

    public init() {}

    init(query: [URLQueryItem]) throws {
        func value(_ name: String) -> String? { query.last { $0.name == name }?.value }
        var verify: Bool?
        if let sslmode = value("sslmode") {
            switch sslmode.lowercased() {
            case "disable": mode = .disable
            case "allow", "prefer": mode = .prefer
            case "require": mode = .require
            case "no-verify": (mode, verify) = (.require, false)
            case "verify-ca": mode = .verifyCA
            case "verify-full": mode = .verifyFull
            default:
                throw StoreError.database(
                    "unknown sslmode '\(sslmode)' (disable, allow, prefer, require, verify-ca, verify-full or no-verify)")
            }
        } else if let ssl = value("ssl") {
            switch ssl.lowercased() {
            case "true", "1", "on", "yes": mode = .verifyFull
            case "false", "0", "off", "no": mode = .disable
            default: throw StoreError.database("ssl must be true or false, got '\(ssl)'")
            }
        }
        rootCertificate = value("sslrootcert").flatMap { $0.isEmpty || $0 == "system" ? nil : $0 }
        clientCertificate = value("sslcert").flatMap { $0.isEmpty ? nil : $0 }
        clientKey = value("sslkey").flatMap { $0.isEmpty ? nil : $0 }
        // libpq: with a root certificate given, `require` checks the chain as `verify-ca` does.
        if mode == .require, rootCertificate != nil, verify != false { mode = .verifyCA }
        if (clientCertificate == nil) != (clientKey == nil) {
            throw StoreError.database("sslcert and sslkey go together (a client certificate and its private key)")
        }
    }

    /// NIOSSL's client configuration for the mode; nil when TLS is off. Files are read here, so a missing or
    /// unreadable one is reported when the server starts.
    func configuration() throws -> TLSConfiguration? {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable: return nil
        case .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        do {
            if let rootCertificate {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificate))
            }
            if let clientCertificate, let clientKey {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(clientCertificate).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: clientKey, format: .pem))
            }
        } catch {
            throw StoreError.database("TLS files (sslrootcert, sslcert, sslkey) could not be read: \(error)")
        }
        return tls
    }

    /// For postgres-nio's own pool (the benchmark's direct client).
    public func clientTLS() throws -> PostgresClient.Configuration.TLS {
        guard let tls = try configuration() else { return .disable }
        return mode == .prefer ? .prefer(tls) : .require(tls)
    }

    /// For Parsley's connections (the statement pool's and the change-feed listener's): one TLS context for all.
    public func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
        guard let tls = try configuration() else { return .disable }
        let context = try NIOSSLContext(configuration: tls)
        return mode == .prefer ? .prefer(context) : .require(context)
    }
}
