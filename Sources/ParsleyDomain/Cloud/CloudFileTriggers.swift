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
}

extension CloudRuntime {
    /// Runs the file trigger `name`, if registered. Before-triggers return the file with what they changed and
    /// throw to refuse; after-triggers only log their failures.
    /// A webhook on class `@File` takes precedence over the Swift handler; `url` is the file's address for it.
    public func fileTrigger(_ name: TriggerName, _ file: StoredFile, declaredSize: Int64? = nil, url: String? = nil, auth: Auth) async throws
        -> StoredFile
    {
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
