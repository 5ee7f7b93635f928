import Logging
import ParsleyCore

extension CloudCode {
    /// `beforeLogin`: runs when a password log-in's credentials are right, before the session is created, with the
    /// user as `req.object`; throw to refuse the log-in (141, or the thrown Parse error).
    public mutating func beforeLogin(validator: CloudValidator? = nil, _ handler: @escaping Trigger) {
        setTrigger(.beforeLogin, "_User", validator, handler)
    }

    /// `afterLogin`: runs once the session exists, with the user as `req.object`; its failures are logged.
    public mutating func afterLogin(_ handler: @escaping Trigger) {
        setTrigger(.afterLogin, "_User", nil, handler)
    }

    /// `beforePasswordResetRequest`: runs when `/requestPasswordReset` names a known user's email, before the mail
    /// is sent, with the user as `req.object`; throw to refuse.
    public mutating func beforePasswordResetRequest(_ handler: @escaping Trigger) {
        setTrigger(.beforePasswordResetRequest, "_User", nil, handler)
    }

    /// `afterLogout`: runs after `/logout` revoked the session, with the session (`sessionToken`, `user`) as
    /// `req.object`; its failures are logged.
    public mutating func afterLogout(_ handler: @escaping Trigger) {
        setTrigger(.afterLogout, "_Session", nil, handler)
    }
}

extension CloudRuntime {
    /// The log-in hooks the user service calls: a webhook registered now (they may come and go while serving) or the
    /// Swift handler.
    var loginHooks: LoginHooks {
        var hooks = LoginHooks()
        hooks.beforeLogin = { [self] user, auth in
            try await runLoginTrigger(.beforeLogin, className: "_User", object: user, auth: auth)
        }
        hooks.afterLogin = { [self] user, auth in
            do { try await runLoginTrigger(.afterLogin, className: "_User", object: user, auth: auth) } catch {
                logger.warning("afterLogin failed", metadata: ["error": "\(error)"])
            }
        }
        hooks.beforePasswordResetRequest = { [self] user, auth in
            try await runLoginTrigger(.beforePasswordResetRequest, className: "_User", object: user, auth: auth)
        }
        hooks.sendMFASMS = { [self] function, mobile, token in
            _ = try await run(CallFunction(functionName: function, params: ["mobile": .string(mobile), "token": .string(token)]), auth: .master)
        }
        hooks.afterLogout = { [self] session, auth in
            do { try await runLoginTrigger(.afterLogout, className: "_Session", object: session, auth: auth) } catch {
                logger.warning("afterLogout failed", metadata: ["error": "\(error)"])
            }
        }
        return hooks
    }

    private func runLoginTrigger(_ name: TriggerName, className: String, object: [String: JSONValue], auth: Auth) async throws {
        if let hook = webhooks.trigger(name, className) {
            try await logged(name, className, auth: auth) { try await loginWebhook(hook, name, className: className, object: object, auth: auth) }
            return
        }
        guard let entry = code.trigger(name, className) else { return }
        try await logged(name, className, auth: auth) { try await runLoginTrigger(name, entry, className: className, object: object, auth: auth) }
    }

    private func runLoginTrigger(
        _ name: TriggerName, _ entry: CloudCode.TriggerEntry, className: String, object: [String: JSONValue], auth: Auth
    ) async throws {
        let caller = try await caller(auth)
        let cloudObject = CloudObject(className: className, objectId: object["objectId"]?.stringValue, stored: object)
        if let validator = entry.validator {
            _ = try await validate(validator, cloudObject.json, caller: caller, auth: auth)
        }
        let request = TriggerRequest(
            triggerName: name, object: cloudObject, original: nil, caller: caller, log: logger, parse: CloudAPI(runtime: self, auth: auth))
        try await Self.answering { try await entry.handler(request) }
    }
}
