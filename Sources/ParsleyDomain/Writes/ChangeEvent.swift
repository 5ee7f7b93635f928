public import ParsleyCore
public import ParsleyStorage

/// One committed object write, as after-commit consumers (LiveQuery, push, after-hooks, caches) receive it,
/// in this process or another on the same database.
public struct ChangeEvent: Sendable, Equatable, ChangePayload {
    public enum Operation: String, Sendable {
        case create, update, delete
    }

    public var className: String
    public var operation: Operation
    public var objectId: String
    /// The object before the write (update, delete), as stored, without internal fields.
    public var original: [String: JSONValue]?
    /// The object after the write (create, update), as stored, without internal fields.
    public var object: [String: JSONValue]?
    /// Who wrote: the user (if any), whether with the master key, from which installation.
    public var userId: String?
    public var isMaster: Bool
    public var installationId: String?
    /// The writing request's `X-Parse-Request-Id`, when it sent one.
    public var requestId: String?
    /// When the write committed its change (the object's `updatedAt` for creates and updates).
    public var time: ParseDate
    /// The server process that wrote (`ChangeFeed.origin`): after-triggers run there only, once.
    public var origin: String?
    /// The writing request's cloud context, address and headers (set when cloud code runs after-triggers).
    public var context: [String: JSONValue]?
    public var ip: String?
    public var headers: [String: String]?
    /// Whether after-triggers run for this write (cloud code's own writes may opt out).
    public var runsTriggers = true

    public init(
        className: String, operation: Operation, objectId: String, original: [String: JSONValue]?, object: [String: JSONValue]?,
        userId: String?, isMaster: Bool, installationId: String?, requestId: String? = nil, time: ParseDate
    ) {
        self.requestId = requestId
        self.className = className
        self.operation = operation
        self.objectId = objectId
        self.original = original
        self.object = object
        self.userId = userId
        self.isMaster = isMaster
        self.installationId = installationId
        self.time = time
    }

    /// The text events travel as between processes.
    public var text: String { JSONWriter.string(json) }

    /// The form events travel in between processes.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "className": .string(className), "op": .string(operation.rawValue), "objectId": .string(objectId),
            "master": .bool(isMaster), "time": .string(time.iso),
        ]
        if let original { o["original"] = .object(original) }
        if let object { o["object"] = .object(object) }
        if let userId { o["user"] = .string(userId) }
        if let installationId { o["installationId"] = .string(installationId) }
        if let requestId { o["requestId"] = .string(requestId) }
        if let origin { o["origin"] = .string(origin) }
        if let context { o["context"] = .object(context) }
        if let ip { o["ip"] = .string(ip) }
        if let headers { o["headers"] = .object(headers.mapValues(JSONValue.string)) }
        if !runsTriggers { o["noTriggers"] = true }
        return .object(o)
    }

    public init?(json: JSONValue) {
        guard let className = json["className"]?.stringValue, let op = json["op"]?.stringValue.flatMap(Operation.init(rawValue:)),
            let objectId = json["objectId"]?.stringValue, let iso = json["time"]?.stringValue, let time = ParseDate(iso: iso)
        else { return nil }
        self.init(
            className: className, operation: op, objectId: objectId, original: json["original"]?.objectValue, object: json["object"]?.objectValue,
            userId: json["user"]?.stringValue, isMaster: json["master"]?.boolValue ?? false, installationId: json["installationId"]?.stringValue,
            requestId: json["requestId"]?.stringValue, time: time)
        origin = json["origin"]?.stringValue
        context = json["context"]?.objectValue
        ip = json["ip"]?.stringValue
        headers = json["headers"]?.objectValue?.compactMapValues(\.stringValue)
        runsTriggers = json["noTriggers"]?.boolValue != true
    }
}
