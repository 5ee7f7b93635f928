import Foundation
public import ParsleyCore
public import ParsleyStorage

/// PostgreSQL's spelling of the storage SQL: typed columns (text, double precision, smallint booleans, jsonb
/// for structured values and permission lists), jsonb path operators, `jsonb_array_elements` for arrays, native
/// regular expressions and full-text search, and Parsley's SQL functions from `PostgresFunctions`.
public struct PostgresDialect: SQLDialect {
    public let tablePrefix: String
    public init(tablePrefix: String = "") { self.tablePrefix = tablePrefix }

    public func columnType(for type: FieldType) -> String {
        switch type {
        case .string, .date, .pointer, .file: return "TEXT"
        case .number: return "DOUBLE PRECISION"
        case .boolean: return "SMALLINT"
        case .object, .array, .geoPoint, .polygon, .bytes, .acl: return "JSONB"
        case .relation: return "TEXT"
        }
    }

    public var permissionColumnType: String { "JSONB" }

    /// The planner's row estimate (`pg_class.reltuples`, kept by autovacuum and ANALYZE; -1 before the first).
    public func estimatedRowCount(_ table: String) -> SQLFragment {
        SQLFragment(unsafeSQL: "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(?)", [.text(self.table(table))])
    }
    public var unlimitedClause: String { "" }
    public var supportsAddColumnIfNotExists: Bool { true }
    public var lockRowsClause: String { " FOR UPDATE" }
    public var beginSnapshot: SQLFragment { "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY" }

    public func schemaLock(_ className: String) -> SQLFragment? {
        SQLFragment(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext(?))", [.text("parsley-schema:" + tablePrefix + className)])
    }

    /// `'{a,b}'` as a bound text[] path.
    static func pathArray(_ path: [String]) -> SQLFragment {
        "ARRAY[" + SQLFragment.join(path.map { .bind(.text($0)) }, ", ") + "]::text[]"
    }

    public func jsonExtract(_ expression: SQLFragment, path: [String], as kind: ScalarKind) -> SQLFragment {
        let value = "(" + expression + " #> " + Self.pathArray(path) + ")"
        return scalar(value, kind)
    }

    /// A jsonb value as a value comparable with binds of `kind`.
    func scalar(_ value: SQLFragment, _ kind: ScalarKind) -> SQLFragment {
        switch kind {
        case .text: return "parsley_text(" + value + ")"
        case .number: return "parsley_num(" + value + ")"
        case .json: return value
        case .any: return "NULLIF(" + value + ", 'null'::jsonb)"
        }
    }

    public func jsonType(_ expression: SQLFragment, path: [String]) -> SQLFragment {
        "parsley_json_type(" + expression + " #> " + Self.pathArray(path) + ")"
    }

    public func arrayElements(of expression: SQLFragment, alias: String) -> (from: SQLFragment, element: ArrayElement) {
        let v = SQLFragment(unsafeSQL: "\(alias).v")
        let element = ArrayElement(value: { kind in PostgresDialect().scalar(v, kind) }, type: "parsley_json_type(" + v + ")", json: v)
        let from =
            "jsonb_array_elements(CASE WHEN jsonb_typeof(" + expression + ") = 'array' THEN " + expression + " ELSE '[]'::jsonb END) AS \(alias)(v)"
        return (from, element)
    }

    public func elementJSON(_ element: ArrayElement) -> SQLFragment {
        element.json + "::text"
    }

    /// The function, not its operator `?|`: PostgreSQL estimates the operator from the column's statistics, and an
    /// ACL of one user matches almost nothing of the table, so "my entries, newest first, 20" was planned as a scan of
    /// all my entries and a sort (6x slower on the journal's data); the function's default selectivity keeps the
    /// ordered index scan that stops at 20 rows.
    public func holdsAny(_ column: SQLFragment, _ principals: [String], alias: String) -> SQLFragment {
        "jsonb_exists_any(" + column + ", ARRAY[" + SQLFragment.join(principals.map { .bind(.text($0)) }, ", ") + "]::text[])"
    }

    public func listSource(_ list: BoundList, alias: String) -> (from: SQLFragment, value: SQLFragment) {
        let value = list.kind == .number ? "\(alias).v::double precision" : "\(alias).v"
        return ("jsonb_array_elements_text(" + .bind(.json(list.json)) + ") AS \(alias)(v)", SQLFragment(unsafeSQL: value))
    }

    public func regexMatch(_ expression: SQLFragment, _ pattern: String, options: String) -> SQLFragment {
        // Parse's options: i (case-insensitive), m (^ and $ at line breaks), x (extended), s (dot matches newline:
        // PostgreSQL's default). PostgreSQL takes them as an embedded option prefix.
        var flags = ""
        if options.contains("i") { flags += "i" }
        if options.contains("m") { flags += "w" }
        if options.contains("x") { flags += "x" }
        let translated = Self.quotingLiterals(pattern)
        let full = flags.isEmpty ? translated : "(?\(flags))" + translated
        return "(" + expression + " ~ " + .bind(.text(full)) + ")"
    }

    /// PCRE's `\Q...\E` (a literal run, which the SDKs emit for `startsWith`/`contains`) spelled with escapes,
    /// since PostgreSQL's regular expressions have no such quoting.
    static func quotingLiterals(_ pattern: String) -> String {
        guard pattern.contains("\\Q") else { return pattern }
        var out = ""
        var rest = Substring(pattern)
        while let start = rest.range(of: "\\Q") {
            out += rest[..<start.lowerBound]
            let afterQ = rest[start.upperBound...]
            let end = afterQ.range(of: "\\E")
            let literal = end.map { afterQ[..<$0.lowerBound] } ?? afterQ
            for ch in literal {
                if "\\^$.|?*+()[]{}".contains(ch) { out.append("\\") }
                out.append(ch)
            }
            rest = end.map { afterQ[$0.upperBound...] } ?? ""
        }
        return out + rest
    }

    public func textMatch(_ expression: SQLFragment, _ search: TextSearchTerms) -> SQLFragment {
        textScore(expression, search) + " > 0"
    }

    public func textScore(_ expression: SQLFragment, _ search: TextSearchTerms) -> SQLFragment {
        "parsley_text_score(" + expression + "::text, " + .bind(.text(search.term)) + ", " + .bind(.integer(search.caseSensitive ? 1 : 0)) + ")"
    }

    public func geoDistance(_ geoPoint: SQLFragment, latitude: Double, longitude: Double) -> SQLFragment {
        "parsley_geo_distance(" + geoPoint + ", " + .bind(.real(latitude)) + ", " + .bind(.real(longitude)) + ")"
    }

    public func polygonContains(polygon: SQLFragment, point: SQLFragment) -> SQLFragment {
        "parsley_polygon_contains(" + polygon + ", " + point + ")"
    }

    /// `?` placeholders become `$1`, `$2`, ... (values never enter the text, so in a statement with binds every
    /// `?` is a placeholder; statements without binds, such as function bodies, pass unchanged).
    public func render(_ fragment: SQLFragment) -> String {
        guard !fragment.binds.isEmpty else { return fragment.sql }
        // Bytes rather than characters: `?` is ASCII, so it never sits inside a multi-byte character, and the
        // text between placeholders is copied as it is (this runs for every statement).
        var sql = fragment.sql
        return sql.withUTF8 { source in
            var marks = 0
            for byte in source where byte == UInt8(ascii: "?") { marks += 1 }
            // `$n` takes at most 6 bytes where `?` took 1 (PostgreSQL allows 65,535 parameters).
            return String(unsafeUninitializedCapacity: source.count + 5 * marks) { out in
                var written = 0
                var n = 0
                for byte in source {
                    guard byte == UInt8(ascii: "?") else {
                        out[written] = byte
                        written += 1
                        continue
                    }
                    n += 1
                    out[written] = UInt8(ascii: "$")
                    written += 1
                    var digits = 1
                    var rest = n / 10
                    while rest > 0 {
                        digits += 1
                        rest /= 10
                    }
                    var value = n
                    for i in stride(from: digits - 1, through: 0, by: -1) {
                        out[written + i] = UInt8(ascii: "0") + UInt8(value % 10)
                        value /= 10
                    }
                    written += digits
                }
                return written
            }
        }
    }
}
