/// What differs between SQL databases, kept in one place so the compilers stay dialect-neutral.
public protocol SQLDialect: Sendable {
    /// Quotes an identifier (class or column name). The only way a name enters SQL text.
    func quote(_ identifier: String) -> String
    /// The scalar JSON value at `path` inside a JSON text column, comparable to bound values.
    func jsonExtract(_ expression: SQLFragment, path: [String]) -> SQLFragment
    /// JSON type name at `path` (NULL when absent), for `$exists` on dotted keys.
    func jsonType(_ expression: SQLFragment, path: [String]) -> SQLFragment
    /// A predicate true when some element of the JSON array in `expression` satisfies `predicate`, which is
    /// built from SQL expressions for the element's scalar value, its JSON type name and its JSON text.
    func anyElement(of expression: SQLFragment, alias: String, where predicate: (ArrayElement) -> SQLFragment) -> SQLFragment
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
    /// Column type used for every Parse field column.
    var fieldColumnType: String { get }
}

/// SQL expressions naming one element of a JSON array inside `anyElement`.
public struct ArrayElement: Sendable {
    /// The element as a scalar (text, number; booleans as 1/0).
    public var value: SQLFragment
    /// The element's JSON type: `text`, `integer`, `real`, `true`, `false`, `null`, `object`, `array`.
    public var type: SQLFragment
    /// The element's JSON text (objects and arrays).
    public var json: SQLFragment
    public init(value: SQLFragment, type: SQLFragment, json: SQLFragment) {
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
