public import Logging
public import ParsleyCore

/// Parse Server's `logLevels`: the level of the lines cloud code's triggers and functions log (nil: `silent`, not
/// logged). The lines name the trigger or function, the class and the user, never the objects or parameters (they
/// may hold passwords and other private data).
public struct CloudLogLevels: Sendable, Equatable {
    /// `afterSave`, `afterDelete`, `afterFind`, `afterLogin`, `afterLogout` (logged as they run).
    public var triggerAfter: Logger.Level? = .info
    /// `beforeSave`, `beforeDelete`, `beforeFind`, `beforeLogin`, `beforePasswordResetRequest` that succeeded.
    public var triggerBeforeSuccess: Logger.Level? = .info
    /// The same when they failed (the request answers the error).
    public var triggerBeforeError: Logger.Level? = .error
    public var cloudFunctionSuccess: Logger.Level? = .info
    public var cloudFunctionError: Logger.Level? = .error

    public init() {}

    /// Parse Server's keys, for the option's parser.
    public static let keys = ["triggerAfter", "triggerBeforeSuccess", "triggerBeforeError", "cloudFunctionSuccess", "cloudFunctionError"]

    public subscript(key: String) -> Logger.Level? {
        get {
            switch key {
            case "triggerAfter": return triggerAfter
            case "triggerBeforeSuccess": return triggerBeforeSuccess
            case "triggerBeforeError": return triggerBeforeError
            case "cloudFunctionSuccess": return cloudFunctionSuccess
            default: return cloudFunctionError
            }
        }
        set {
            switch key {
            case "triggerAfter": triggerAfter = newValue
            case "triggerBeforeSuccess": triggerBeforeSuccess = newValue
            case "triggerBeforeError": triggerBeforeError = newValue
            case "cloudFunctionSuccess": cloudFunctionSuccess = newValue
            default: cloudFunctionError = newValue
            }
        }
    }
}

extension CloudRuntime {
    /// Runs a trigger (`body`), logging it as Parse Server does: an after-trigger as it starts, a before-trigger with
    /// its outcome.
    func logged<T>(_ name: TriggerName, _ className: String, auth: Auth, _ body: () async throws -> T) async throws -> T {
        let user = auth.userId ?? "undefined"
        let metadata: Logger.Metadata = ["className": "\(className)", "triggerType": "\(name.rawValue)", "user": "\(user)"]
        if name.rawValue.hasPrefix("after") {
            if let level = logLevels.triggerAfter {
                logger.log(level: level, "\(name.rawValue) triggered for \(className) for user \(user)", metadata: metadata)
            }
            return try await body()
        }
        do {
            let result = try await body()
            if let level = logLevels.triggerBeforeSuccess {
                logger.log(level: level, "\(name.rawValue) triggered for \(className) for user \(user)", metadata: metadata)
            }
            return result
        } catch {
            if let level = logLevels.triggerBeforeError {
                var metadata = metadata
                metadata["error"] = "\(JSONWriter.string(Self.parseError(error).json))"
                logger.log(level: level, "\(name.rawValue) failed for \(className) for user \(user)", metadata: metadata)
            }
            throw error
        }
    }

    /// Runs a cloud function (`body`) and logs its outcome.
    func loggedFunction(_ name: String, auth: Auth, _ body: () async throws -> JSONValue) async throws -> JSONValue {
        let user = auth.userId ?? "undefined"
        let metadata: Logger.Metadata = ["functionName": "\(name)", "user": "\(user)"]
        do {
            let result = try await body()
            if let level = logLevels.cloudFunctionSuccess {
                logger.log(level: level, "Ran cloud function \(name) for user \(user)", metadata: metadata)
            }
            return result
        } catch {
            if let level = logLevels.cloudFunctionError {
                var metadata = metadata
                metadata["error"] = "\(JSONWriter.string(Self.parseError(error).json))"
                logger.log(level: level, "Failed running cloud function \(name) for user \(user)", metadata: metadata)
            }
            throw error
        }
    }
}
