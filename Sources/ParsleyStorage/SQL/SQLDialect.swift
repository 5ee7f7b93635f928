public import ParsleyCore

/// What differs between SQL databases, kept in one place so the compilers stay dialect-neutral.
public protocol SQLDialect: Sendable {
    /// Quotes an identifier (class or column name). The only way a name enters SQL text.
    func quote(_ identifier: String) -> String
    /// Parse Server's `collectionPrefix`: put before every table and index name (`table(_:)`), so apps with
    /// different prefixes share one database without seeing each other's tables. Empty by default.
    var tablePrefix: String { get }
    /// The JSON value at `path` inside a JSON column, as a value comparable with binds of `kind` (NULL when the
    /// value there is of another kind).
    func jsonExtract(_ expression: SQLFragment, path: [String], as kind: ScalarKind) -> SQLFragment
    /// JSON type name at `path` (NULL when absent), for `$exists` on dotted keys.
    func jsonType(_ expression: SQLFragment, path: [String]) -> SQLFragment
    /// A predicate true when some element of the JSON array in `expression` satisfies `predicate`, which is
    /// built from SQL expressions for the element's scalar value, its JSON type name and its JSON text.
    /// The elements of the JSON array in `expression` (none when it is not an array) as a `FROM` item named `alias`,
    /// and the SQL expressions of one element: its scalar value, its JSON type name and its JSON text.
    func arrayElements(of expression: SQLFragment, alias: String) -> (from: SQLFragment, element: ArrayElement)
    /// An array element (from `arrayElements`) as JSON text, whatever its type (`distinct` on arrays).
    func elementJSON(_ element: ArrayElement) -> SQLFragment
    /// Regular-expression match against a bound pattern and Parse `$options`.
    func regexMatch(_ expression: SQLFragment, _ pattern: String, options: String) -> SQLFragment
    /// Full-text match and score for `$text`.
    func textMatch(_ expression: SQLFragment, _ search: TextSearchTerms) -> SQLFragment
    func textScore(_ expression: SQLFragment, _ search: TextSearchTerms) -> SQLFragment
    /// Great-circle distance in radians between a stored GeoPoint (JSON) and a bound point.
    func geoDistance(_ geoPoint: SQLFragment, latitude: Double, longitude: Double) -> SQLFragment
    /// Whether a polygon (bound JSON list of [lat,lng]) contains a stored GeoPoint.
    func polygonContains(polygon: SQLFragment, point: SQLFragment) -> SQLFragment
    /// Renders the final statement text (placeholder syntax).
    func render(_ fragment: SQLFragment) -> String
    /// Column type of a Parse field of `type` (empty: untyped).
    func columnType(for type: FieldType) -> String
    /// Column type of the `_rperm`/`_wperm` permission lists (JSON arrays of strings).
    var permissionColumnType: String { get }
    /// `LIMIT` clause for "no limit" before an `OFFSET` (empty when OFFSET may stand alone).
    var unlimitedClause: String { get }
    /// Whether `ALTER TABLE ... ADD COLUMN IF NOT EXISTS` is understood.
    var supportsAddColumnIfNotExists: Bool { get }
    /// Suffix of a SELECT that locks the rows it reads until the transaction ends (empty where writers are
    /// serialised anyway).
    var lockRowsClause: String { get }
    /// Starts a read-only transaction on a read connection that sees one snapshot of the database until it ends
    /// (`SQLReader.snapshot`).
    var beginSnapshot: SQLFragment { get }
    /// A statement that serialises schema changes of one class across concurrent transactions (nil where
    /// writers are serialised anyway).
    func schemaLock(_ className: String) -> SQLFragment?
    /// A predicate true when the permission list in `column` (a JSON array of strings, never NULL here) holds
    /// one of `principals`. Read and write filters run it on every candidate row, so backends spell it cheaply.
    func holdsAny(_ column: SQLFragment, _ principals: [String], alias: String) -> SQLFragment
    /// The elements of a list bound as ONE parameter (a JSON array of strings or numbers, see `BoundList`), as a
    /// `FROM` item named `alias` and the expression of its value compared as `kind` (`.text` or `.number`). A list
    /// of any length is one bind, so the statement's shape never grows with it and no driver limit is reached.
    func listSource(_ list: BoundList, alias: String) -> (from: SQLFragment, value: SQLFragment)
    /// One row, one integer: the number of rows of `table` as the database estimates it without reading them
    /// (PostgreSQL's planner statistics; SQLite's rowid span), NULL or negative when it has no estimate.
    func estimatedRowCount(_ table: String) -> SQLFragment
    /// `expression` equals one element of the bound list.
    func isIn(_ expression: SQLFragment, _ list: BoundList, alias: String) -> SQLFragment
}

extension SQLDialect {
    /// A predicate true when some element of the JSON array in `expression` satisfies `predicate`.
    public func anyElement(of expression: SQLFragment, alias: String, where predicate: (ArrayElement) -> SQLFragment) -> SQLFragment {
        let (from, element) = arrayElements(of: expression, alias: alias)
        return "EXISTS (SELECT 1 FROM " + from + " WHERE " + predicate(element) + ")"
    }

    public func isIn(_ expression: SQLFragment, _ list: BoundList, alias: String) -> SQLFragment {
        let (from, value) = listSource(list, alias: alias)
        return expression + " IN (SELECT " + value + " FROM " + from + ")"
    }

    public func holdsAny(_ column: SQLFragment, _ principals: [String], alias: String) -> SQLFragment {
        anyElementHolds(column, principals, alias: alias)
    }

    /// `holdsAny` through `anyElement`: correct for any dialect, for dialects whose faster test does not apply.
    public func anyElementHolds(_ column: SQLFragment, _ principals: [String], alias: String) -> SQLFragment {
        anyElement(of: column, alias: alias) { e in
            e.value(.text) + " IN (" + SQLFragment.join(principals.map { .bind(.text($0)) }, ", ") + ")"
        }
    }

    /// A table's or an index's name in SQL: the `tablePrefix` and the name, quoted. Every table and index name (class
    /// tables, `_SCHEMA`, join tables, Parsley's own tables) goes through here; column names go through `quote`.
    public func table(_ name: String) -> String { quote(tablePrefix + name) }

    /// Runs before `CREATE TABLE IF NOT EXISTS` of Parsley's own tables: PostgreSQL's is not safe against another
    /// process creating the same table at the same moment (several nodes starting together on a fresh database).
    public var tableCreationLock: SQLFragment? { schemaLock("_tables") }

    /// Double quotes, doubling any inside and dropping NULs. Names reaching here were validated by the parsers;
    /// this is the last line, and the only way a name enters SQL text.
    public func quote(_ identifier: String) -> String {
        if !identifier.utf8.contains(where: { $0 == 0x22 || $0 == 0 }) { return "\"" + identifier + "\"" }
        var out = "\""
        for ch in identifier.unicodeScalars where ch != "\0" {
            if ch == "\"" { out += "\"\"" } else { out.unicodeScalars.append(ch) }
        }
        return out + "\""
    }
}

/// What a JSON value is compared with: a text bind, a number bind (booleans as 1/0), a JSON bind, or any
/// (only tested for NULL).
public enum ScalarKind: Sendable {
    case text, number, json, any

    /// The kind of a bound value.
    public init(_ value: SQLValue) {
        switch value {
        case .text: self = .text
        case .integer, .real: self = .number
        case .json: self = .json
        case .null: self = .any
        }
    }
}

/// SQL expressions naming one element of a JSON array inside `anyElement`.
public struct ArrayElement: Sendable {
    /// The element as a value comparable with binds of a kind (NULL when it is of another kind).
    public var value: @Sendable (ScalarKind) -> SQLFragment
    /// The element's JSON type: `text`, `integer`, `real`, `true`, `false`, `null`, `object`, `array`.
    public var type: SQLFragment
    /// The element as a JSON value (objects and arrays), comparable with JSON binds and usable with `jsonExtract`.
    public var json: SQLFragment
    public init(value: @escaping @Sendable (ScalarKind) -> SQLFragment, type: SQLFragment, json: SQLFragment) {
        self.value = value
        self.type = type
        self.json = json
    }
}

public struct TextSearchTerms: Sendable {
    public var term: String
    public var caseSensitive: Bool
    public var diacriticSensitive: Bool
    public init(term: String, caseSensitive: Bool, diacriticSensitive: Bool) {
        self.term = term
        self.caseSensitive = caseSensitive
        self.diacriticSensitive = diacriticSensitive
    }
}

/// Values of one kind (text or numbers) bound together as one JSON array parameter.
public struct BoundList: Sendable {
    public let kind: ScalarKind
    public let values: [SQLValue]

    /// Nil when `values` holds something other than text (`.text`) or numbers (`.integer`, `.real`), or both.
    public init?(_ values: [SQLValue]) {
        var kind: ScalarKind?
        for v in values {
            let k: ScalarKind
            switch v {
            case .text: k = .text
            case .integer, .real: k = .number
            default: return nil
            }
            if let kind, kind != k { return nil }
            kind = k
        }
        self.kind = kind ?? .text
        self.values = values
    }

    /// The list as a JSON array, the text of the one bound parameter.
    public var json: String {
        JSONWriter.string(
            .array(
                values.map { v -> JSONValue in
                    switch v {
                    case .integer(let i): return .int(i)
                    case .real(let d): return .double(d)
                    case .text(let s), .json(let s): return .string(s)
                    case .null: return .null
                    }
                }))
    }
}
