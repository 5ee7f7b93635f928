/// Evaluates a query against one object in memory with the semantics of the SQL compilers (the class's field types
/// decide, as in `WhereCompiler`): what LiveQuery needs to tell whether an event's object matches a subscription.
///
/// Objects are REST JSON (`{"__type":"Date"}`, pointers, arrays, `createdAt`/`updatedAt` as ISO text). What cannot
/// be decided from the object alone (sub-queries, relations, `$relatedTo`, `$text`) answers nil: the caller
/// resolves those through storage.
public struct QueryMatcher: Sendable {
    public let schema: ClassSchema

    public init(schema: ClassSchema) { self.schema = schema }

    /// Whether `object` matches `node`; nil when that needs storage.
    public func matches(_ node: QueryNode, _ object: [String: JSONValue]) -> Bool? {
        switch node {
        case .all: return true
        case .and(let nodes): return first(nodes, object, giving: false)
        case .or(let nodes): return first(nodes, object, giving: true)
        case .nor(let nodes):
            return matches(.or(nodes), object).map { !$0 }
        case .relatedTo: return nil
        case .field(let path, let condition):
            if !path.subpath.isEmpty {
                guard schema.fields[path.field] == .object else { return Self.missing(condition) }
                return Self.path(condition, Self.value(at: path.subpath, in: object[path.field]))
            }
            let type: FieldType?
            switch path.field {
            case "objectId": type = .string
            case "createdAt", "updatedAt": type = .date
            default: type = schema.fields[path.field]
            }
            guard let type else { return Self.missing(condition) }
            let value = object[path.field].flatMap { $0.isNull ? nil : $0 }
            switch type {
            case .array: return Self.array(condition, value?.arrayValue)
            case .string, .number, .boolean, .date, .pointer: return Self.scalar(condition, value, type)
            case .geoPoint, .polygon: return Self.geo(condition, value, type)
            default: return nil
            }
        }
    }

    /// `answer` as soon as one node gives it (false for `$and`, true for `$or`); otherwise the opposite, or nil when a
    /// node could not be decided.
    func first(_ nodes: [QueryNode], _ object: [String: JSONValue], giving answer: Bool) -> Bool? {
        var undecided = false
        for node in nodes {
            guard let result = matches(node, object) else {
                undecided = true
                continue
            }
            if result == answer { return answer }
        }
        return undecided ? nil : !answer
    }

    /// A field the class does not have: missing on every object.
    static func missing(_ condition: Condition) -> Bool? {
        switch condition {
        case .equals(.null), .exists(false), .notEquals, .notIn, .dontSelect, .notInQuery: return true
        case .text: return nil
        default: return false
        }
    }

    // MARK: Scalar columns

    /// A comparable form of a stored or operand value for a column of `type`; nil when it cannot be one.
    enum Key: Equatable, Comparable {
        case number(Double)
        case text(String)

        static func < (a: Key, b: Key) -> Bool {
            switch (a, b) {
            case (.number(let x), .number(let y)): return x < y
            case (.text(let x), .text(let y)): return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
            case (.number, .text): return true
            case (.text, .number): return false
            }
        }
    }

    static func key(_ value: JSONValue, _ type: FieldType) -> Key? {
        switch type {
        case .string: return value.stringValue.map(Key.text)
        case .number: return value.isNumber ? value.numberValue.map(Key.number) : nil
        // Booleans are stored as 0 and 1, so SQL also matches `true` to the number 1 (and `false` to 0).
        case .boolean:
            if let b = value.boolValue { return .number(b ? 1 : 0) }
            return value.isNumber ? value.numberValue.flatMap { $0 == 0 || $0 == 1 ? .number($0) : nil } : nil
        case .date:
            if value.parseType == "Date", let date = value["iso"]?.stringValue.flatMap(ParseDate.init(iso:)) {
                return .number(Double(date.milliseconds))
            }
            return value.stringValue.flatMap(ParseDate.init(iso:)).map { .number(Double($0.milliseconds)) }
        case .pointer(let target):
            if let pointer = Pointer(json: value) { return pointer.className == target ? .text(pointer.objectId) : nil }
            return value.stringValue.map(Key.text)
        default: return nil
        }
    }

    static func scalar(_ condition: Condition, _ value: JSONValue?, _ type: FieldType) -> Bool? {
        let stored = value.flatMap { key($0, type) }
        func equal(_ operand: JSONValue) -> Bool {
            guard let stored, let k = key(operand, type) else { return false }
            return stored == k
        }
        switch condition {
        case .equals(let v): return v.isNull ? stored == nil : equal(v)
        case .notEquals(let v): return v.isNull ? stored != nil : !equal(v)
        case .compare(let op, let v):
            guard let stored, let k = key(v, type) else { return false }
            switch op {
            case .lessThan: return stored < k
            case .lessThanOrEqual: return stored <= k
            case .greaterThan: return stored > k
            case .greaterThanOrEqual: return stored >= k
            }
        case .isIn(let values), .containedBy(let values):
            return values.contains { $0.isNull ? stored == nil : equal($0) }
        case .notIn(let values):
            let hasNull = values.contains { $0.isNull }
            if stored == nil { return !hasNull }
            return !values.contains { !$0.isNull && equal($0) }
        case .containsAll(let values):
            let distinct = Set(values)
            guard distinct.count == 1, let v = distinct.first else { return false }
            return v.isNull ? stored == nil : equal(v)
        case .exists(let b): return (stored != nil) == b
        case .regex(let r):
            // Only text matches (numbers, booleans never do); dates and pointers are text in storage: left to it.
            if type == .date || { if case .pointer = type { return true } else { return false } }() { return nil }
            guard type == .string, case .text(let text)? = stored else { return false }
            return RegexMatch.matches(text, r)
        case .containsAllMatching(let patterns):
            guard type == .string, case .text(let text)? = stored else { return false }
            return patterns.allSatisfy { RegexMatch.matches(text, $0) }
        default: return nil
        }
    }

    // MARK: Array columns

    static func sameKind(_ a: Key, _ b: Key) -> Bool {
        switch (a, b) {
        case (.number, .number), (.text, .text): return true
        default: return false
        }
    }

    /// Element equality as the SQL compilers test it: same JSON type, numbers by value.
    static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if a.isNumber, b.isNumber { return a.numberValue == b.numberValue }
        return a == b
    }

    static func array(_ condition: Condition, _ elements: [JSONValue]?) -> Bool? {
        switch condition {
        case .equals(let v):
            if v.isNull { return elements == nil }
            if case .array(let whole) = v { return elements.map { $0.count == whole.count && zip($0, whole).allSatisfy(same) } ?? false }
            return elements?.contains { same($0, v) } ?? false
        case .notEquals(let v):
            if v.isNull { return elements != nil }
            if case .array = v { return !(array(.equals(v), elements) ?? false) }
            return !(elements?.contains { same($0, v) } ?? false)
        case .compare(let op, let v):
            // Some element of the operand's own kind (numbers with numbers, text with text) compares so.
            let operand: Key
            if v.isNumber, let n = v.numberValue { operand = .number(n) } else if let t = v.stringValue { operand = .text(t) } else { return nil }
            return elements?.contains { e in
                let element: Key
                if e.isNumber, let n = e.numberValue {
                    element = .number(n)
                } else if let t = e.stringValue {
                    element = .text(t)
                } else {
                    return false
                }
                guard Self.sameKind(element, operand) else { return false }
                switch op {
                case .lessThan: return element < operand
                case .lessThanOrEqual: return element <= operand
                case .greaterThan: return element > operand
                case .greaterThanOrEqual: return element >= operand
                }
            } ?? false
        case .isIn(let values):
            return elements?.contains { e in values.contains { same(e, $0) } } ?? false
        case .notIn(let values):
            return !(elements?.contains { e in values.contains { same(e, $0) } } ?? false)
        case .containsAll(let values):
            guard !values.isEmpty, let elements else { return false }
            return values.allSatisfy { v in elements.contains { same($0, v) } }
        case .containedBy(let values):
            return !(elements?.contains { e in !values.contains { same(e, $0) } } ?? false)
        case .exists(let b): return (elements != nil) == b
        case .regex(let r):
            return elements?.contains { $0.stringValue.map { RegexMatch.matches($0, r) } ?? false } ?? false
        case .containsAllMatching(let patterns):
            guard !patterns.isEmpty, let elements else { return false }
            return patterns.allSatisfy { p in elements.contains { $0.stringValue.map { RegexMatch.matches($0, p) } ?? false } }
        default: return nil
        }
    }
}
