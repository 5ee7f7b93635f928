public import Logging
import ParsleyCore

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
        return try await logged(
            metadata, success: (logLevels.triggerBeforeSuccess, "\(name.rawValue) triggered for \(className) for user \(user)"),
            failure: (logLevels.triggerBeforeError, "\(name.rawValue) failed for \(className) for user \(user)"), body)
    }

    /// Runs a cloud function (`body`) and logs its outcome.
    func loggedFunction(_ name: String, auth: Auth, _ body: () async throws -> JSONValue) async throws -> JSONValue {
        let user = auth.userId ?? "undefined"
        let metadata: Logger.Metadata = ["functionName": "\(name)", "user": "\(user)"]
        return try await logged(
            metadata, success: (logLevels.cloudFunctionSuccess, "Ran cloud function \(name) for user \(user)"),
            failure: (logLevels.cloudFunctionError, "Failed running cloud function \(name) for user \(user)"), body)
    }

    /// Runs `body`, then logs `success` or, with the Parse error it threw, `failure` (each at its level; nil: silent).
    private func logged<T>(
        _ metadata: Logger.Metadata, success: (Logger.Level?, Logger.Message), failure: (Logger.Level?, Logger.Message),
        _ body: () async throws -> T
    ) async throws -> T {
        do {
            let result = try await body()
            if let level = success.0 { logger.log(level: level, success.1, metadata: metadata) }
            return result
        } catch {
            if let level = failure.0 {
                var metadata = metadata
                metadata["error"] = "\(JSONWriter.string(Self.parseError(error).json))"
                logger.log(level: level, failure.1, metadata: metadata)
            }
            throw error
        }
    }
}
