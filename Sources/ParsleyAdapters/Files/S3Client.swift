public import AsyncHTTPClient
public import NIOCore
public import NIOHTTP1
import ParsleyCore

/// An S3 error answer (`<Error><Code>NoSuchKey</Code>…`) or a failure to reach the endpoint.
public struct S3Error: Error, Sendable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    public var description: String { status == 0 ? "S3 unreachable: \(message)" : "S3 \(status) \(code): \(message)" }
}

/// The S3 REST calls the file store needs, signed with SigV4 over AsyncHTTPClient: objects (put, head, ranged get,
/// delete, list), multipart uploads (create, upload part, complete, abort, list) and the bucket (head, create).
/// Path-style (`<endpoint>/<bucket>/<key>`) or virtual-hosted (`<bucket>.<host>/<key>`) addressing.
public struct S3Client: Sendable {
    public let bucket: String
    /// `http://127.0.0.1:9000` or `https://s3.eu-west-1.amazonaws.com`: scheme, host and port, no path.
    public let endpoint: String
    public let pathStyle: Bool
    let signer: S3Signer
    let http: HTTPClient

    /// One client for every store in the process (pooled connections); a connection that cannot be made within
    /// 5 seconds or goes silent for 60 fails the call.
    static let sharedHTTP: HTTPClient = {
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(5), read: .seconds(60)))
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    public init(bucket: String, endpoint: String, region: String, pathStyle: Bool, credentials: S3Credentials) {
        var e = endpoint
        while e.hasSuffix("/") { e.removeLast() }
        self.bucket = bucket
        self.endpoint = e
        self.pathStyle = pathStyle
        self.signer = S3Signer(credentials: credentials, region: region)
        self.http = Self.sharedHTTP
    }

    /// The scheme and the host (with its port) requests go to, and the URI path of `key` (nil: the bucket).
    func address(_ key: String?) -> (scheme: String, host: String, path: String) {
        let scheme = endpoint.hasPrefix("https://") ? "https" : "http"
        let host = String(endpoint.dropFirst(scheme.count + 3))
        let keyPath = key.map { "/" + S3Signer.encodePath($0) } ?? "/"
        if pathStyle { return (scheme, host, "/" + FileNames.urlEncode(bucket) + (key == nil ? "" : keyPath)) }
        return (scheme, bucket + "." + host, keyPath)
    }

    /// A presigned GET URL of `key`, valid for `expires` seconds.
    public func presignedURL(_ key: String, expires: Int) -> String {
        let (scheme, host, path) = address(key)
        return "\(scheme)://\(host)\(path)?" + signer.presignedQuery(host: host, path: path, expires: expires)
    }

    // MARK: Calls

    /// Sends one signed request. `body` is signed by its hash when small, else as `UNSIGNED-PAYLOAD`.
    /// - Throws: `S3Error` with status 0 when the endpoint cannot be reached.
    func send(
        _ method: HTTPMethod, _ key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: ByteBuffer? = nil, timeout: TimeAmount = .seconds(30)
    ) async throws -> HTTPClientResponse {
        let payloadHash: String
        if let body, body.readableBytes <= 64 * 1024 {
            payloadHash = S3Signer.payloadHash(body.readableBytesView)
        } else {
            payloadHash = body == nil ? S3Signer.emptyPayload : S3Signer.unsignedPayload
        }
        let (url, signedHeaders) = signed(method, key, query: query, headers: headers, payloadHash: payloadHash)
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers = signedHeaders
        if let body { request.body = .bytes(body) }
        do {
            return try await http.execute(request, timeout: timeout)
        } catch let error as S3Error {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw S3Error(status: 0, code: "", message: "\(endpoint): \(error)")
        }
    }

    /// The URL and the headers (the caller's and SigV4's) of a request.
    func signed(
        _ method: HTTPMethod, _ key: String?, query: [(String, String)], headers: [(String, String)], payloadHash: String
    ) -> (url: String, headers: HTTPHeaders) {
        let (scheme, host, path) = address(key)
        let signature = signer.sign(method: method.rawValue, host: host, path: path, query: query, headers: headers, payloadHash: payloadHash)
        let queryString = S3Signer.canonicalQuery(query)
        var all = HTTPHeaders()
        for (name, value) in headers + signature { all.add(name: name, value: value) }
        return ("\(scheme)://\(host)\(path)" + (queryString.isEmpty ? "" : "?" + queryString), all)
    }

    /// `send` that expects a 2xx answer and returns it with its (small) body.
    /// - Throws: `S3Error` with S3's code for any other status.
    @discardableResult
    func call(
        _ method: HTTPMethod, _ key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: ByteBuffer? = nil, timeout: TimeAmount = .seconds(30)
    ) async throws -> (HTTPClientResponse, String) {
        let response = try await send(method, key, query: query, headers: headers, body: body, timeout: timeout)
        let text = String(buffer: try await response.body.collect(upTo: 4 << 20))
        guard (200..<300).contains(response.status.code) else { throw Self.error(response.status.code, text) }
        // CompleteMultipartUpload may answer 200 with an error in the body.
        if text.contains("<Error>") { throw Self.error(500, text) }
        return (response, text)
    }

    static func error(_ status: UInt, _ body: String) -> S3Error {
        S3Error(status: Int(status), code: S3XML.values("Code", in: body).first ?? "", message: S3XML.values("Message", in: body).first ?? "")
    }

    // MARK: Objects

    /// The object's headers, or nil when there is none (404).
    public func head(_ key: String) async throws -> HTTPHeaders? {
        let response = try await send(.HEAD, key)
        if response.status == .notFound { return nil }
        guard (200..<300).contains(response.status.code) else { throw S3Error(status: Int(response.status.code), code: "", message: "HEAD \(key)") }
        return response.headers
    }

    public func put(_ key: String, body: ByteBuffer, headers: [(String, String)] = []) async throws {
        try await call(.PUT, key, headers: headers, body: body, timeout: .minutes(10))
    }

    /// A GET of `range` (nil: all); the answer's body streams.
    public func get(_ key: String, range: Range<Int64>? = nil) async throws -> HTTPClientResponse {
        var headers: [(String, String)] = []
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        return try await send(.GET, key, headers: headers, timeout: .hours(24))
    }

    public func delete(_ key: String) async throws {
        try await call(.DELETE, key)
    }

    /// Keys under `prefix`, a page at a time (ListObjectsV2).
    public func list(prefix: String, startAfter: String? = nil, continuation: String? = nil) async throws -> (keys: [String], next: String?) {
        var query = [("list-type", "2"), ("prefix", prefix)]
        if let startAfter { query.append(("start-after", startAfter)) }
        if let continuation { query.append(("continuation-token", continuation)) }
        let (_, text) = try await call(.GET, nil, query: query)
        let truncated = S3XML.values("IsTruncated", in: text).first == "true"
        return (S3XML.values("Key", in: text), truncated ? S3XML.values("NextContinuationToken", in: text).first : nil)
    }

    // MARK: Multipart uploads

    public func createMultipartUpload(_ key: String, headers: [(String, String)] = []) async throws -> String {
        let (_, text) = try await call(.POST, key, query: [("uploads", "")], headers: headers)
        guard let id = S3XML.values("UploadId", in: text).first, !id.isEmpty else { throw Self.error(500, text) }
        return id
    }

    /// Uploads part `number` (from 1) and returns its ETag.
    public func uploadPart(_ key: String, uploadId: String, number: Int, body: ByteBuffer) async throws -> String {
        let (response, _) = try await call(
            .PUT, key, query: [("partNumber", String(number)), ("uploadId", uploadId)], body: body, timeout: .minutes(10))
        guard let etag = response.headers.first(name: "etag") else { throw S3Error(status: 500, code: "", message: "part without ETag") }
        return etag
    }

    public func completeMultipartUpload(_ key: String, uploadId: String, etags: [String]) async throws {
        var xml = "<CompleteMultipartUpload>"
        for (i, etag) in etags.enumerated() {
            xml += "<Part><PartNumber>\(i + 1)</PartNumber><ETag>\(S3XML.escape(etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        try await call(.POST, key, query: [("uploadId", uploadId)], body: ByteBuffer(string: xml), timeout: .minutes(10))
    }

    /// Aborts an unfinished multipart upload and makes sure it is gone. It runs to its end even when the calling
    /// task was cancelled (the client that was uploading went away): it goes through the client's future-based API,
    /// which task cancellation does not reach, so no unstructured task is needed to outlive the request.
    ///
    /// S3 warns that a part still arriving while an upload is aborted can outlive the abort, so the upload is listed
    /// afterwards and aborted again while it is still there (up to five tries, a moment apart).
    /// - Throws: `S3Error` when the upload is still there after the last try or S3 cannot be reached.
    public func abortMultipartUpload(_ key: String, uploadId: String) async throws {
        var lastError: S3Error?
        for attempt in 0..<5 {
            if attempt > 0 { await pause(.milliseconds(200 * Int64(attempt))) }
            do {
                let (status, body) = try await uncancellable(.DELETE, key, query: [("uploadId", uploadId)])
                // 404 NoSuchUpload: already gone.
                guard (200..<300).contains(status) || status == 404 else { throw Self.error(status, body) }
                let (listed, listing) = try await uncancellable(.GET, nil, query: [("uploads", ""), ("prefix", key)])
                guard (200..<300).contains(listed) else { throw Self.error(listed, listing) }
                if !S3XML.values("UploadId", in: listing).contains(uploadId) { return }
                lastError = S3Error(status: 0, code: "", message: "\(endpoint): upload \(uploadId) still listed after its abort")
            } catch let error as S3Error {
                lastError = error
            }
        }
        throw lastError ?? S3Error(status: 0, code: "", message: "\(endpoint): abort failed")
    }

    /// A small signed request through the future-based API (task cancellation does not stop it): status and body.
    func uncancellable(_ method: HTTPMethod, _ key: String?, query: [(String, String)]) async throws -> (UInt, String) {
        let (url, headers) = signed(method, key, query: query, headers: [], payloadHash: S3Signer.emptyPayload)
        do {
            let request = try HTTPClient.Request(url: url, method: method, headers: headers)
            let response = try await http.execute(request: request, deadline: .now() + .seconds(30)).get()
            return (response.status.code, response.body.map { String(buffer: $0) } ?? "")
        } catch {
            throw S3Error(status: 0, code: "", message: "\(endpoint): \(error)")
        }
    }

    /// Waits on the client's event loop, which task cancellation does not cut short.
    func pause(_ amount: TimeAmount) async {
        try? await http.eventLoopGroup.next().scheduleTask(in: amount) {}.futureResult.get()
    }

    /// Unfinished multipart uploads under `prefix`: key, upload id and when it started (as S3 writes it).
    public func multipartUploads(prefix: String) async throws -> [(key: String, uploadId: String, initiated: String)] {
        let (_, text) = try await call(.GET, nil, query: [("uploads", ""), ("prefix", prefix)])
        return S3XML.values("Upload", in: text).map { upload in
            (
                S3XML.values("Key", in: upload).first ?? "", S3XML.values("UploadId", in: upload).first ?? "",
                S3XML.values("Initiated", in: upload).first ?? ""
            )
        }
    }

    // MARK: The bucket

    /// Whether the bucket exists (HEAD bucket: 404 is no).
    public func bucketExists() async throws -> Bool {
        let response = try await send(.HEAD, nil)
        if response.status == .notFound { return false }
        guard (200..<300).contains(response.status.code) else {
            throw S3Error(status: Int(response.status.code), code: "", message: "HEAD bucket \(bucket)")
        }
        return true
    }

    /// Creates the bucket in `region` (an existing bucket of ours is fine).
    public func createBucket() async throws {
        let region = signer.region
        let body =
            region == "us-east-1"
            ? nil
            : ByteBuffer(string: "<CreateBucketConfiguration><LocationConstraint>\(region)</LocationConstraint></CreateBucketConfiguration>")
        do {
            try await call(.PUT, nil, body: body)
        } catch let error as S3Error where error.code == "BucketAlreadyOwnedByYou" {
            return
        }
    }
}

/// The little XML S3 answers need: the text of every element of one name, entities decoded.
enum S3XML {
    static func values(_ tag: String, in xml: String) -> [String] {
        var out: [String] = []
        let open = "<\(tag)>", close = "</\(tag)>"
        var rest = xml[...]
        while let start = rest.firstRange(of: open), let end = rest[start.upperBound...].firstRange(of: close) {
            out.append(unescape(String(rest[start.upperBound..<end.lowerBound])))
            rest = rest[end.upperBound...]
        }
        return out
    }

    static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }

    static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacing("&quot;", with: "\"").replacing("&apos;", with: "'")
            .replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&amp;", with: "&")
    }
}
