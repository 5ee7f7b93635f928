/// A `push` option Parsley cannot use; `key` is its path in the option (`push.ios[1].token.keyId`).
public struct PushConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var key: String
    public var problem: String

    public init(key: String, _ problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(key): \(problem)" }

    /// The same error with its key placed under `prefix` (`push.android` + `firebaseServiceAccount`).
    func under(_ prefix: String) -> PushConfigurationError {
        PushConfigurationError(key: key.isEmpty ? prefix : prefix + "." + key, problem)
    }
}
