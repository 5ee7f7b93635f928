/// A JSON document as Parse sees it.
///
/// Integers and floating-point numbers are kept apart (`int` vs `double`) so that a number written as `7`
/// comes back as `7`, never `7.0`. Objects are unordered; the writer emits keys sorted, which makes the text
/// form canonical (equal values serialise to equal bytes).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The value as a `Double` when it is any JSON number.
    public var numberValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The value as an integer when it is a JSON number with no fractional part.
    public var integerValue: Int? {
        switch self {
        case .int(let i): return Int(exactly: i)
        case .double(let d): return d.rounded() == d ? Int(exactly: d) : nil
        default: return nil
        }
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var isNumber: Bool {
        switch self {
        case .int, .double: return true
        default: return false
        }
    }

    /// `__type` of a typed Parse value (`{"__type":"Pointer",...}`), if any.
    public var parseType: String? {
        if case .object(let o) = self, case .string(let t)? = o["__type"] { return t }
        return nil
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var o: [String: JSONValue] = [:]
        o.reserveCapacity(elements.count)
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
}

extension JSONValue {
    /// Numeric equality across `int` and `double` (Parse numbers are one type).
    public func parseEquals(_ other: JSONValue) -> Bool {
        switch (self, other) {
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return Double(a) == b
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.parseEquals($1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (k, v) in a {
                guard let w = b[k], v.parseEquals(w) else { return false }
            }
            return true
        default: return self == other
        }
    }
}

extension JSONValue {
    /// A form in which `parseEquals` is plain equality (integral doubles become integers), so sets and
    /// dictionaries can compare Parse values in constant time.
    public var parseCanonical: JSONValue {
        switch self {
        case .double(let d): if let i = Int64(exactly: d) { return .int(i) } else { return self }
        case .array(let a): return .array(a.map(\.parseCanonical))
        case .object(let o): return .object(o.mapValues(\.parseCanonical))
        default: return self
        }
    }

    /// JavaScript's truthiness, for checks Parse Server writes as `if (!value)`: null, false, 0 and "" are falsy.
    public var isTruthy: Bool {
        switch self {
        case .null: return false
        case .bool(let b): return b
        case .int(let i): return i != 0
        case .double(let d): return d != 0 && !d.isNaN
        case .string(let s): return !s.isEmpty
        case .array, .object: return true
        }
    }
}
