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
        /// `include` (Parsley's extension, as parse-server PR 9827 sends it): pointer paths whose objects events
        /// carry, an array or a comma-separated string.
        public var include: [String]? = nil
        public var sessionToken: String?
    }

    /// A query or a write over the socket (Parsley's extension, parse-server issue 9086): `find`, `get`, `save` or
    /// `delete`, answered with a `result` frame through the same services as REST.
    public struct Operation: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case find, get, save, delete
        }
        public var kind: Kind
        public var requestId: Int
        public var className: String
        public var objectId: String?
        /// A find's or get's parameters as REST takes them (`where`, `order`, `limit`, `skip`, `keys`, `include`, ...).
        public var params: [String: JSONValue]
        /// A save's fields (and operations).
        public var object: JSONValue?
        public var sessionToken: String?
    }

    case connect(Connect)
    case subscribe(Subscribe)
    case update(Subscribe)
    case unsubscribe(requestId: Int)
    case operation(Operation)

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
            try allow(q, ["className", "where", "keys", "fields", "watch", "include"])
            let className = try string(q, "className", required: true)!
            guard let whereValue = q["where"] else { throw .bad("Missing required property: where") }
            guard case .object = whereValue else { throw .bad("Invalid type: \(typeName(whereValue)) (expected object)") }
            var keys = try names(q, "keys")
            if keys == nil { keys = try names(q, "fields") }
            let subscribe = Subscribe(
                requestId: requestId, className: className, whereValue: whereValue, keys: keys,
                watch: try names(q, "watch"), include: try paths(q, "include"), sessionToken: try string(o, "sessionToken"))
            return op == "subscribe" ? .subscribe(subscribe) : .update(subscribe)
        case "unsubscribe":
            try allow(o, ["op", "requestId"])
            return .unsubscribe(requestId: try requestId(o))
        case "find":
            // `{op, requestId, query: {className, where, order, limit, skip, keys, include, count, ...}, sessionToken}`
            try allow(o, ["op", "requestId", "query", "sessionToken"])
            let requestId = try self.requestId(o)
            guard let queryValue = o["query"] else { throw .bad("Missing required property: query") }
            guard case .object(var q) = queryValue else { throw .bad("Invalid type: \(typeName(queryValue)) (expected object)") }
            let className = try string(q, "className", required: true)!
            q["className"] = nil
            return .operation(
                Operation(
                    kind: .find, requestId: requestId, className: className, params: q, object: nil, sessionToken: try string(o, "sessionToken")))
        case "get", "save", "delete":
            // `{op, requestId, className, objectId, keys?, include?}`, `{op, requestId, className, objectId?, object}`,
            // `{op, requestId, className, objectId}`, each with an optional `sessionToken`.
            let kind = Operation.Kind(rawValue: op)!
            let extra = kind == .get ? ["keys", "include", "excludeKeys"] : kind == .save ? ["object"] : []
            try allow(o, ["op", "requestId", "className", "objectId", "sessionToken"] + extra)
            let requestId = try self.requestId(o)
            let className = try string(o, "className", required: true)!
            let objectId = try string(o, "objectId", required: kind != .save)
            var params: [String: JSONValue] = [:]
            for key in ["keys", "include", "excludeKeys"] where kind == .get { params[key] = o[key] }
            var object: JSONValue?
            if kind == .save {
                guard let value = o["object"] else { throw .bad("Missing required property: object") }
                guard case .object = value else { throw .bad("Invalid type: \(typeName(value)) (expected object)") }
                object = value
            }
            return .operation(
                Operation(
                    kind: kind, requestId: requestId, className: className, objectId: objectId, params: params.compactMapValues { $0 },
                    object: object, sessionToken: try string(o, "sessionToken")))
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

    /// Include paths: an array of strings (as `keys`) or one comma-separated string (as REST's `include=`).
    static func paths(_ o: [String: JSONValue], _ key: String) throws(LiveQueryError) -> [String]? {
        guard case .string(let text)? = o[key] else { return try names(o, key) }
        var paths: [String] = []
        for part in text.split(separator: ",") {
            let path = part.filter { !$0.isWhitespace }
            if !path.isEmpty, !paths.contains(path) { paths.append(path) }
        }
        guard !paths.isEmpty else { throw .bad("Array is too short (0), minimum 1") }
        return paths
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

    /// Code 2 for a message sent before `connect` (`action`: "subscribing", "unsubscribing", "sending find").
    static func notConnected(_ action: String) -> LiveQueryError {
        LiveQueryError(code: 2, message: "Can not find this client, make sure you connect to server before \(action)")
    }

    /// A Parse error from a service (a refused subscription): not worth reconnecting for.
    init(_ error: ParseError) {
        self.init(code: error.code.rawValue, message: error.message, reconnect: false)
    }
}
