import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ParsleyCore
import ParsleyDomain

/// `/files`: uploads stream the request body straight into the `FileStore` and downloads stream the store's
/// chunks out, so neither holds a whole file in memory. They are routes of their own on the router (ParseRoutes),
/// outside the Parse call middleware: no JSON body is collected, and they authenticate the request themselves.
///
/// - `POST /files/:filename`: raw bytes with their `Content-Type`, or the JS SDK's JSON form (no app id
///   header; `{"base64":…,"_ContentType":…,"_ApplicationId":…,"fileData":{"metadata":…,"tags":…}}`).
/// - `GET|HEAD /files/:appId/:name`: no credentials; `Range` (206/416), `ETag`/`If-None-Match` (304).
/// - `GET /files/:appId/metadata/:name`: `{"metadata":{…}}`, or `{}` for no file.
/// - `DELETE /files/:name`: master key only.
extension ParseTransport {
    func files(_ request: Request, segments: [String], clientAddress: String?) async throws -> Response {
        let service = api.services.files
        switch request.method {
        case .get, .head:
            if segments.count == 4, segments[2] == "metadata" { return try await fileMetadata(service, appId: segments[1], name: segments[3]) }
            guard segments.count == 3 else { throw RouteNotFound() }
            return try await download(service, request, appId: segments[1], name: segments[2], clientAddress: clientAddress)
        case .post:
            guard segments.count >= 2 else { throw ParseError(.invalidFileName, "Filename not provided.") }
            // `/files/a/b`: a name with a path separator.
            guard segments.count == 2 else { throw ParseError(.invalidFileName, "Filename contains invalid characters.") }
            return try await upload(service, request, filename: segments[1], clientAddress: clientAddress)
        case .delete:
            guard segments.count == 2 else { throw RouteNotFound() }
            let auth = try await authenticate(request.headers, [:], ignoresSession: false, clientAddress: clientAddress)
            guard auth.isMaster else { throw AccessDenied.masterKeyRequired }
            try Self.refuseReadOnly(auth, "delete")
            let cloud = api.services.cloud
            let file = (try? await service.info(segments[1])) ?? nil
            let url = service.url(mountURL: mountURL(request), name: segments[1])
            if let file { _ = try await cloud.fileTrigger(.beforeDelete, file, url: url, auth: auth) }
            try await service.delete(segments[1])
            if let file { _ = try await cloud.fileTrigger(.afterDelete, file, url: url, auth: auth) }
            return Self.json(200, [:])
        default:
            throw RouteNotFound()
        }
    }

    // MARK: Upload

    func upload(_ service: FileService, _ request: Request, filename: String, clientAddress: String?) async throws -> Response {
        let contentLength = request.headers[.contentLength].flatMap { Int($0) }
        let stored: StoredFile
        do {
            if request.headers[Self.applicationId] == nil {
                stored = try await uploadJSON(service, request, filename: filename, clientAddress: clientAddress)
            } else {
                let auth = try await authenticate(request.headers, [:], ignoresSession: false, clientAddress: clientAddress)
                try Self.refuseReadOnly(auth, "create")
                let limit = try Self.uploadLimit(request.headers[Self.uploadMaxSize], auth: auth)
                var file = try service.prepareUpload(
                    filename: filename, contentType: request.headers[.contentType], by: try await uploader(auth))
                file = try await api.services.cloud.fileTrigger(.beforeSave, file, declaredSize: contentLength.map(Int64.init), auth: auth)
                let body = BodyReader(request.body.makeAsyncIterator())
                let stall = options.files.uploadStallTimeout
                stored = try await service.upload(file, expectedLength: contentLength, maxBytes: limit) {
                    do {
                        return try await body.next(within: stall)
                    } catch {
                        throw FileStoreError.incomplete  // the connection broke mid-body, or the client stalled
                    }
                }
                _ = try await api.services.cloud.fileTrigger(.afterSave, stored, url: fileURL(request, stored), auth: auth)
            }
        } catch FileStoreError.tooLarge(let limit) {
            return Self.json(413, ["code": 130, "error": .string("File is larger than the maximum upload size of \(limit) bytes.")])
        } catch FileStoreError.incomplete {
            throw ParseError(.fileSaveError, "The upload was interrupted.")
        } catch FileStoreError.io(let reason) {
            // The store is unreachable or refused the file (S3 down): Parse's file-save error; the reason is logged.
            Logger(label: "parsley.files").error("could not store \(filename): \(reason)")
            throw ParseError(.fileSaveError, "Could not store file.")
        }
        let url = service.url(mountURL: mountURL(request), name: stored.name)
        var headers = Self.baseHeaders
        headers[.location] = url
        let body: JSONValue = ["url": .string(url), "name": .string(stored.name)]
        return Response(status: .created, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(body))))
    }

    /// The JS SDK's form: credentials, content type and base64 bytes in a JSON body.
    func uploadJSON(_ service: FileService, _ request: Request, filename: String, clientAddress: String?) async throws -> StoredFile {
        let limit = options.maxRequestBytes / 3 * 4 + 64 * 1024
        let bytes: ByteBuffer
        do {
            bytes = try await request.body.collect(upTo: limit)
        } catch {
            throw FileStoreError.tooLarge(options.maxRequestBytes)
        }
        guard case .object(let body)? = try? bytes.withUnsafeReadableBytes({ try JSONParser.parse($0) }) else {
            throw AccessDenied.unauthorized
        }
        var credentials: [String: String] = [:]
        for key in ["_ApplicationId", "_JavaScriptKey", "_MasterKey", "_SessionToken", "_InstallationId", "_ClientVersion", "_ContentType"] {
            if case .string(let v)? = body[key] { credentials[key] = v }
        }
        let auth = try await authenticate(request.headers, credentials, ignoresSession: false, clientAddress: clientAddress)
        try Self.refuseReadOnly(auth, "create")
        var file = try service.prepareUpload(
            filename: filename, contentType: credentials["_ContentType"] ?? request.headers[.contentType], by: try await uploader(auth))
        if case .object(let fileData)? = body["fileData"] {
            if case .object? = fileData["metadata"] { file.metadata = fileData["metadata"] }
            if case .object? = fileData["tags"] { file.tags = fileData["tags"] }
        }
        guard case .string(var base64)? = body["base64"] else { throw ParseError(.fileSaveError, "Invalid file upload.") }
        // A data URI (`data:image/png;base64,....`) as the SDK may pass it through.
        if base64.hasPrefix("data:"), let comma = base64.firstIndex(of: ",") { base64 = String(base64[base64.index(after: comma)...]) }
        guard let decoded = FileService.decodeBase64(base64) else { throw ParseError(.fileSaveError, "Invalid file upload.") }
        return try await storeWhole(service, request, file, bytes: decoded, auth: auth)
    }

    /// Stores a file whose bytes are all in memory (the JS SDK's base64 form, GraphQL's `createFile`): its
    /// `beforeSave` file trigger, the store under the size limit, then `afterSave`.
    func storeWhole(_ service: FileService, _ request: Request, _ file: StoredFile, bytes: ByteBuffer, auth: Auth) async throws -> StoredFile {
        let file = try await api.services.cloud.fileTrigger(.beforeSave, file, declaredSize: Int64(bytes.readableBytes), auth: auth)
        var pending: ByteBuffer? = bytes
        let stored = try await service.upload(file, expectedLength: nil) {
            defer { pending = nil }
            return pending
        }
        return try await api.services.cloud.fileTrigger(.afterSave, stored, url: fileURL(request, stored), auth: auth)
    }

    /// `X-Parse-Upload-Max-Size` (Parse Server 9.5's per-file `maxUploadSize`, as the JS SDK's `Parse.File` option
    /// sends it for buffer and stream uploads): the upload's own size limit (`50mb`, `512kb`, `1gb` or bytes), for the
    /// master key only (119 otherwise); an unreadable value is 130.
    static func uploadLimit(_ value: String?, auth: Auth) throws(ParseError) -> Int? {
        guard let value else { return nil }
        guard auth.isMaster else {
            throw ParseError.sanitized(.operationForbidden, "A per-file maxUploadSize requires the master key.")
        }
        let text = value.filter { $0 != " " }.lowercased()
        let units: [(String, Int)] = [("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10), ("b", 1)]
        let (digits, scale) = units.first { text.hasSuffix($0.0) }.map { (String(text.dropLast($0.0.count)), $0.1) } ?? (text, 1)
        guard let n = Int(digits), n > 0, n <= Int.max / scale else {
            throw ParseError(.fileSaveError, "Invalid maxUploadSize: \(value).")
        }
        return n * scale
    }

    /// The kind of caller, for `fileUpload`: anonymous users are those whose `authData` has `anonymous`.
    func uploader(_ auth: Auth) async throws -> FileService.Uploader {
        if auth.isMaster { return .master }
        guard let userId = auth.userId else { return .publicClient }
        let rules = options.files.upload
        if rules.enableForAnonymousUser == rules.enableForAuthenticatedUser { return .user }
        let user = try? await api.queries.get("_User", objectId: userId, FindOptions(), auth: .master)
        if let anonymous = user?["authData"]?["anonymous"], !anonymous.isNull { return .anonymousUser }
        return .user
    }

    // MARK: Download

    func download(_ service: FileService, _ request: Request, appId: String, name: String, clientAddress: String?) async throws -> Response {
        guard appId == options.applicationId else { return Self.json(403, ["code": 119, "error": "Invalid application ID."]) }
        guard let file = try await service.info(name) else { return Self.notFound() }
        var headers = Self.baseHeaders
        switch await findTriggers(file, request, service: service, clientAddress: clientAddress) {
        case .failure(let error): return Self.json(403, error.answered(sanitize: options.enableSanitizedErrorResponse).json)
        case .success(let answer):
            for (name, value) in answer.headers { if let field = HTTPField.Name(name) { headers[field] = value } }
            if answer.forceDownload { headers[.contentDisposition] = "attachment;filename=\(file.name)" }
        }
        let type = FileService.servedType(file)
        headers[.contentType] = type
        if FileService.isActiveContent(type) { headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; sandbox" }
        headers[.eTag] = file.etag
        headers[.acceptRanges] = "bytes"
        headers[Self.contentTypeOptions] = "nosniff"
        if let match = request.headers[.ifNoneMatch], match == file.etag || match == "*" || match.contains(file.etag) {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        if request.method != .head {
            do {
                // An encrypted file is authenticated before the status goes out (a wrong encryptionKey is a 404).
                try await service.store.check(file)
            } catch FileStoreError.unreadable {
                Logger(label: "parsley.files").error("could not decrypt \(name): wrong encryptionKey, or the file was stored without encryption")
                return Self.notFound()
            } catch FileStoreError.vanished {
                return Self.notFound()
            }
        }
        var status = HTTPResponse.Status.ok
        var range: Range<Int64> = 0..<file.size
        if let header = request.headers[.range] {
            switch Self.byteRange(header, size: file.size) {
            case .whole: break
            case .unsatisfiable:
                headers[.contentRange] = "bytes */\(file.size)"
                headers[.contentType] = "text/plain"
                return Response(status: .rangeNotSatisfiable, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "Range not satisfiable.")))
            case .partial(let r):
                status = .partialContent
                range = r
                headers[.contentRange] = "bytes \(r.lowerBound)-\(r.upperBound - 1)/\(file.size)"
            }
        }
        headers[.contentLength] = String(range.count)
        if request.method == .head || range.isEmpty { return Response(status: status, headers: headers) }
        let (store, bytes) = (service.store, range)
        let length = Int(range.count)
        return Response(
            status: status, headers: headers,
            body: ResponseBody(contentLength: length) { writer in
                try await store.read(file, range: bytes) { chunk in try await writer.write(chunk) }
                try await writer.finish(nil)
            })
    }

    /// `beforeFind` and `afterFind(Parse.File)` of a download (Swift cloud code or webhooks on `@File`), as the
    /// request's caller (its session token or keys, when it sends them; else the public). A refusal is answered 403
    /// with the error's code and message, as Parse Server's files router does.
    func findTriggers(_ file: StoredFile, _ request: Request, service: FileService, clientAddress: String?) async -> Result<
        FileFindAnswer, ParseError
    > {
        let cloud = api.services.cloud
        guard cloud.hasFileFindTriggers() else { return .success(FileFindAnswer()) }
        var auth = Auth(isMaster: false)
        if request.headers[Self.applicationId] != nil,
            let caller = try? await authenticate(request.headers, [:], ignoresSession: false, clientAddress: clientAddress)
        {
            auth = caller
        }
        let url = service.url(mountURL: mountURL(request), name: file.name)
        var answer = FileFindAnswer()
        do {
            try await cloud.fileFindTrigger(.beforeFind, file, url: url, auth: auth, answer: &answer)
            try await cloud.fileFindTrigger(.afterFind, file, url: url, auth: auth, answer: &answer)
        } catch let error as ParseError {
            return .failure(error)
        } catch {
            return .failure(ParseError(.scriptFailed, "Could not find file: \(file.name)."))
        }
        return .success(answer)
    }

    func fileMetadata(_ service: FileService, appId: String, name: String) async throws -> Response {
        guard appId == options.applicationId else { return Self.json(403, ["code": 119, "error": "Invalid application ID."]) }
        guard let file = try await service.info(name) else { return Self.json(200, [:]) }
        return Self.json(200, ["metadata": file.metadata ?? [:]])
    }

    static func notFound() -> Response {
        var headers = baseHeaders
        headers[.contentType] = "text/plain"
        return Response(status: .notFound, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "File not found.")))
    }

    enum ByteRange: Equatable {
        case whole
        case partial(Range<Int64>)
        case unsatisfiable
    }

    /// One `bytes=` range (`a-b`, `a-`, `-n`); several ranges or other units are answered with the whole file.
    static func byteRange(_ header: String, size: Int64) -> ByteRange {
        let value = header.trimmingCharacters()
        guard value.lowercased().hasPrefix("bytes="), !value.contains(",") else { return .whole }
        let spec = value.dropFirst("bytes=".count)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        let first = parts[0].trimmingCharacters(), last = parts[1].trimmingCharacters()
        if first.isEmpty {
            guard let n = Int64(last), n >= 0 else { return .whole }
            if n == 0 || size == 0 { return .unsatisfiable }
            return .partial(max(0, size - n)..<size)
        }
        guard let start = Int64(first), start >= 0 else { return .whole }
        var end = size - 1
        if !last.isEmpty {
            guard let e = Int64(last), e >= start else { return .whole }
            end = min(e, size - 1)
        }
        if start >= size { return .unsatisfiable }
        return .partial(start..<(end + 1))
    }

    static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!

    /// `publicServerURL`, else `http://<Host><mount>` (`https` over TLS, or when a proxy `trustProxy` trusts says so).
    func fileURL(_ request: Request, _ file: StoredFile) -> String {
        api.services.files.url(mountURL: mountURL(request), name: file.name)
    }

    func mountURL(_ request: Request) -> String {
        if let publicURL = options.publicServerURL {
            return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        }
        let scheme = request.head.scheme == "https" ? "https" : "http"
        return "\(scheme)://\(request.head.authority ?? "localhost")\(mountPrefix)"
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}

/// The request body of an upload, read one piece at a time with a limit on how long each piece may take.
/// `@unchecked Sendable`: the iterator is only ever used by one task at a time (the reading child task, which
/// is awaited, cancelled or not, before the next read; NIO's iterator ends its wait when cancelled, and
/// Hummingbird must not find a read still pending when it drains the rest of the body).
final class BodyReader: @unchecked Sendable {
    private var iterator: RequestBody.AsyncIterator

    init(_ iterator: RequestBody.AsyncIterator) {
        self.iterator = iterator
    }

    struct Stalled: Error {}

    /// The next piece (nil at the end). - Throws: `Stalled` when nothing arrives within `limit`.
    func next(within limit: Duration) async throws -> ByteBuffer? {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await self.iterator.next() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw Stalled()
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }
}
