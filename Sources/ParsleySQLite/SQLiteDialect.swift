import Foundation
public import ParsleyStorage

/// SQLite's spelling of the storage SQL: JSON1 functions, `json_each` for arrays, and Parsley's own
/// functions (`parsley_regex`, `parsley_text_*`, `parsley_geo_distance`, `parsley_polygon_contains`)
/// installed on every connection by `SQLiteFunctions`.
public struct SQLiteDialect: SQLDialect {
    public init() {}

    public func quote(_ identifier: String) -> String {
        // Names reaching here were validated by the parsers; doubling quotes and dropping NULs is the last line.
        if !identifier.utf8.contains(where: { $0 == 0x22 || $0 == 0 }) { return "\"" + identifier + "\"" }
        var out = "\""
        for ch in identifier.unicodeScalars where ch != "\0" {
            if ch == "\"" { out += "\"\"" } else { out.unicodeScalars.append(ch) }
        }
        return out + "\""
    }

    public var fieldColumnType: String { "" }

    static func jsonPath(_ path: [String]) -> String {
        "$" + path.map { ".\"\($0)\"" }.joined()
    }

    public func jsonExtract(_ expression: SQLFragment, path: [String]) -> SQLFragment {
        "json_extract(" + expression + ", " + .bind(.text(Self.jsonPath(path))) + ")"
    }

    public func jsonType(_ expression: SQLFragment, path: [String]) -> SQLFragment {
        "json_type(" + expression + ", " + .bind(.text(Self.jsonPath(path))) + ")"
    }

    public func anyElement(of expression: SQLFragment, alias: String, where predicate: (ArrayElement) -> SQLFragment) -> SQLFragment {
        let element = ArrayElement(value: SQLFragment("\(alias).value"), type: SQLFragment("\(alias).type"), json: SQLFragment("\(alias).value"))
        return "EXISTS (SELECT 1 FROM json_each(" + expression + ") AS \(alias) WHERE " + predicate(element) + ")"
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
}
