public import ParsleyCore

/// A client's LiveQuery message, checked as Parse Server's JSON schemas check them (error 1 with the schema's
/// words; 3 for an unknown `op`).
public enum LiveQueryMessage: Sendable, Equatable {
    public struct Connect: Sendable, Equatable {
        public var applicationId: String
        /// The client keys it sent, by Parse's names (`javascriptKey`, `clientKey`, `restAPIKey`, `windowsKey`).
        public var keys: [String: String]
        public var masterKey: String?
        public var sessionToken: String?
        public var installationId: String?
    }

    public struct Subscribe: Sendable, Equatable {
        public var requestId: Int
        public var className: String
        public var whereValue: JSONValue
        /// `keys` (or its older name `fields`): the fields events carry, besides the ones always kept.
        public var keys: [String]?
        public var watch: [String]?
        public var sessionToken: String?
    }

    case connect(Connect)
    case subscribe(Subscribe)
    case update(Subscribe)
    case unsubscribe(requestId: Int)

    static let clientKeyNames = ["javascriptKey", "clientKey", "restAPIKey", "windowsKey"]

    /// Parses one text frame; nil when it is not JSON at all (Parse Server ignores those).
    public static func parse(_ text: String) -> Result<LiveQueryMessage, LiveQueryError>? {
        guard let json = try? JSONParser.parse(text) else { return nil }
        do { return .success(try parse(json)) } catch { return .failure(error) }
    }

    static func parse(_ json: JSONValue) throws(LiveQueryError) -> LiveQueryMessage {
        guard case .object(let o) = json else { throw .bad("Invalid type: \(typeName(json)) (expected object)") }
        guard let opValue = o["op"] else { throw .bad("Missing required property: op") }
        guard case .string(let op) = opValue else { throw .bad("Invalid type: \(typeName(opValue)) (expected string)") }
        switch op {
        case "connect":
            try allow(o, ["op", "applicationId", "sessionToken", "installationId", "masterKey"] + clientKeyNames)
            let applicationId = try string(o, "applicationId", required: true)!
            var keys: [String: String] = [:]
            for name in clientKeyNames { if let v = try string(o, name) { keys[name] = v } }
            return .connect(
                Connect(
                    applicationId: applicationId, keys: keys, masterKey: try string(o, "masterKey"), sessionToken: try string(o, "sessionToken"),
                    installationId: try string(o, "installationId")))
        case "subscribe", "update":
            try allow(o, ["op", "requestId", "query", "sessionToken"])
            let requestId = try self.requestId(o)
            guard let queryValue = o["query"] else { throw .bad("Missing required property: query") }
            guard case .object(let q) = queryValue else { throw .bad("Invalid type: \(typeName(queryValue)) (expected object)") }
            try allow(q, ["className", "where", "keys", "fields", "watch"])
            let className = try string(q, "className", required: true)!
            guard let whereValue = q["where"] else { throw .bad("Missing required property: where") }
            guard case .object = whereValue else { throw .bad("Invalid type: \(typeName(whereValue)) (expected object)") }
            var keys = try names(q, "keys")
            if keys == nil { keys = try names(q, "fields") }
            let subscribe = Subscribe(
                requestId: requestId, className: className, whereValue: whereValue, keys: keys,
                watch: try names(q, "watch"), sessionToken: try string(o, "sessionToken"))
            return op == "subscribe" ? .subscribe(subscribe) : .update(subscribe)
        case "unsubscribe":
            try allow(o, ["op", "requestId"])
            return .unsubscribe(requestId: try requestId(o))
        default:
            throw LiveQueryError(code: 3, message: "Get unknown operation")
        }
    }

    static func allow(_ o: [String: JSONValue], _ names: [String]) throws(LiveQueryError) {
        if o.keys.contains(where: { !names.contains($0) }) { throw .bad("Additional properties not allowed") }
    }

    static func string(_ o: [String: JSONValue], _ key: String, required: Bool = false) throws(LiveQueryError) -> String? {
        guard let v = o[key] else {
            if required { throw .bad("Missing required property: \(key)") }
            return nil
        }
        guard case .string(let s) = v else { throw .bad("Invalid type: \(typeName(v)) (expected string)") }
        return s
    }

    static func requestId(_ o: [String: JSONValue]) throws(LiveQueryError) -> Int {
        guard let v = o["requestId"] else { throw .bad("Missing required property: requestId") }
        switch v {
        case .int(let n) where n >= Int64(Int32.min) && n <= Int64(Int32.max): return Int(n)
        case .double(let d) where d == d.rounded() && abs(d) < 2_147_483_648: return Int(d)
        default: throw .bad("Invalid type: \(typeName(v)) (expected number)")
        }
    }

    /// A non-empty array of unique strings, or nil when absent.
    static func names(_ o: [String: JSONValue], _ key: String) throws(LiveQueryError) -> [String]? {
        guard let v = o[key] else { return nil }
        guard case .array(let items) = v else { throw .bad("Invalid type: \(typeName(v)) (expected array)") }
        guard !items.isEmpty else { throw .bad("Array is too short (0), minimum 1") }
        var out: [String] = []
        for item in items {
            guard case .string(let s) = item else { throw .bad("Invalid type: \(typeName(item)) (expected string)") }
            guard !out.contains(s) else { throw .bad("Array items are not unique") }
            out.append(s)
        }
        return out
    }

    static func typeName(_ v: JSONValue) -> String {
        switch v {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// A LiveQuery `error` frame's content: Parse Server's LiveQuery codes (1 bad message, 2 not connected or unknown
/// subscription, 3 unknown op, 4 bad key) or a Parse error code (209, 119, 102, 141 ...).
public struct LiveQueryError: Error, Sendable, Equatable {
    public var code: Int
    public var message: String
    public var reconnect: Bool

    public init(code: Int, message: String, reconnect: Bool = true) {
        self.code = code
        self.message = message
        self.reconnect = reconnect
    }

    static func bad(_ message: String) -> LiveQueryError { LiveQueryError(code: 1, message: message) }

    /// A Parse error from a service (a refused subscription): not worth reconnecting for.
    init(_ error: ParseError) {
        self.init(code: error.code.rawValue, message: error.message, reconnect: false)
    }
}
