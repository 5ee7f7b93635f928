import Foundation
public import ParsleyStorage
public import ParsleyCore

/// SQLite's spelling of the storage SQL: JSON1 functions, `json_each` for arrays, and Parsley's own
/// functions (`parsley_regex`, `parsley_text_*`, `parsley_geo_distance`, `parsley_polygon_contains`)
/// installed on every connection by `SQLiteFunctions`.
public struct SQLiteDialect: SQLDialect {
    public let tablePrefix: String
    public init(tablePrefix: String = "") { self.tablePrefix = tablePrefix }

    public func columnType(for type: FieldType) -> String { "" }
    public var permissionColumnType: String { "TEXT" }

    /// The span of rowids: new rows take the highest rowid plus one, so this is the number of rows, plus the rows
    /// deleted from the middle since the last VACUUM. Two lookups at the ends of the table whatever its size (each
    /// in a subquery of its own: `max(rowid) - min(rowid)` in one SELECT would scan the table).
    public func estimatedRowCount(_ table: String) -> SQLFragment {
        SQLFragment(unsafeSQL: "SELECT (SELECT max(rowid) FROM \(self.table(table))) - (SELECT min(rowid) FROM \(self.table(table))) + 1")
    }
    public var unlimitedClause: String { " LIMIT -1" }
    public var supportsAddColumnIfNotExists: Bool { false }
    public var lockRowsClause: String { "" }
    public func schemaLock(_ className: String) -> SQLFragment? { nil }
    /// A deferred transaction: its first read fixes the WAL snapshot it reads until it ends.
    public var beginSnapshot: SQLFragment { "BEGIN" }

    static func jsonPath(_ path: [String]) -> String {
        "$" + path.map { ".\"\($0)\"" }.joined()
    }

    public func jsonExtract(_ expression: SQLFragment, path: [String], as kind: ScalarKind) -> SQLFragment {
        "json_extract(" + expression + ", " + .bind(.text(Self.jsonPath(path))) + ")"
    }

    public func jsonType(_ expression: SQLFragment, path: [String]) -> SQLFragment {
        "json_type(" + expression + ", " + .bind(.text(Self.jsonPath(path))) + ")"
    }

    public func arrayElements(of expression: SQLFragment, alias: String) -> (from: SQLFragment, element: ArrayElement) {
        let value = SQLFragment(unsafeSQL: "\(alias).value")
        return (
            "json_each(" + expression + ") AS \(alias)",
            ArrayElement(value: { _ in value }, type: SQLFragment(unsafeSQL: "\(alias).type"), json: value)
        )
    }

    public func elementJSON(_ element: ArrayElement) -> SQLFragment {
        // json_each's value is plain text for strings; json_quote makes every element JSON (objects pass unchanged).
        "json_quote(" + element.json + ")"
    }

    public func regexMatch(_ expression: SQLFragment, _ pattern: String, options: String) -> SQLFragment {
        "parsley_regex(" + .bind(.text(pattern)) + ", " + .bind(.text(options)) + ", " + expression + ")"
    }

    public func textMatch(_ expression: SQLFragment, _ search: TextSearchTerms) -> SQLFragment {
        "parsley_text_score(" + expression + ", " + .bind(.text(search.term)) + ", " + .bind(.integer(search.caseSensitive ? 1 : 0)) + ", "
            + .bind(.integer(search.diacriticSensitive ? 1 : 0)) + ") > 0"
    }

    public func textScore(_ expression: SQLFragment, _ search: TextSearchTerms) -> SQLFragment {
        "parsley_text_score(" + expression + ", " + .bind(.text(search.term)) + ", " + .bind(.integer(search.caseSensitive ? 1 : 0)) + ", "
            + .bind(.integer(search.diacriticSensitive ? 1 : 0)) + ")"
    }

    public func geoDistance(_ geoPoint: SQLFragment, latitude: Double, longitude: Double) -> SQLFragment {
        "parsley_geo_distance(json_extract(" + geoPoint + ", '$.latitude'), json_extract(" + geoPoint + ", '$.longitude'), "
            + .bind(.real(latitude)) + ", " + .bind(.real(longitude)) + ")"
    }

    public func polygonContains(polygon: SQLFragment, point: SQLFragment) -> SQLFragment {
        "parsley_polygon_contains(" + polygon + ", json_extract(" + point + ", '$.latitude'), json_extract(" + point + ", '$.longitude'))"
    }

    public func render(_ fragment: SQLFragment) -> String { fragment.sql }

    /// `json_each` over the bound JSON array: text stays text, numbers come back as integers or reals.
    public func listSource(_ list: BoundList, alias: String) -> (from: SQLFragment, value: SQLFragment) {
        ("json_each(" + .bind(.text(list.json)) + ") AS \(alias)", SQLFragment(unsafeSQL: "\(alias).value"))
    }

    /// Permission lists are JSON string arrays (`["*","role:Admin"]`); `parsley_holds_any` (a C function, see
    /// CParsleySQLite) walks the list once and compares each element with the principals, sent as one
    /// '\n'-separated parameter. Principals with a quote, backslash or control character (escaped in JSON; never
    /// produced by Parsley) take the general `json_each` path.
    public func holdsAny(_ column: SQLFragment, _ principals: [String], alias: String) -> SQLFragment {
        if principals.isEmpty || principals.contains(where: { $0.isEmpty || $0.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }) {
            return anyElementHolds(column, principals, alias: alias)
        }
        return SQLFragment(unsafeSQL: "parsley_holds_any(" + column.sql + ", ?)", column.binds + [.text(principals.joined(separator: "\n"))])
    }
}
