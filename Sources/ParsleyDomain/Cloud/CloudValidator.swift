public import ParsleyCore

/// Parse Server's built-in validator for a function or trigger (`Parse.Cloud.define(name, handler, {...})`): each
/// failure answers 142 with Parse Server's message. The master key skips it unless `validateMasterKey`.
public struct CloudValidator: Sendable {
    /// A field's rules (`fields: {name: {type, required, default, options, error}}`).
    public struct Field: Sendable {
        public enum Kind: String, Sendable { case string, number, boolean, array, object }
        public var type: Kind?
        public var required: Bool
        public var defaultValue: JSONValue?
        /// The allowed values.
        public var options: [JSONValue]?
        /// The message instead of Parse Server's.
        public var error: String?

        public init(
            type: Kind? = nil, required: Bool = false, default defaultValue: JSONValue? = nil, options: [JSONValue]? = nil, error: String? = nil
        ) {
            self.type = type
            self.required = required
            self.defaultValue = defaultValue
            self.options = options
            self.error = error
        }
    }

    /// Parse Server's validator `rateLimit` for a function: at most `requestCount` calls per `requestTimeWindow`
    /// (per IP address by default), answered 429 with `errorResponseMessage` past that.
    public struct RateLimit: Sendable, Equatable {
        public var requestTimeWindow: Duration
        public var requestCount: Int
        public var errorResponseMessage: String
        public var includeMasterKey: Bool
        public init(
            requestTimeWindow: Duration, requestCount: Int, errorResponseMessage: String = "Too many requests.", includeMasterKey: Bool = false
        ) {
            self.requestTimeWindow = requestTimeWindow
            self.requestCount = requestCount
            self.errorResponseMessage = errorResponseMessage
            self.includeMasterKey = includeMasterKey
        }
    }

    public var rateLimit: RateLimit?
    public var requireUser = false
    public var requireMaster = false
    public var requireAnyUserRoles: [String] = []
    public var requireAllUserRoles: [String] = []
    /// Keys the signed-in user must have set.
    public var requireUserKeys: [String] = []
    public var fields: [String: Field] = [:]
    /// The master key skips the handler too.
    public var skipWithMasterKey = false
    public var validateMasterKey = false

    public init(
        requireUser: Bool = false, requireMaster: Bool = false, requireAnyUserRoles: [String] = [], requireAllUserRoles: [String] = [],
        requireUserKeys: [String] = [], fields: [String: Field] = [:], skipWithMasterKey: Bool = false, validateMasterKey: Bool = false,
        rateLimit: RateLimit? = nil
    ) {
        self.rateLimit = rateLimit
        self.requireUser = requireUser
        self.requireMaster = requireMaster
        self.requireAnyUserRoles = requireAnyUserRoles
        self.requireAllUserRoles = requireAllUserRoles
        self.requireUserKeys = requireUserKeys
        self.fields = fields
        self.skipWithMasterKey = skipWithMasterKey
        self.validateMasterKey = validateMasterKey
    }

    static func failed(_ message: String) -> ParseError { ParseError(.validationError, message) }

    /// Checks `values` (a function's params or the object being saved) and the caller; returns the values with
    /// defaults filled in. `roles` gives the caller's role names when a role rule needs them.
    func check(_ values: [String: JSONValue], caller: CloudCaller, roles: () async throws -> [String]) async throws -> [String: JSONValue] {
        if caller.master && !validateMasterKey { return values }
        let hasUser = caller.user != nil
        if (requireUser || !requireAnyUserRoles.isEmpty || !requireAllUserRoles.isEmpty) && !hasUser {
            throw Self.failed("Validation failed. Please login to continue.")
        }
        if requireMaster && !caller.master {
            throw Self.failed("Validation failed. Master key is required to complete this request.")
        }
        var values = values
        for key in fields.keys.sorted() {
            let rule = fields[key]!  // iterating its keys
            if let d = rule.defaultValue, values[key] == nil || values[key] == .null { values[key] = d }
            let value = values[key]
            if rule.required, value == nil || value == .null {
                throw Self.failed(rule.error ?? "Validation failed. Please specify data for \(key).")
            }
            guard let value, value != .null else { continue }
            if let type = rule.type, Self.kind(of: value) != type {
                throw Self.failed(rule.error ?? "Validation failed. Invalid type for \(key). Expected: \(type.rawValue)")
            }
            if let options = rule.options, !options.contains(value) {
                let shown = options.map { $0.stringValue ?? JSONWriter.string($0) }.joined(separator: ", ")
                throw Self.failed(rule.error ?? "Validation failed. Invalid option for \(key). Expected: \(shown)")
            }
        }
        if !requireAnyUserRoles.isEmpty || !requireAllUserRoles.isEmpty {
            let mine = Set(try await roles())
            if !requireAnyUserRoles.isEmpty, !requireAnyUserRoles.contains(where: mine.contains) {
                throw Self.failed("Validation failed. User does not match the required roles.")
            }
            if !requireAllUserRoles.allSatisfy(mine.contains) {
                throw Self.failed("Validation failed. User does not match all the required roles.")
            }
        }
        for key in requireUserKeys {
            guard let user = caller.user else { throw Self.failed("Please login to make this request.") }
            if user[key] == nil || user[key] == .null { throw Self.failed("Validation failed. Please set data for \(key) on your account.") }
        }
        return values
    }

    /// The JavaScript type name Parse Server compares with (`typeof`, arrays apart).
    static func kind(of value: JSONValue) -> Field.Kind? {
        switch value {
        case .string: return .string
        case .int, .double: return .number
        case .bool: return .boolean
        case .array: return .array
        case .object: return .object
        case .null: return nil
        }
    }
}
