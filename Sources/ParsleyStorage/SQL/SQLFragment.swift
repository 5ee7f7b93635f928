public import ParsleyCore

/// A database value bound to a statement parameter, or read from a result column.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    /// A JSON document (objects, arrays, structured Parse values, permission lists). Stored as text where the
    /// database has no JSON type; bound as a JSON value where it has one.
    case json(String)

    public var text: String? {
        switch self {
        case .text(let s), .json(let s): return s
        default: return nil
        }
    }
}

public typealias SQLRow = [SQLValue]

/// A piece of SQL with its bound values. `?` marks a parameter; each dialect renders its own placeholder
/// syntax in `SQLDialect.render`. Values never enter the SQL text; identifiers enter only through
/// `SQLDialect.quote`.
public struct SQLFragment: Sendable, ExpressibleByStringLiteral {
    public var sql: String
    public var binds: [SQLValue]
    /// A lookup by primary key returning at most one row: cheap enough for a backend to run without
    /// leaving the caller's thread.
    public var isPointLookup = false

    /// The empty fragment.
    public init() {
        self.init(unsafeSQL: "")
    }

    /// A fragment from SQL text built at run time. The text is taken as it is: values must be in `binds` (one
    /// `?` each) and names must have come through `SQLDialect.quote`, which only the storage layer and the
    /// backends do; the label makes every such place visible.
    public init(unsafeSQL sql: String, _ binds: [SQLValue] = []) {
        self.sql = sql
        self.binds = binds
    }

    /// A fragment from a string literal: SQL text fixed at compile time.
    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    /// Most parameters one statement may carry. Lists are bound as one parameter each, so only a request of
    /// thousands of distinct structured values gets near; the drivers' own limits (SQLite's 32,766, the 16-bit
    /// count of PostgreSQL's protocol) are never reached. Backends check it before running a statement.
    public static let maxParameters = 30_000

    /// Throws the Parse error for a statement past `maxParameters`.
    public func checkSize() throws(ParseError) {
        guard binds.count <= Self.maxParameters else {
            throw ParseError.invalidQuery("The request is too complex: \(binds.count) values in one statement (at most \(Self.maxParameters))")
        }
    }

    public static func bind(_ value: SQLValue) -> SQLFragment { SQLFragment(unsafeSQL: "?", [value]) }

    public mutating func append(_ text: String) { sql += text }

    public mutating func append(_ other: SQLFragment) {
        sql += other.sql
        binds += other.binds
    }

    public mutating func append(bind value: SQLValue) {
        sql += "?"
        binds.append(value)
    }

    public static func + (a: SQLFragment, b: SQLFragment) -> SQLFragment {
        var r = a
        r.append(b)
        return r
    }

    public static func + (a: SQLFragment, b: String) -> SQLFragment {
        var r = a
        r.sql += b
        return r
    }

    public static func + (a: String, b: SQLFragment) -> SQLFragment {
        SQLFragment(unsafeSQL: a) + b
    }

    /// Joins fragments with a separator (`" AND "`, `", "`).
    public static func join(_ parts: [SQLFragment], _ separator: String) -> SQLFragment {
        var r = SQLFragment()
        for (i, p) in parts.enumerated() {
            if i > 0 { r.sql += separator }
            r.append(p)
        }
        return r
    }

    /// `(a)`
    public var parenthesized: SQLFragment { SQLFragment("(") + self + SQLFragment(")") }
}
