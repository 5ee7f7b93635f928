import ParsleyCore

/// One subscription of one connection, as checked and secured when it was made (a reference: events pass it around
/// by the thousand).
final class LiveSubscription: Sendable {
    struct Key: Hashable, Sendable {
        var clientId: String
        var requestId: Int
    }

    let key: Key
    let connection: LiveConnection
    let className: String
    /// The `where` with its sub-queries secured for the subscriber (CLP, protected fields) and `_Session`'s own-rows
    /// rule; read permission (ACL, pointer permissions) is checked per event.
    let predicate: QueryNode
    let keys: [String]?
    let watch: [String]
    /// Pointer paths whose objects events carry (`include`), read with the subscriber's rights at each event.
    let include: [String]
    /// The fields of the class the `where` and the `watch` read: none may be protected from the subscriber, at
    /// subscribe time and at each event (a CLP or role that changes later ends the subscription).
    let readFields: Set<String>
    /// The session the subscription reads as (its own token, else the connection's), nil for the master or nobody.
    let sessionToken: String?
    let userId: String?
    let isMaster: Bool
    let installationId: String?
    /// An equality the query requires (`field == value`), used to find the subscription from an object's values.
    let equality: (field: String, value: String)?

    init(
        key: Key, connection: LiveConnection, className: String, predicate: QueryNode, keys: [String]?, watch: [String], include: [String] = [],
        readFields: Set<String>, sessionToken: String?, userId: String?, isMaster: Bool, installationId: String?,
        equality: (field: String, value: String)?
    ) {
        self.key = key
        self.connection = connection
        self.className = className
        self.predicate = predicate
        self.keys = keys
        self.watch = watch
        self.include = include
        self.readFields = readFields
        self.sessionToken = sessionToken
        self.userId = userId
        self.isMaster = isMaster
        self.installationId = installationId
        self.equality = equality
    }
}

/// The subscriptions of one node, by class, indexed on an equality each requires when it has one, so that an event
/// looks only at the subscriptions whose equality its object satisfies (and those without one). Inside, each
/// subscription is a number (cheap to hash and to gather), and each distinct predicate a number too, so that an event
/// evaluates a query once however many subscribe to it.
struct SubscriptionIndex: Sendable {
    struct Entry: Sendable {
        let subscription: LiveSubscription
        let predicateId: Int
    }

    struct ClassEntry: Sendable {
        /// field -> value key -> subscriptions.
        var byEquality: [String: [String: Set<Int>]] = [:]
        /// The subscriptions without an equality, by predicate number: an event tests each distinct query once and
        /// gathers only the subscriptions of the queries that may concern it.
        var unindexed: [Int: Unindexed] = [:]
        var count = 0
    }

    /// The subscriptions of one class without an equality that share one query.
    struct Unindexed: Sendable {
        let predicate: QueryNode
        var serials: Set<Int> = []
    }

    private var entries: [Int: Entry] = [:]
    private var serials: [LiveSubscription.Key: Int] = [:]
    private var nextSerial = 0
    private var classes: [String: ClassEntry] = [:]
    /// clientId -> its subscriptions' request ids.
    private var byClient: [String: Set<Int>] = [:]
    /// Distinct predicates: their number and how many subscriptions use each.
    private var predicateIds: [QueryNode: (id: Int, uses: Int)] = [:]
    private var nextPredicateId = 0

    var count: Int { entries.count }
    var subscriptions: [LiveSubscription] { entries.values.map(\.subscription) }

    mutating func insert(_ s: LiveSubscription) {
        remove(s.key)
        let predicateId: Int
        if let known = predicateIds[s.predicate] {
            predicateId = known.id
            predicateIds[s.predicate] = (known.id, known.uses + 1)
        } else {
            nextPredicateId += 1
            predicateId = nextPredicateId
            predicateIds[s.predicate] = (predicateId, 1)
        }
        nextSerial += 1
        let serial = nextSerial
        entries[serial] = Entry(subscription: s, predicateId: predicateId)
        serials[s.key] = serial
        // Taken out while it changes: a copy still in the dictionary would make each change copy the class's whole
        // index (measured: 10,000 subscribes and disconnects went quadratic).
        var entry = classes.removeValue(forKey: s.className) ?? ClassEntry()
        if let (field, value) = s.equality {
            entry.byEquality[field, default: [:]][value, default: []].insert(serial)
        } else {
            entry.unindexed[predicateId, default: Unindexed(predicate: s.predicate)].serials.insert(serial)
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
        guard let serial = serials.removeValue(forKey: key), let removed = entries.removeValue(forKey: serial) else { return nil }
        let s = removed.subscription
        if let known = predicateIds[s.predicate] { predicateIds[s.predicate] = known.uses > 1 ? (known.id, known.uses - 1) : nil }
        if var entry = classes.removeValue(forKey: s.className) {
            if let (field, value) = s.equality {
                entry.byEquality[field]?[value]?.remove(serial)
                if entry.byEquality[field]?[value]?.isEmpty == true { entry.byEquality[field]?[value] = nil }
                if entry.byEquality[field]?.isEmpty == true { entry.byEquality[field] = nil }
            } else {
                entry.unindexed[removed.predicateId]?.serials.remove(serial)
                if entry.unindexed[removed.predicateId]?.serials.isEmpty == true { entry.unindexed[removed.predicateId] = nil }
            }
            entry.count -= 1
            if entry.count > 0 { classes[s.className] = entry }
        }
        byClient[key.clientId]?.remove(key.requestId)
        if byClient[key.clientId]?.isEmpty == true { byClient[key.clientId] = nil }
        return s
    }

    /// Whether any subscription listens to `className`.
    func listens(to className: String) -> Bool { classes[className] != nil }

    /// Every subscription whose equality the object before or after the write satisfies, and those without one whose
    /// query `mayConcern` (asked once per distinct query, with its number and the query).
    func candidates(_ className: String, objects: [[String: JSONValue]?], mayConcern: (Int, QueryNode) -> Bool) -> [Entry] {
        guard let entry = classes[className] else { return [] }
        var found: [Int] = []
        for (predicateId, group) in entry.unindexed where mayConcern(predicateId, group.predicate) { found.append(contentsOf: group.serials) }
        var seen = Set<Int>()
        for (field, byValue) in entry.byEquality {
            for object in objects {
                guard let value = object?[field] else { continue }
                for k in Self.valueKeys(value) {
                    guard let hit = byValue[k] else { continue }
                    for serial in hit where seen.insert(serial).inserted { found.append(serial) }
                }
            }
        }
        // In subscription order, so that a connection's subscriptions hear an event in the order they were made.
        found.sort()
        return found.compactMap { entries[$0] }
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
