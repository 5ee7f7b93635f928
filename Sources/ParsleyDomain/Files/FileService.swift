#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

public import NIOCore
public import ParsleyCore
import ParsleyStorage

/// Parse's file rules over a `FileStore`: who may upload, names and content types, the size limit, URLs, and
/// the check that files referenced by objects exist. Cheap to build (it holds the configured store).
public struct FileService: Sendable {
    public let options: ParseServerOptions
    public let store: any FileStore
    /// Files found by earlier reference checks (nil: ask the store each time).
    let known: KnownFiles?

    /// - Parameter store: the configured store (`Adapters.fileStore(for:database:)`).
    public init(options: ParseServerOptions, store: any FileStore, known: KnownFiles? = nil) {
        self.options = options
        self.store = store
        self.known = known
    }

    /// Without a configured folder: `parsley-files/<app id>` in the system's temporary folder.
    static func defaultDirectory(_ appId: String) -> String {
        let tmp = FileEnvironment.temporaryDirectory
        let safeApp = (try? FileNames.sanitize(appId)) ?? "app"
        return tmp + "/parsley-files/" + safeApp
    }

    // MARK: Upload

    /// Who is uploading, for the `fileUpload` rules.
    public enum Uploader: Sendable {
        case master, anonymousUser, user, publicClient
    }

    /// Checks the upload rules and names the new file. Nothing is stored yet.
    /// - Throws: 130 when this kind of caller may not upload or the extension is refused; 122 for a bad name.
    public func prepareUpload(filename: String, contentType: String?, by uploader: Uploader) throws(ParseError) -> StoredFile {
        let rules = options.files.upload
        switch uploader {
        case .master: break
        case .anonymousUser where !rules.enableForAnonymousUser:
            throw ParseError(.fileSaveError, "File upload by anonymous user is disabled.")
        case .user where !rules.enableForAuthenticatedUser:
            throw ParseError(.fileSaveError, "File upload by authenticated user is disabled.")
        case .publicClient where !rules.enableForPublic:
            throw ParseError(.fileSaveError, "File upload by public is disabled.")
        default: break
        }
        var sanitized = try FileNames.sanitize(filename)
        // curl's default for `--data-binary` says nothing about the file.
        var type = contentType.map(FileNames.baseType).flatMap { $0.isEmpty || $0 == "application/x-www-form-urlencoded" ? nil : $0 }
        if case .master = uploader {} else { try checkExtension(sanitized, contentType: type) }
        if FileNames.pathExtension(sanitized) == nil, let type, let ext = FileNames.fileExtension(forType: type) {
            sanitized += "." + ext
        }
        if type == nil { type = FileNames.mimeType(forName: sanitized) }
        let name = options.files.preserveFileName ? sanitized : FileNames.unique(sanitized)
        return StoredFile(name: name, contentType: type, createdAt: ContinuousClockEpoch.millisecondsSince1970())
    }

    /// Parse Server's `fileUpload.fileExtensions`: the name's extension, else the content type's subtype, must
    /// match one of the patterns.
    func checkExtension(_ name: String, contentType: String?) throws(ParseError) {
        let patterns = options.files.upload.fileExtensions
        if patterns.contains("*") { return }
        var ext: String?
        if let e = FileNames.pathExtension(name) {
            ext = e
        } else if let contentType, let slash = contentType.firstIndex(of: "/") {
            ext = String(contentType[contentType.index(after: slash)...])
        } else {
            ext = contentType
        }
        guard let ext = ext?.filter({ $0 != " " }), !ext.isEmpty else { return }
        let allowed = patterns.contains { pattern in
            guard let regex = try? Regex(pattern) else { return false }
            return (try? regex.firstMatch(in: ext)) != nil
        }
        if !allowed { throw ParseError(.fileSaveError, "File upload of extension \(ext) is disabled.") }
    }

    /// Streams an upload into the store. An empty body stores nothing (130 `Invalid file upload.`).
    /// - Throws: `FileStoreError.tooLarge` past `maxRequestBytes`, `.incomplete` when fewer than
    ///   `expectedLength` bytes arrive, or what the body or store throws. Nothing is stored on any failure.
    ///   `metadata` and `tags` (the client's, or what a `beforeSave` file trigger set) get a body's checks first:
    ///   105 for a refused keyword, 107 for NUL.
    ///   `maxBytes` replaces `maxUploadSize` for this upload (the master key's per-file limit).
    public func upload(_ file: StoredFile, expectedLength: Int?, maxBytes: Int? = nil, next: () async throws -> ByteBuffer?) async throws
        -> StoredFile
    {
        for value in [file.metadata, file.tags] { if let value { try options.security.keywordDenylist.screen(value) } }
        let max = maxBytes ?? options.maxRequestBytes
        if let expectedLength, expectedLength > max { throw FileStoreError.tooLarge(max) }
        var first: ByteBuffer?
        while let chunk = try await next() {
            if chunk.readableBytes > 0 {
                first = chunk
                break
            }
        }
        guard let first else { throw ParseError(.fileSaveError, "Invalid file upload.") }
        var pendingFirst: ByteBuffer? = first
        var received = 0
        return try await store.create(file, maxBytes: max) {
            if let chunk = pendingFirst {
                pendingFirst = nil
                received += chunk.readableBytes
                return chunk
            }
            if let chunk = try await next() {
                received += chunk.readableBytes
                return chunk
            }
            if let expectedLength, received < expectedLength { throw FileStoreError.incomplete }
            return nil
        }
    }

    // MARK: Reading and deleting

    public func info(_ name: String) async throws -> StoredFile? {
        guard FileNames.isValidStoredName(name) else { return nil }
        return try await store.info(name)
    }

    /// - Throws: 122 for a name no file can have, 153 when there is no such file.
    public func delete(_ name: String) async throws {
        guard FileNames.isValidStoredName(name) else { throw ParseError(.invalidFileName, "Filename contains invalid characters.") }
        known?.forget(name)
        defer { known?.forget(name) }  // and a check that found it while it was being deleted
        guard try await store.delete(name) else { throw ParseError(Self.fileDeleteError, "Could not delete file.") }
    }

    static let fileDeleteError = ParseError.Code(rawValue: 153)

    /// Standard or URL-safe base64 (the JS SDK's upload form); nil when malformed.
    public static func decodeBase64(_ text: String) -> ByteBuffer? { FileBase64.decode(text) }

    /// The content type a download is served with: from the name's extension, else as uploaded.
    public static func servedType(_ file: StoredFile) -> String {
        FileNames.mimeType(forName: file.name) ?? file.contentType ?? "application/octet-stream"
    }

    /// Types a browser would run scripts in when the file is opened directly: served sandboxed.
    public static func isActiveContent(_ type: String) -> Bool {
        let base = FileNames.baseType(type)
        return base.contains("html") || base.contains("xml") || base == "text/javascript" || base == "application/javascript"
    }

    // MARK: Files in objects

    /// The public URL of a stored file: `<mount>/files/<appId>/<name>`.
    public static func url(mountURL: String, applicationId: String, name: String) -> String {
        mountURL + "/files/" + FileNames.urlEncode(applicationId) + "/" + FileNames.urlEncode(name)
    }

    /// The URL of a stored file: the store's own (S3 with `directAccess`), else `<mount>/files/<appId>/<name>`.
    public func url(mountURL: String, name: String) -> String {
        store.directURL(name) ?? Self.url(mountURL: mountURL, applicationId: options.applicationId, name: name)
    }

    /// Refuses a write whose body references a file that does not exist (the master key may reference any
    /// name, e.g. files migrated from elsewhere).
    /// - Throws: 111 `File <name> does not exist.`
    /// `names`: the body's File names when the caller collected them already (`fileNames(in:)`).
    public func checkReferences(in body: JSONValue, auth: Auth, names collected: Set<String>? = nil) async throws {
        try Self.checkFileURLs(body, allowed: options.files.upload.allowedFileUrlDomains)
        if auth.isMaster { return }
        let names = collected ?? Self.fileNames(in: body)
        for name in names.sorted() {
            let now = ContinuousClockEpoch.millisecondsSince1970()
            let seen = known?.lookup(name, now: now)
            if seen?.known == true { continue }
            guard try await info(name) != nil else { throw ParseError(.incorrectType, "File \(name) does not exist.") }
            if let seen { known?.insert(name, started: now, generation: seen.generation) }
        }
    }

    /// Parse Server 9's `fileUpload.allowedFileUrlDomains`: every File value's `url` (at any depth) must name a listed
    /// host (`*` any, `*.example.com` its subdomains); else 130 `File URL domain '<host>' is not allowed.`, and an
    /// address that is no URL 130 `Invalid file URL.` Any caller, the master key too.
    static func checkFileURLs(_ value: JSONValue, allowed: [String]) throws(ParseError) {
        guard !allowed.contains("*") else { return }
        switch value {
        case .object(let o):
            if case .string("File")? = o["__type"], case .string(let url)? = o["url"] {
                guard !url.isEmpty else { return }
                guard let host = Self.host(of: url) else { throw ParseError(.fileSaveError, "Invalid file URL.") }
                let lower = host.lowercased()
                for domain in allowed.map({ $0.lowercased() }) {
                    if lower == domain || (domain.hasPrefix("*.") && lower.hasSuffix(domain.dropFirst())) { return }
                }
                throw ParseError(.fileSaveError, "File URL domain '\(host)' is not allowed.")
            }
            for item in o.values { try checkFileURLs(item, allowed: allowed) }
        case .array(let items):
            for item in items { try checkFileURLs(item, allowed: allowed) }
        default: return
        }
    }

    /// The host of an absolute URL (`scheme://[user@]host[:port]/…`), nil when it has none.
    static func host(of url: String) -> String? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://"), let first = url.first, first.isLetter,
            url[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) })
        else { return nil }
        var authority = url[url.index(colon, offsetBy: 3)...].prefix { !"/?#".contains($0) }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
        } else {
            host = authority.prefix { $0 != ":" }
        }
        host = host.hasSuffix(".") ? host.dropLast() : host
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "\\" }) else { return nil }
        return String(host)
    }

    /// Whether a write body holds a File value (at any depth), which `checkReferences` looks up.
    /// The names of the File values in a body, at any depth.
    static func fileNames(in body: JSONValue) -> Set<String> {
        var names: Set<String> = []
        collectFiles(body, into: &names)
        return names
    }

    static func collectFiles(_ value: JSONValue, into names: inout Set<String>) {
        switch value {
        case .object(let o):
            if case .string("File")? = o["__type"], case .string(let name)? = o["name"] {
                names.insert(name)
                return
            }
            for item in o.values { collectFiles(item, into: &names) }
        case .array(let items):
            for item in items { collectFiles(item, into: &names) }
        default: return
        }
    }
}

enum FileEnvironment {
    static var temporaryDirectory: String {
        if let raw = getenv("TMPDIR"), case let dir = String(cString: raw), !dir.isEmpty {
            return dir.hasSuffix("/") ? String(dir.dropLast()) : dir
        }
        return "/tmp"
    }
}
