public import Logging
public import ParsleyCore
import Synchronization

/// What a file trigger receives (Parse's `beforeSave(Parse.File)` and the others): the file's stored name, its
/// content type and size (before a save: the declared length, when the client sent one), its `metadata` and `tags`
/// (a `beforeSave` may change them), and the caller.
public struct FileTriggerRequest: Sendable {
    public let triggerName: TriggerName
    public let file: CloudFile
    public let caller: CloudCaller
    public let log: Logger
    public let parse: CloudAPI
}

extension FileTriggerRequest: CloudRequest {}

/// A file as file triggers see it.
public final class CloudFile: Sendable {
    public let name: String
    public let contentType: String?
    /// Bytes stored, or for a `beforeSave` the declared `Content-Length` (nil when unknown).
    public let size: Int64?
    private let state: Mutex<(metadata: JSONValue?, tags: JSONValue?)>
    private let download = Mutex<(forceDownload: Bool, headers: [(String, String)])>((false, []))

    init(name: String, contentType: String?, size: Int64?, metadata: JSONValue?, tags: JSONValue?) {
        self.name = name
        self.contentType = contentType
        self.size = size
        self.state = Mutex((metadata, tags))
    }

    public var metadata: JSONValue? {
        get { state.withLock { $0.metadata } }
        set { state.withLock { $0.metadata = newValue } }
    }
    public var tags: JSONValue? {
        get { state.withLock { $0.tags } }
        set { state.withLock { $0.tags = newValue } }
    }

    /// `afterFind(Parse.File)`'s `forceDownload`: the download is answered with
    /// `Content-Disposition: attachment;filename=<name>`.
    public var forceDownload: Bool {
        get { download.withLock { $0.forceDownload } }
        set { download.withLock { $0.forceDownload = newValue } }
    }

    /// Headers a `beforeFind`/`afterFind(Parse.File)` sets on the download's answer (replacing one of the same
    /// name, case-insensitively); 141 for a name that is not a header token or a value with a line break.
    public func setHeader(_ name: String, _ value: String) throws(ParseError) {
        let token = "!#$%&'*+-.^_`|~"
        guard !name.isEmpty,
            name.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || token.unicodeScalars.contains($0))
            })
        else { throw ParseError(.scriptFailed, "Invalid header name: \(name)") }
        guard !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw ParseError(.scriptFailed, "Invalid header value for \(name)")
        }
        download.withLock { state in
            state.headers.removeAll { $0.0.lowercased() == name.lowercased() }
            state.headers.append((name, value))
        }
    }

    /// The headers set so far, in order.
    public var responseHeaders: [(String, String)] { download.withLock { $0.headers } }
}

/// What a download's `beforeFind`/`afterFind(Parse.File)` triggers decided: the headers to add and whether to
/// force a download.
public struct FileFindAnswer: Sendable {
    public var headers: [(String, String)] = []
    public var forceDownload = false
    public init() {}
}

extension CloudCode {
    public typealias FileTrigger = @Sendable (FileTriggerRequest) async throws -> Void

    /// `beforeSave(Parse.File)`: runs before an upload is stored; may change `metadata`/`tags` or throw to refuse it.
    public mutating func beforeSaveFile(_ handler: @escaping FileTrigger) { fileTriggers[.beforeSave] = handler }
    /// `afterSave(Parse.File)`: runs once the upload is stored; its failures are logged.
    public mutating func afterSaveFile(_ handler: @escaping FileTrigger) { fileTriggers[.afterSave] = handler }
    /// `beforeDelete(Parse.File)`: runs before `DELETE /files/:name`; throw to refuse.
    public mutating func beforeDeleteFile(_ handler: @escaping FileTrigger) { fileTriggers[.beforeDelete] = handler }
    /// `afterDelete(Parse.File)`: runs once the file is deleted; its failures are logged.
    public mutating func afterDeleteFile(_ handler: @escaping FileTrigger) { fileTriggers[.afterDelete] = handler }
    /// `beforeFind(Parse.File)`: runs before `GET /files/:appId/:name` streams the file; throw to refuse the download
    /// (403 with the error's code and message), or set response headers (`file.setHeader`).
    public mutating func beforeFindFile(_ handler: @escaping FileTrigger) { fileTriggers[.beforeFind] = handler }
    /// `afterFind(Parse.File)`: runs once the file is found, before its bytes go out; may throw to refuse, set headers,
    /// or set `file.forceDownload`.
    public mutating func afterFindFile(_ handler: @escaping FileTrigger) { fileTriggers[.afterFind] = handler }
}

extension CloudRuntime {
    /// Runs the file trigger `name`, if registered. Before-triggers return the file with what they changed and
    /// throw to refuse; after-triggers only log their failures.
    /// A webhook on class `@File` takes precedence over the Swift handler; `url` is the file's address for it.
    public func fileTrigger(_ name: TriggerName, _ file: StoredFile, declaredSize: Int64? = nil, url: String? = nil, auth: Auth) async throws
        -> StoredFile
    {
        try await fileTrigger(name, file, declaredSize: declaredSize, url: url, auth: auth, answer: nil)
    }

    /// Whether a download runs file find triggers (Swift or a webhook on `@File`), so the caller is worth resolving.
    public func hasFileFindTriggers() -> Bool {
        [TriggerName.beforeFind, .afterFind].contains { code.fileTriggers[$0] != nil || webhooks.trigger($0, Self.fileClassName) != nil }
    }

    /// A download's `beforeFind` or `afterFind(Parse.File)`: throws to refuse; what it set is added to `answer`.
    public func fileFindTrigger(_ name: TriggerName, _ file: StoredFile, url: String?, auth: Auth, answer: inout FileFindAnswer) async throws {
        let box = FindAnswerBox()
        _ = try await fileTrigger(name, file, declaredSize: nil, url: url, auth: auth, answer: box)
        let (headers, force) = box.value.withLock { ($0.headers, $0.forceDownload) }
        for (header, value) in headers {
            answer.headers.removeAll { $0.0.lowercased() == header.lowercased() }
            answer.headers.append((header, value))
        }
        if force { answer.forceDownload = true }
    }

    private func fileTrigger(
        _ name: TriggerName, _ file: StoredFile, declaredSize: Int64?, url: String?, auth: Auth, answer: FindAnswerBox?
    ) async throws -> StoredFile {
        let run: @Sendable (CloudFile) async throws -> Void
        if let hook = webhooks.trigger(name, Self.fileClassName) {
            run = { [self] file in try await fileWebhook(hook, name, file, url: url, auth: auth) }
        } else if let handler = code.fileTriggers[name] {
            run = { [self] file in
                try await handler(
                    FileTriggerRequest(
                        triggerName: name, file: file, caller: try await caller(auth), log: logger, parse: CloudAPI(runtime: self, auth: auth)))
            }
        } else {
            return file
        }
        let cloudFile = CloudFile(
            name: file.name, contentType: file.contentType, size: name == .beforeSave ? declaredSize : file.size, metadata: file.metadata,
            tags: file.tags)
        let outcome: Result<Void, ParseError>
        do {
            // Logged as Parse Server logs file triggers (class `Parse.File`), at the `logLevels` of its triggers.
            outcome = .success(try await logged(name, "Parse.File", auth: auth) { try await run(cloudFile) })
        } catch {
            outcome = .failure(Self.parseError(error))
        }
        if let answer {
            answer.value.withLock { $0 = (cloudFile.responseHeaders, cloudFile.forceDownload) }
        }
        if case .failure(let error) = outcome {
            guard name.isAfter else { throw error }
            logger.warning("\(name.rawValue) of a file failed", metadata: ["file": "\(file.name)", "error": "\(error.message)"])
        }
        var changed = file
        changed.metadata = cloudFile.metadata
        changed.tags = cloudFile.tags
        return changed
    }
}

/// Carries what a find trigger set out of `fileTrigger`.
final class FindAnswerBox: Sendable {
    let value = Mutex<(headers: [(String, String)], forceDownload: Bool)>(([], false))
}
