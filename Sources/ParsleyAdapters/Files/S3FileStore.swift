#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif
import AsyncHTTPClient
public import NIOCore
import NIOHTTP1
import ParsleyCore
public import ParsleyDomain
import Synchronization

/// Files in an S3 bucket (AWS S3, MinIO, R2, GCS's XML API), as Parse Server's S3 adapter keeps them: the object
/// `<bucketPrefix><name>` with its content type, `x-amz-meta-*` metadata and `x-amz-tagging` tags.
///
/// Uploads stream: a file smaller than one part is one PUT; a larger one is a multipart upload whose next part
/// fills while the previous one is sent (two parts in memory at most), completed only when every byte arrived,
/// and aborted when the client goes away, passes the size limit or a part fails, so nothing is left behind.
/// Downloads stream a ranged GET. The bucket is created at start when missing; when S3 cannot be reached then,
/// the server starts anyway and the first upload tries again.
public final class S3FileStore: FileStore {
    public let options: S3FileOptions
    public let client: S3Client
    /// Set once the bucket is known to exist.
    let bucketReady = Mutex(false)
    /// Unfinished multipart uploads older than this found at start were interrupted by a crash.
    static let staleUploadSeconds = 24 * 3600
    /// Attributes header: Parsley's fields (metadata, tags, creation time) as percent-encoded JSON.
    static let attributesHeader = "x-amz-meta-parsley-attributes"

    public init(options: S3FileOptions) {
        self.options = options
        let (endpoint, pathStyle) = options.resolvedEndpoint
        self.client = S3Client(
            bucket: options.bucket, endpoint: endpoint, region: options.region, pathStyle: pathStyle, credentials: options.credentials)
    }

    func key(_ name: String) throws -> String {
        guard FileNames.isValidStoredName(name) else { throw FileStoreError.invalidName }
        return options.bucketPrefix + name
    }

    /// Runs an S3 call; failures to reach S3 or S3's errors become `FileStoreError.io` (never with credentials).
    func s3<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as S3Error {
            throw FileStoreError.io(error.description)
        }
    }

    public func prepare() async throws {
        // S3 down at start: the server starts all the same; uploads try again and fail cleanly until it is back.
        guard (try? await ensureBucket()) != nil else { return }
        let now = Int64(time(nil))
        for upload in (try? await client.multipartUploads(prefix: options.bucketPrefix)) ?? [] {
            if let started = Self.isoSeconds(upload.initiated), now - started > Int64(Self.staleUploadSeconds) {
                try? await client.abortMultipartUpload(upload.key, uploadId: upload.uploadId)
            }
        }
    }

    func ensureBucket() async throws {
        if bucketReady.withLock({ $0 }) { return }
        try await s3 {
            if try await !client.bucketExists() { try await client.createBucket() }
        }
        bucketReady.withLock { $0 = true }
    }

    // MARK: Writing

    /// Content type, cache control, ACL, metadata and tags of a new object.
    func objectHeaders(_ file: StoredFile) -> [(String, String)] {
        var headers: [(String, String)] = [("Content-Type", file.contentType ?? "application/octet-stream")]
        if let cache = options.globalCacheControl { headers.append(("Cache-Control", cache)) }
        if let acl = options.fileAcl {
            if acl != "none" { headers.append(("x-amz-acl", acl)) }
        } else if options.directAccess {
            headers.append(("x-amz-acl", "public-read"))
        }
        // The adapter's form (one header per string value) for other readers of the bucket, and Parsley's exact one.
        if case .object(let metadata)? = file.metadata {
            for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
                if case .string(let text) = value, Self.isToken(key), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) {
                    headers.append(("x-amz-meta-" + key.lowercased(), text))
                }
            }
        }
        headers.append((Self.attributesHeader, FileNames.urlEncode(JSONWriter.string(file.attributes))))
        if case .object(let tags)? = file.tags, !tags.isEmpty {
            let pairs = tags.sorted { $0.key < $1.key }.map { ($0.key, $0.value.stringValue ?? JSONWriter.string($0.value)) }
            headers.append(("x-amz-tagging", S3Signer.canonicalQuery(pairs)))
        }
        return headers
    }

    public func create(_ file: StoredFile, maxBytes: Int, next: () async throws -> ByteBuffer?) async throws -> StoredFile {
        let key = try key(file.name)
        try await ensureBucket()
        let partSize = options.partSize
        let headers = objectHeaders(file)
        var stored = file
        var uploadId: String?
        var etags: [String] = []
        do {
            var pending = ByteBuffer()
            pending.reserveCapacity(partSize)
            var full: ByteBuffer?
            var size: Int64 = 0
            var ended = false
            while !ended {
                // The full part goes out (a child task) while the next one fills from the request.
                if full != nil, uploadId == nil {
                    let id = try await s3 { try await client.createMultipartUpload(key, headers: headers) }
                    uploadId = id
                }
                let (toSend, number, id) = (full, etags.count + 1, uploadId ?? "")
                async let sent = Self.sendPart(client, key, id, number, toSend)
                ended = try await UploadPieces.fill(&pending, upTo: partSize, size: &size, maxBytes: maxBytes, from: next)
                if let etag = try await sent { etags.append(etag) }
                full = nil
                if !ended {
                    full = pending
                    pending = ByteBuffer()
                    pending.reserveCapacity(partSize)
                }
            }
            stored.size = size
            let last = pending
            if let uploadId {
                if last.readableBytes > 0 || etags.isEmpty {
                    etags.append(try await s3 { try await client.uploadPart(key, uploadId: uploadId, number: etags.count + 1, body: last) })
                }
                try await s3 { try await client.completeMultipartUpload(key, uploadId: uploadId, etags: etags) }
            } else {
                try await s3 { try await client.put(key, body: last, headers: headers) }
            }
        } catch {
            if let uploadId {
                // Reaches S3 even though the request that went away cancelled this task (`abortMultipartUpload`).
                try? await client.abortMultipartUpload(key, uploadId: uploadId)
            }
            throw error
        }
        return stored
    }

    static func sendPart(_ client: S3Client, _ key: String, _ uploadId: String, _ number: Int, _ part: ByteBuffer?) async throws -> String? {
        guard let part else { return nil }
        do {
            return try await client.uploadPart(key, uploadId: uploadId, number: number, body: part)
        } catch let error as S3Error {
            throw FileStoreError.io(error.description)
        }
    }

    // MARK: Reading

    public func info(_ name: String) async throws -> StoredFile? {
        guard FileNames.isValidStoredName(name) else { return nil }
        let key = options.bucketPrefix + name
        guard let headers = try await s3({ try await client.head(key) }) else { return nil }
        var file = StoredFile(name: name, size: headers.first(name: "content-length").flatMap { Int64($0) } ?? 0)
        file.contentType = headers.first(name: "content-type")
        file.storeETag = headers.first(name: "etag")
        file.createdAt = headers.first(name: "last-modified").flatMap(Self.httpDateMilliseconds) ?? 0
        if let text = headers.first(name: Self.attributesHeader).flatMap(Self.percentDecode), let json = try? JSONParser.parse(text) {
            file.read(attributes: json)
        } else {
            // An object the Parse Server adapter stored: its metadata is the `x-amz-meta-*` headers.
            var metadata: [String: JSONValue] = [:]
            for header in headers where header.name.lowercased().hasPrefix("x-amz-meta-") {
                metadata[String(header.name.lowercased().dropFirst("x-amz-meta-".count))] = .string(header.value)
            }
            if !metadata.isEmpty { file.metadata = .object(metadata) }
        }
        return file
    }

    public func read(_ file: StoredFile, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws {
        guard !range.isEmpty else { return }
        let key = try key(file.name)
        let response = try await s3 { try await client.get(key, range: range) }
        if response.status == .notFound { throw FileStoreError.vanished }
        guard response.status == .partialContent || response.status == .ok else {
            let text = String(buffer: (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer())
            throw FileStoreError.io(S3Client.error(response.status.code, text).description)
        }
        var remaining = range.upperBound - range.lowerBound
        do {
            for try await chunk in response.body {
                guard remaining > 0 else { break }
                let piece = Int64(chunk.readableBytes) > remaining ? chunk.getSlice(at: chunk.readerIndex, length: Int(remaining)) ?? chunk : chunk
                remaining -= Int64(piece.readableBytes)
                try await write(piece)
            }
        } catch let error as HTTPClientError {
            throw FileStoreError.io("S3 read of \(key): \(error)")
        }
        if remaining > 0 { throw FileStoreError.vanished }
    }

    public func delete(_ name: String) async throws -> Bool {
        let key = try key(name)
        return try await s3 {
            guard try await client.head(key) != nil else { return false }
            try await client.delete(key)
            return true
        }
    }

    public func list(after: String?, limit: Int) async throws -> [String] {
        let prefix = options.bucketPrefix
        var names: [String] = []
        var token: String?
        repeat {
            let page = try await s3 { try await client.list(prefix: prefix, startAfter: after.map { prefix + $0 }, continuation: token) }
            names += page.keys.map { String($0.dropFirst(prefix.count)) }.filter(FileNames.isValidStoredName)
            token = page.next
        } while token != nil && names.count < limit
        return Array(names.prefix(limit))
    }

    /// Parse Server's S3 adapter's `getFileLocation` with `directAccess`: `baseUrl` (with the prefix unless
    /// `baseUrlDirect`), a presigned URL, `<endpoint>/<bucket>/<key>` for a custom endpoint, else the bucket on AWS.
    public func directURL(_ name: String) -> String? {
        guard options.directAccess else { return nil }
        let fileName = FileNames.urlEncode(name)
        let fileKey = S3Signer.encodePath(options.bucketPrefix) + fileName
        let presigned = options.presignedUrl ? client.presignedURL(options.bucketPrefix + name, expires: options.presignedUrlExpires) : nil
        guard let base = options.baseUrl else {
            if let presigned { return presigned }
            if options.endpoint != nil { return client.endpoint + "/" + FileNames.urlEncode(options.bucket) + "/" + fileKey }
            return "https://\(options.bucket).s3.amazonaws.com/\(fileKey)"
        }
        let url = base + "/" + (options.baseUrlDirect ? fileName : fileKey)
        guard let presigned, let q = presigned.firstIndex(of: "?") else { return url }
        return url + presigned[q...]
    }

    // MARK: Helpers

    static func isToken(_ key: String) -> Bool {
        !key.isEmpty
            && key.utf8.allSatisfy { c in (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F }
    }

    static func percentDecode(_ text: String) -> String? {
        var out: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let c = bytes.next() {
            guard c == UInt8(ascii: "%") else {
                out.append(c)
                continue
            }
            guard let h = bytes.next(), let l = bytes.next(), let v = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16) else { return nil }
            out.append(v)
        }
        return String(validating: out, as: UTF8.self)
    }

    /// `Wed, 12 Oct 2009 17:50:00 GMT` as milliseconds since 1970.
    static func httpDateMilliseconds(_ text: String) -> Int64? {
        let parts = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count >= 5, let day = Int32(parts[1]), let month = months.firstIndex(of: String(parts[2])), let year = Int32(parts[3]) else {
            return nil
        }
        let clock = parts[4].split(separator: ":").compactMap { Int32($0) }
        guard clock.count == 3 else { return nil }
        return seconds(year: year, month: Int32(month), day: day, clock: clock).map { $0 * 1000 }
    }

    /// `2024-05-01T10:20:30.000Z` as seconds since 1970.
    static func isoSeconds(_ text: String) -> Int64? {
        let digits = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int32($0) }
        guard digits.count >= 6 else { return nil }
        return seconds(year: digits[0], month: digits[1] - 1, day: digits[2], clock: Array(digits[3..<6]))
    }

    static func seconds(year: Int32, month: Int32, day: Int32, clock: [Int32]) -> Int64? {
        var t = tm()
        t.tm_year = year - 1900
        t.tm_mon = month
        t.tm_mday = day
        t.tm_hour = clock[0]
        t.tm_min = clock[1]
        t.tm_sec = clock[2]
        let s = timegm(&t)
        return s < 0 ? nil : Int64(s)
    }
}
