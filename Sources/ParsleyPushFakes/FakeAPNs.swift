import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
public import ParsleyCore
import SwiftASN1
import Synchronization
import X509

/// A real APNs stand-in on 127.0.0.1: HTTP/2 over TLS (ALPN `h2` only, so an HTTP/1 client cannot pass), with a
/// self-signed certificate for 127.0.0.1 and localhost made at start. It checks every request's provider token (ES256
/// signature against the team's public key, `kid`, `iss`), records the request, and answers per device token as the
/// test scripted it (200 with an `apns-id` unless told otherwise).
public final class FakeAPNs: Sendable {
    public enum Answer: Sendable, Equatable {
        case ok
        case badDeviceToken
        case unregistered
        case tooManyRequests(retryAfter: Int?)
        case expiredProviderToken
        case status(Int, reason: String)
    }

    public struct Request: Sendable {
        public var deviceToken: String
        /// Header names lowercased; pseudo-headers (`:path`) are not among them.
        public var headers: [String: String]
        public var body: JSONValue
        public var jwt: String
        public var jwtValid: Bool
        /// The HTTP major version the request came over (always 2 here: the server speaks nothing else).
        public var httpVersion: Int
    }

    public let keyId: String
    public let teamId: String
    private let publicKey: P256.Signing.PublicKey
    /// The server certificate, PEM: the trust root a client needs.
    public let certificatePEM: String
    /// `certificatePEM` in a file (a `caFile`), removed when the fake stops.
    public let certificateFile: String
    private let script = AnswerScript<Answer>(fallback: .ok)
    private let recorded = Mutex<[Request]>([])
    private let boundPort = Mutex(0)
    private let delay = Mutex<Duration>(.zero)

    /// How long each answer takes (a slow APNs, so a test can stop the server in the middle of a push).
    public var latency: Duration {
        get { delay.withLock { $0 } }
        set { delay.withLock { $0 = newValue } }
    }

    private init(key: PushTestKeys.APNsKey, certificatePEM: String, certificateFile: String) {
        keyId = key.keyId
        teamId = key.teamId
        publicKey = key.publicKey
        self.certificatePEM = certificatePEM
        self.certificateFile = certificateFile
    }

    public var port: Int { boundPort.withLock { $0 } }
    /// The base URL (`ios.host`).
    public var url: String { "https://127.0.0.1:\(port)" }
    public var requests: [Request] { recorded.withLock { $0 } }

    /// Answers requests for `deviceToken` with `answers` in turn, the last one from then on.
    public func answer(_ deviceToken: String, with answers: Answer...) {
        script.set(deviceToken, answers)
    }

    /// Runs a fake APNs that trusts `key` beside `body`.
    public static func with(key: PushTestKeys.APNsKey, _ body: (FakeAPNs) async throws -> Void) async throws {
        let (certificatePEM, privateKeyPEM) = try makeCertificate()
        let file = try PushTestKeys.temporaryFile(certificatePEM, suffix: ".pem")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fake = FakeAPNs(key: key, certificatePEM: certificatePEM, certificateFile: file)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2Pipeline(
                        mode: .server,
                        inboundStreamInitializer: { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandlers([
                                    HTTP2FramePayloadToHTTP1ServerCodec(), FakeAPNsStreamHandler(fake: fake),
                                ])
                            }
                        }
                    ).map { _ in () }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        fake.boundPort.withLock { $0 = server.localAddress?.port ?? 0 }
        let outcome: Result<Void, any Error>
        do { outcome = .success(try await body(fake)) } catch { outcome = .failure(error) }
        try? await server.close()
        try outcome.get()
    }

    /// A port on 127.0.0.1 that nothing listens on.
    public static func closedPort() async throws -> Int {
        // Port 1 (tcpmux) on loopback: nothing listens there, and unlike a port bound and closed again, no test server
        // running in parallel can be handed it (they bind port 0, from the ephemeral range).
        1
    }

    /// A self-signed P-256 certificate for 127.0.0.1 and localhost, valid from an hour ago for a day; and its key.
    private static func makeCertificate() throws -> (certificate: String, privateKey: String) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Parsley fake APNs") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: now - 3600, notValidAfter: now + 86_400,
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                KeyUsage(digitalSignature: true, keyCertSign: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(key))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    /// The answer to one complete request: status, headers, JSON body (nil: none).
    fileprivate func respond(to head: HTTPRequestHead, body: ByteBuffer) -> (HTTPResponseStatus, HTTPHeaders, JSONValue?) {
        let prefix = "/3/device/"
        guard head.method == .POST, head.uri.hasPrefix(prefix) else { return (.notFound, [:], ["reason": "BadPath"]) }
        let deviceToken = String(head.uri.dropFirst(prefix.count))
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        let authorization = headers["authorization"] ?? ""
        let jwt = authorization.hasPrefix("bearer ") ? String(authorization.dropFirst(7)) : ""
        let jwtValid = verify(jwt)
        let json = (try? JSONParser.parse(body.readableBytesView)) ?? .null
        recorded.withLock {
            $0.append(
                Request(
                    deviceToken: deviceToken, headers: headers, body: json, jwt: jwt, jwtValid: jwtValid, httpVersion: head.version.major))
        }
        guard jwtValid else { return (.forbidden, [:], ["reason": "InvalidProviderToken"]) }
        let answer = script.next(for: deviceToken)
        switch answer {
        case .ok: return (.ok, ["apns-id": headers["apns-id"] ?? UUID().uuidString], nil)
        case .badDeviceToken: return (.badRequest, [:], ["reason": "BadDeviceToken"])
        case .unregistered:
            return (.gone, [:], ["reason": "Unregistered", "timestamp": .int(Int64(Date().timeIntervalSince1970 * 1000))])
        case .tooManyRequests(let retryAfter):
            return (.tooManyRequests, retryAfter.map { ["retry-after": String($0)] } ?? [:], ["reason": "TooManyRequests"])
        case .expiredProviderToken: return (.forbidden, [:], ["reason": "ExpiredProviderToken"])
        case .status(let code, let reason): return (HTTPResponseStatus(statusCode: code), [:], ["reason": .string(reason)])
        }
    }

    /// ES256 over `header.claims` with the team's key, `alg` ES256, the right `kid` and `iss`, an `iat`.
    private func verify(_ jwt: String) -> Bool {
        guard let token = PushTestKeys.decodeJWT(jwt), token.header["alg"] == "ES256", token.header["kid"]?.stringValue == keyId,
            token.claims["iss"]?.stringValue == teamId, token.claims["iat"]?.isNumber == true,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature)
        else { return false }
        return publicKey.isValidSignature(signature, for: token.signingInput)
    }
}

/// One HTTP/2 stream of the fake, seen as HTTP/1 parts: gathers the request, then writes the fake's answer.
private final class FakeAPNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let fake: FakeAPNs
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(fake: FakeAPNs) { self.fake = fake }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body(var part): body.writeBuffer(&part)
        case .end:
            guard let head else { return }
            let (status, headers, json) = fake.respond(to: head, body: body)
            var responseHeaders = headers
            if json != nil { responseHeaders.add(name: "content-type", value: "application/json") }
            let version = head.version
            let write: (ChannelHandlerContext) -> Void = { context in
                context.write(
                    NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: status, headers: responseHeaders))), promise: nil)
                if let json {
                    context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: JSONWriter.bytes(json))))), promise: nil)
                }
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
            }
            let latency = fake.latency
            if latency == .zero {
                write(context)
            } else {
                let nanoseconds = Int64(latency.components.seconds) * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) { write(bound.value) }
            }
        }
    }
}
