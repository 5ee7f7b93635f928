/// What a create or update does to one field (`"score": 5` is `.set(5)`, `{"__op":"Increment"}` is `.increment`).
public enum FieldOperation: Sendable, Equatable {
    case set(JSONValue)
    case delete
    case increment(JSONValue)
    case add([JSONValue])
    case addUnique([JSONValue])
    case remove([JSONValue])
    case relation(add: [Pointer], remove: [Pointer])

    /// The schema type this operation implies, if any.
    public func impliedType() throws(ParseError) -> FieldType? {
        switch self {
        case .set(let v): return try ParseValue.inferType(v)
        case .delete: return nil
        case .increment: return .number
        case .add, .addUnique, .remove: return .array
        case .relation(let add, let remove): return (add.first ?? remove.first).map { .relation($0.className) }
        }
    }

    /// Whether the update response echoes the field's new value (Increment/Add/AddUnique/Remove do).
    public var echoesResult: Bool {
        switch self {
        case .increment, .add, .addUnique, .remove: return true
        default: return false
        }
    }

    /// The value an operation produces on a field that has no value yet (create, or missing field).
    public var valueOnEmpty: JSONValue? {
        switch self {
        case .set(let v): return v
        case .delete, .relation: return nil
        case .increment(let amount): return amount
        case .add(let items), .addUnique(let items): return .array(Self.unique(items, keepDuplicates: self.isAdd))
        case .remove: return .array([])
        }
    }

    var isAdd: Bool {
        if case .add = self { return true }
        return false
    }

    static func unique(_ items: [JSONValue], keepDuplicates: Bool) -> [JSONValue] {
        if keepDuplicates { return items }
        var seen = Set<JSONValue>()
        return items.filter { seen.insert($0.parseCanonical).inserted }
    }

    /// Applies an array operation to a current value (read-modify-write inside the single writer).
    public func applyArrayOperation(to current: JSONValue?) throws(ParseError) -> JSONValue {
        var array: [JSONValue]
        switch current {
        case nil, .null?: array = []
        case .array(let a)?: array = a
        default: throw ParseError(.incorrectType, "Operation requires an array field")
        }
        switch self {
        case .add(let items): array.append(contentsOf: items)
        // Sets of canonical forms: linear in the sizes of the array and the list, however long both are.
        case .addUnique(let items):
            var present = Set(array.map(\.parseCanonical))
            for item in items where present.insert(item.parseCanonical).inserted { array.append(item) }
        case .remove(let items):
            let removed = Set(items.map(\.parseCanonical))
            array.removeAll { removed.contains($0.parseCanonical) }
        default: break
        }
        return .array(array)
    }
}

/// The parsed body of a create or update: field paths with their operations, and the ACL if one was sent.
public struct ObjectPatch: Sendable, Equatable {
    public var operations: [(path: FieldPath, operation: FieldOperation)]
    /// `.some(nil)` means the body set `"ACL": null` (public again); nil means untouched.
    public var acl: ACL??

    public init(operations: [(path: FieldPath, operation: FieldOperation)] = [], acl: ACL?? = nil) {
        self.operations = operations
        self.acl = acl
    }

    public static func == (a: ObjectPatch, b: ObjectPatch) -> Bool {
        a.acl == b.acl && a.operations.count == b.operations.count
            && zip(a.operations, b.operations).allSatisfy { $0.path == $1.path && $0.operation == $1.operation }
    }

    public func operation(for field: String) -> FieldOperation? {
        operations.first { $0.path.field == field && $0.path.subpath.isEmpty }?.operation
    }
}
