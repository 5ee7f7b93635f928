public import ParsleyCore
import Synchronization

/// The object a trigger sees, as Parse's `request.object`: the stored fields (for an update) with the write's
/// changes on top. A `beforeSave` may change it (`object["title"] = "…"`, `object.unset("draft")`); what it
/// changed is what is stored and echoed to the client. Changes are kept as the client sent them: a field
/// written with an operation reads as the operation's JSON (`{"__op":"Increment","amount":1}`).
public final class CloudObject: Sendable {
    public let className: String
    /// Nil for an object being created.
    public let objectId: String?
    /// The stored fields before this write (empty for a create).
    public let stored: [String: JSONValue]
    private let state: Mutex<[String: JSONValue]>

    public init(className: String, objectId: String?, stored: [String: JSONValue] = [:], changes: [String: JSONValue] = [:]) {
        self.className = className
        self.objectId = objectId
        self.stored = stored
        self.state = Mutex(changes)
    }

    /// The write's fields as they stand (what will be stored).
    public var changes: [String: JSONValue] { state.withLock { $0 } }

    /// Whether the object is being created.
    public var isNew: Bool { objectId == nil || stored.isEmpty }

    /// A field's value after this write: the change when there is one (nil for a deletion), else the stored value.
    public subscript(key: String) -> JSONValue? {
        get {
            if let change = state.withLock({ $0[key] }) {
                return Self.isDelete(change) ? nil : change
            }
            return stored[key]
        }
        set { state.withLock { $0[key] = newValue ?? ["__op": "Delete"] } }
    }

    /// A field decoded as a Swift value (nil when absent or of another type): `object["likes", as: [Pointer].self]`.
    public subscript<T: ParseDecodable>(key: String, as type: T.Type) -> T? {
        self[key].flatMap(T.init(parseJSON:))
    }

    /// Removes the field (a `Delete` operation).
    public func unset(_ key: String) { self[key] = nil }

    /// Fields this write sets or changes.
    public var dirtyKeys: [String] { state.withLock { Array($0.keys) }.sorted() }

    /// The object as Parse encodes it for webhooks and validators: `className`, `objectId` when stored, the stored
    /// fields and the changes on top.
    public var json: [String: JSONValue] {
        var o = stored
        for (k, v) in changes { o[k] = v }
        o["className"] = .string(className)
        if let objectId { o["objectId"] = .string(objectId) }
        return o
    }

    static func isDelete(_ value: JSONValue) -> Bool {
        value.objectValue?["__op"]?.stringValue == "Delete"
    }
}

/// Swift values read from Parse JSON (`CloudObject`'s and `params`' typed accessors).
public protocol ParseDecodable: Sendable {
    init?(parseJSON: JSONValue)
}

extension String: ParseDecodable {
    public init?(parseJSON json: JSONValue) {
        guard let s = json.stringValue else { return nil }
        self = s
    }
}

extension Bool: ParseDecodable {
    public init?(parseJSON json: JSONValue) {
        guard let b = json.boolValue else { return nil }
        self = b
    }
}

extension Int: ParseDecodable {
    public init?(parseJSON json: JSONValue) {
        switch json {
        case .int(let i): self = Int(i)
        case .double(let d) where d.rounded() == d && abs(d) < 9e15: self = Int(d)
        default: return nil
        }
    }
}

extension Double: ParseDecodable {
    public init?(parseJSON json: JSONValue) {
        guard let d = json.numberValue else { return nil }
        self = d
    }
}

extension Pointer: ParseDecodable {
    public init?(parseJSON json: JSONValue) {
        guard let o = json.objectValue, o["__type"]?.stringValue == "Pointer" || o["__type"]?.stringValue == "Object",
            let className = o["className"]?.stringValue, let objectId = o["objectId"]?.stringValue
        else { return nil }
        self.init(className: className, objectId: objectId)
    }
}

extension ParseDate: ParseDecodable {
    public init?(parseJSON json: JSONValue) {
        let iso = json.objectValue?["__type"]?.stringValue == "Date" ? json.objectValue?["iso"]?.stringValue : json.stringValue
        guard let iso, let date = ParseDate(iso: iso) else { return nil }
        self = date
    }
}

extension Array: ParseDecodable where Element: ParseDecodable {
    public init?(parseJSON json: JSONValue) {
        guard let list = json.arrayValue else { return nil }
        var out: [Element] = []
        out.reserveCapacity(list.count)
        for item in list {
            guard let e = Element(parseJSON: item) else { return nil }
            out.append(e)
        }
        self = out
    }
}

extension JSONValue: ParseDecodable {
    public init?(parseJSON json: JSONValue) { self = json }
}
