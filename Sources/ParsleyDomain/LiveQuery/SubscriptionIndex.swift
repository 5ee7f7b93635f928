public import ParsleyCore

/// One subscription of one connection, as checked and secured when it was made.
struct LiveSubscription: Sendable {
    struct Key: Hashable, Sendable {
        var clientId: String
        var requestId: Int
    }

    var key: Key
    let connection: LiveConnection
    var className: String
    /// The `where` with its sub-queries secured for the subscriber (CLP, protected fields) and `_Session`'s own-rows
    /// rule; read permission (ACL, pointer permissions) is checked per event.
    var predicate: QueryNode
    var keys: [String]?
    var watch: [String]
    /// `include` paths (Parsley's extension: pointers resolved as a get by the subscriber would).
    var include: [String]
    /// The session the subscription reads as (its own token, else the connection's), nil for the master or nobody.
    var sessionToken: String?
    var userId: String?
    var isMaster: Bool
    var installationId: String?
    /// An equality the query requires (`field == value`), used to find the subscription from an object's values.
    var equality: (field: String, value: String)?
}

/// The subscriptions of one node, by class, indexed on an equality each requires when it has one, so that an event
/// looks only at the subscriptions whose equality its object satisfies (and those without one).
struct SubscriptionIndex: Sendable {
    struct ClassEntry: Sendable {
        /// field -> value key -> subscriptions.
        var byEquality: [String: [String: Set<LiveSubscription.Key>]] = [:]
        var unindexed: Set<LiveSubscription.Key> = []
        var count = 0
    }

    private(set) var subscriptions: [LiveSubscription.Key: LiveSubscription] = [:]
    private var classes: [String: ClassEntry] = [:]
    /// clientId -> its subscriptions' request ids.
    private var byClient: [String: Set<Int>] = [:]

    var count: Int { subscriptions.count }

    mutating func insert(_ s: LiveSubscription) {
        remove(s.key)
        subscriptions[s.key] = s
        var entry = classes[s.className] ?? ClassEntry()
        if let (field, value) = s.equality {
            entry.byEquality[field, default: [:]][value, default: []].insert(s.key)
        } else {
            entry.unindexed.insert(s.key)
        }
        entry.count += 1
        classes[s.className] = entry
        byClient[s.key.clientId, default: []].insert(s.key.requestId)
    }

    /// Removes every subscription of a client.
    mutating func removeClient(_ clientId: String) {
        for requestId in byClient[clientId] ?? [] { remove(LiveSubscription.Key(clientId: clientId, requestId: requestId)) }
        byClient[clientId] = nil
    }

    @discardableResult
    mutating func remove(_ key: LiveSubscription.Key) -> LiveSubscription? {
        guard let s = subscriptions.removeValue(forKey: key), var entry = classes[s.className] else { return nil }
        if let (field, value) = s.equality {
            entry.byEquality[field]?[value]?.remove(key)
            if entry.byEquality[field]?[value]?.isEmpty == true { entry.byEquality[field]?[value] = nil }
            if entry.byEquality[field]?.isEmpty == true { entry.byEquality[field] = nil }
        } else {
            entry.unindexed.remove(key)
        }
        entry.count -= 1
        classes[s.className] = entry.count == 0 ? nil : entry
        byClient[key.clientId]?.remove(key.requestId)
        if byClient[key.clientId]?.isEmpty == true { byClient[key.clientId] = nil }
        return s
    }

    /// Every subscription whose equality the object before or after the write satisfies, and those without one.
    func candidates(_ className: String, objects: [[String: JSONValue]?]) -> [LiveSubscription] {
        guard let entry = classes[className] else { return [] }
        var keys = entry.unindexed
        for (field, byValue) in entry.byEquality {
            for object in objects {
                guard let value = object?[field] else { continue }
                for k in Self.valueKeys(value) { if let hit = byValue[k] { keys.formUnion(hit) } }
            }
        }
        return keys.compactMap { subscriptions[$0] }
    }

    /// The keys under which an object's field value is found: the value's own, and each element's for an array
    /// (equality on an array field means membership).
    static func valueKeys(_ value: JSONValue) -> [String] {
        if case .array(let items) = value { return items.compactMap(valueKey) }
        return valueKey(value).map { [$0] } ?? []
    }

    /// A canonical key for an equality operand or stored value: strings, numbers (1 and 1.0 alike), booleans, dates,
    /// pointers; nil for anything else (such queries are not indexed).
    static func valueKey(_ value: JSONValue) -> String? {
        switch value {
        case .string(let s): return "s" + s
        case .int(let n): return "n" + String(Double(n))
        case .double(let d): return "n" + String(d)
        case .bool(let b): return b ? "bt" : "bf"
        case .object(let o):
            switch o["__type"]?.stringValue {
            case "Pointer"?:
                guard let c = o["className"]?.stringValue, let id = o["objectId"]?.stringValue else { return nil }
                return "p" + c + "/" + id
            case "Date"?:
                return o["iso"]?.stringValue.flatMap(ParseDate.init(iso:)).map { "d" + $0.iso }
            default: return nil
            }
        default: return nil
        }
    }

    /// The first top-level equality of `predicate` on a field whose type makes the key exact: strings, numbers,
    /// booleans, dates, pointers, and arrays of those (membership).
    static func equality(of predicate: QueryNode, schema: ClassSchema?) -> (field: String, value: String)? {
        switch predicate {
        case .and(let nodes):
            for n in nodes { if let hit = equality(of: n, schema: schema) { return hit } }
            return nil
        case .field(let path, .equals(let value)) where path.subpath.isEmpty:
            guard let key = valueKey(value) else { return nil }
            let type: FieldType? = path.field == "objectId" ? .string : schema?.fields[path.field]
            switch (type, key.first) {
            case (.string?, "s"), (.number?, "n"), (.boolean?, "b"), (.date?, "d"), (.pointer?, "p"), (.array?, _):
                return (path.field, key)
            default: return nil
            }
        default: return nil
        }
    }
}
