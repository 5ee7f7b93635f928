public import ParsleyCore

/// Compiles the query AST to a SQL predicate. Every value is bound; names are quoted by the dialect after
/// being validated by the parsers. Field semantics follow the class schema: array fields match by element,
/// pointers by objectId, relations through their join tables, dotted paths inside Object fields.
public struct WhereCompiler {
    public let dialect: any SQLDialect
    /// Schemas of every class a sub-query may name.
    public let schemas: [String: ClassSchema]
    /// Read permissions applied to sub-queries too (nil: master key, no filtering).
    public let readPrincipals: [String]?
    private let aliases = AliasCounter()

    public init(dialect: any SQLDialect, schemas: [String: ClassSchema], readPrincipals: [String]?) {
        self.dialect = dialect
        self.schemas = schemas
        self.readPrincipals = readPrincipals
    }

    public func newAlias() -> String { "t\(aliases.next())" }

    public static func joinTable(field: String, owner: String) -> String { "_Join:\(field):\(owner)" }

    public func compile(_ node: QueryNode, schema: ClassSchema, alias: String) throws(ParseError) -> SQLFragment {
        switch node {
        case .all: return "1=1"
        case .and(let nodes):
            if nodes.isEmpty { return "1=1" }
            return try combine(nodes, " AND ", schema, alias)
        case .or(let nodes):
            if nodes.isEmpty { return "1=0" }
            return try combine(nodes, " OR ", schema, alias)
        case .nor(let nodes):
            // A condition on a missing field is NULL in SQL, and NOT NULL would drop the object: each part counts as
            // false then, as in Parse (none of them holds).
            if nodes.isEmpty { return "1=1" }
            var parts: [SQLFragment] = []
            for n in nodes { parts.append("COALESCE(" + (try compile(n, schema: schema, alias: alias)).parenthesized + ", FALSE)") }
            return SQLFragment("NOT ") + Self.balanced(parts[...], " OR ")
        case .relatedTo(let owner, let key):
            guard let ownerSchema = schemas[owner.className], case .relation? = ownerSchema.fields[key] else { return "1=0" }
            var f = SQLFragment(
                unsafeSQL:
                    "\(column(alias, "objectId")) IN (SELECT relatedId FROM \(dialect.table(Self.joinTable(field: key, owner: owner.className))) "
                    + "WHERE owningId = "
            )
            f.append(bind: .text(owner.objectId))
            f.append(")")
            return f
        case .field(let path, let condition):
            return try compile(condition, on: target(path, schema: schema, alias: alias), alias: alias)
        }
    }

    private func combine(_ nodes: [QueryNode], _ op: String, _ schema: ClassSchema, _ alias: String) throws(ParseError) -> SQLFragment {
        var parts: [SQLFragment] = []
        for n in nodes { parts.append(try compile(n, schema: schema, alias: alias).parenthesized) }
        return Self.balanced(parts[...], op)
    }

    /// `(a OP b) OP (c OP d)`: parsers nest a flat chain one level per operand (SQLite stops at 1,000 levels), so a
    /// long `$or` is grouped in halves and nests only logarithmically.
    static func balanced(_ parts: ArraySlice<SQLFragment>, _ op: String) -> SQLFragment {
        if parts.count <= 8 { return SQLFragment.join(Array(parts), op).parenthesized }
        let middle = parts.startIndex + parts.count / 2
        return (balanced(parts[..<middle], op) + op + balanced(parts[middle...], op)).parenthesized
    }

    public func column(_ alias: String, _ name: String) -> String { "\(alias).\(dialect.quote(name))" }

    /// How a field path is stored.
    public enum Target {
        case column(SQLFragment, FieldType)
        case json(SQLFragment, [String])
        case relation(field: String, owner: String, target: String)
        case missing
    }

    public func target(_ path: FieldPath, schema: ClassSchema, alias: String) -> Target {
        let type: FieldType?
        switch path.field {
        case "objectId": type = .string
        case "createdAt", "updatedAt": type = .date
        case "_rperm", "_wperm": type = .array
        default: type = schema.fields[path.field]
        }
        guard let type else { return .missing }
        if case .relation(let target) = type {
            return .relation(field: path.field, owner: schema.className, target: target)
        }
        let col = SQLFragment(unsafeSQL: column(alias, path.field))
        if path.subpath.isEmpty { return .column(col, type) }
        guard type == .object else { return .missing }
        return .json(col, path.subpath)
    }

    func compile(_ condition: Condition, on target: Target, alias: String) throws(ParseError) -> SQLFragment {
        switch target {
        case .missing: return compileMissing(condition)
        case .relation(let field, let owner, let targetClass):
            return try compileRelation(condition, field: field, owner: owner, target: targetClass, alias: alias)
        case .json(let base, let path): return try compileJSONPath(condition, base: base, path: path)
        case .column(let expr, let type):
            if type == .array { return try compileArray(condition, expr) }
            return try compileColumn(condition, expr, type)
        }
    }

    /// A field the class does not have behaves like a field that is missing on every object.
    func compileMissing(_ condition: Condition) -> SQLFragment {
        switch condition {
        case .equals(.null), .exists(false), .notEquals, .notIn, .dontSelect, .notInQuery: return "1=1"
        default: return "1=0"
        }
    }

    // MARK: Plain columns

    func compileColumn(_ condition: Condition, _ expr: SQLFragment, _ type: FieldType) throws(ParseError) -> SQLFragment {
        switch condition {
        case .equals(let v):
            if v.isNull { return expr + " IS NULL" }
            guard let bound = encode(v, type) else { return "1=0" }
            return expr + " = " + .bind(bound)
        case .notEquals(let v):
            if v.isNull { return expr + " IS NOT NULL" }
            guard let bound = encode(v, type) else { return "1=1" }
            return (expr + " IS NULL OR " + expr + " <> " + .bind(bound)).parenthesized
        case .compare(let op, let v):
            guard Self.isComparable(v, with: type), let bound = encode(v, type), bound != .null else { return "1=0" }
            return expr + " \(sqlOperator(op)) " + .bind(bound)
        case .isIn(let values): return inList(expr, values, type, negated: false)
        case .notIn(let values): return inList(expr, values, type, negated: true)
        case .containsAll(let values):
            // `$all` on a scalar field: every listed value equals the field.
            // `$all` on a scalar field: every listed value equals the field, so at most one distinct value can match.
            let distinct = Set(values)
            guard distinct.count == 1, let v = distinct.first else { return "1=0" }
            return compileColumnEquals(expr, v, type)
        case .containedBy(let values): return inList(expr, values, type, negated: false)
        case .containsAllMatching(let patterns):
            guard Self.storageKind(type) == .text else { return "1=0" }
            return SQLFragment.join(patterns.map { dialect.regexMatch(expr, $0.pattern, options: $0.options) }, " AND ").parenthesized
        case .exists(let b): return expr + (b ? " IS NOT NULL" : " IS NULL")
        case .regex(let r):
            // Only text matches a regular expression (numbers, booleans and structured values never do).
            guard Self.storageKind(type) == .text else { return "1=0" }
            return dialect.regexMatch(expr, r.pattern, options: r.options)
        case .text(let t):
            return dialect.textMatch(expr, TextSearchTerms(term: t.term, caseSensitive: t.caseSensitive, diacriticSensitive: t.diacriticSensitive))
        case .select(let sub, let key): return try selectSubquery(expr, Self.storageKind(type), sub, key: key, negated: false)
        case .dontSelect(let sub, let key): return try selectSubquery(expr, Self.storageKind(type), sub, key: key, negated: true)
        case .inQuery(let sub), .notInQuery(let sub):
            let negated: Bool
            if case .notInQuery = condition { negated = true } else { negated = false }
            guard case .pointer(let targetClass) = type, targetClass == sub.className else { return negated ? "1=1" : "1=0" }
            let ids = try idsSubquery(sub)
            return negated ? (expr + " IS NULL OR " + expr + " NOT IN " + ids).parenthesized : expr + " IN " + ids
        case .nearSphere(let p, let max):
            guard type == .geoPoint else { return "1=0" }
            guard let max else { return expr + " IS NOT NULL" }
            return dialect.geoDistance(expr, latitude: p.latitude, longitude: p.longitude) + " <= " + .bind(.real(max))
        case .withinCenterSphere(let p, let radius):
            guard type == .geoPoint else { return "1=0" }
            return dialect.geoDistance(expr, latitude: p.latitude, longitude: p.longitude) + " <= " + .bind(.real(radius))
        case .withinBox(let sw, let ne):
            guard type == .geoPoint else { return "1=0" }
            let lat = dialect.jsonExtract(expr, path: ["latitude"], as: .number), lng = dialect.jsonExtract(expr, path: ["longitude"], as: .number)
            return lat + " BETWEEN " + .bind(.real(sw.latitude)) + " AND " + .bind(.real(ne.latitude)) + " AND " + lng + " BETWEEN "
                + .bind(.real(sw.longitude)) + " AND " + .bind(.real(ne.longitude))
        case .withinPolygon(let points):
            guard type == .geoPoint else { return "1=0" }
            let polygon: JSONValue = ["coordinates": .array(points.map { [.double($0.latitude), .double($0.longitude)] })]
            return dialect.polygonContains(polygon: .bind(.json(JSONWriter.string(polygon))), point: expr)
        case .geoIntersects(let p):
            guard type == .polygon else { return "1=0" }
            return dialect.polygonContains(polygon: expr, point: .bind(.json(JSONWriter.string(p.json))))
        }
    }

    /// Ordering operators only match values of the operand's own type (Mongo's type bracketing): SQL would
    /// otherwise order every number before every string.
    static func isComparable(_ v: JSONValue, with type: FieldType) -> Bool {
        switch type {
        case .number: return v.isNumber
        case .string: return v.stringValue != nil
        case .boolean: return v.boolValue != nil
        case .date: return v.parseType == "Date" || v.stringValue.flatMap(ParseDate.init(iso:)) != nil
        case .pointer: return v.stringValue != nil || Pointer(json: v) != nil
        default: return true
        }
    }

    func compileColumnEquals(_ expr: SQLFragment, _ v: JSONValue, _ type: FieldType) -> SQLFragment {
        if v.isNull { return expr + " IS NULL" }
        guard let bound = encode(v, type) else { return "1=0" }
        return expr + " = " + .bind(bound)
    }

    /// Column encoding of a query operand for a field of `type`; nil when it can never match
    /// (a pointer to another class).
    func encode(_ v: JSONValue, _ type: FieldType) -> SQLValue? {
        if case .pointer(let target) = type {
            if let p = Pointer(json: v) { return p.className == target ? .text(p.objectId) : nil }
        }
        let value = StorageCodec.encode(v, as: type)
        return StorageCodec.fits(value, type) ? value : nil
    }

    func inList(_ expr: SQLFragment, _ values: [JSONValue], _ type: FieldType, negated: Bool) -> SQLFragment {
        let hasNull = values.contains { $0.isNull }
        var parts: [SQLFragment] = []
        if let match = oneOf(expr, values.filter { !$0.isNull }.compactMap { encode($0, type) }) {
            parts.append(negated ? SQLFragment("NOT ") + match.parenthesized : match)
        }
        if negated {
            // `$nin` also matches objects without the field, unless null itself is excluded.
            if hasNull { parts.append(expr + " IS NOT NULL") } else if !parts.isEmpty { return (expr + " IS NULL OR " + parts[0]).parenthesized }
            return parts.isEmpty ? "1=1" : SQLFragment.join(parts, " AND ").parenthesized
        }
        if hasNull { parts.append(expr + " IS NULL") }
        return parts.isEmpty ? "1=0" : SQLFragment.join(parts, " OR ").parenthesized
    }

    /// `expr` equals one of `values` (nil when there are none). Text and numbers are bound as one list parameter
    /// whatever their number; structured values (JSON) one bind each, distinct ones only.
    func oneOf(_ expr: SQLFragment, _ values: [SQLValue]) -> SQLFragment? {
        var texts: [SQLValue] = [], numbers: [SQLValue] = [], others: [SQLValue] = []
        var seen = Set<SQLValue>()
        for v in values where seen.insert(v).inserted {
            switch v {
            case .text: texts.append(v)
            case .integer, .real: numbers.append(v)
            case .json, .null: others.append(v)
            }
        }
        var parts: [SQLFragment] = []
        for list in [texts, numbers] where !list.isEmpty {
            parts.append(list.count == 1 ? expr + " = " + .bind(list[0]) : dialect.isIn(expr, BoundList(list)!, alias: newAlias()))
        }
        parts += others.map { expr + " = " + .bind($0) }
        if parts.isEmpty { return nil }
        return parts.count == 1 ? parts[0] : SQLFragment.join(parts, " OR ").parenthesized
    }

    func sqlOperator(_ op: Comparison) -> String {
        switch op {
        case .lessThan: return "<"
        case .lessThanOrEqual: return "<="
        case .greaterThan: return ">"
        case .greaterThanOrEqual: return ">="
        }
    }

    // MARK: Sub-queries

    /// `(SELECT objectId FROM Sub WHERE ...)` with the caller's read permissions.
    func idsSubquery(_ sub: SubQuery) throws(ParseError) -> SQLFragment {
        guard let subSchema = schemas[sub.className] else { return "(SELECT NULL WHERE 1=0)" }
        let a = newAlias()
        var f = SQLFragment(unsafeSQL: "(SELECT \(column(a, "objectId")) FROM \(dialect.table(sub.className)) AS \(a)")
        // Every object, unfiltered: no `WHERE 1=1`, with which SQLite reads the whole table into a list instead of
        // looking each id up in the primary key's index.
        if case .all = sub.predicate, readPrincipals == nil { return f + ")" }
        f.append(" WHERE ")
        f.append(try compile(sub.predicate, schema: subSchema, alias: a))
        f.append(readFilter(alias: a))
        f.append(")")
        return f
    }

    /// How a column of `type` is stored: as text, as a number, or as JSON. Values of different kinds never equal.
    static func storageKind(_ type: FieldType) -> ScalarKind {
        switch type {
        case .string, .date, .pointer, .file, .relation: return .text
        case .number, .boolean: return .number
        default: return .json
        }
    }

    /// `expr IN (selected values)`; nothing matches (everything does, negated) when the selected key is stored as
    /// another kind than `expr`.
    func selectSubquery(_ expr: SQLFragment, _ kind: ScalarKind, _ sub: SubQuery, key: String, negated: Bool) throws(ParseError) -> SQLFragment {
        guard let (values, valuesKind) = try selectedValues(sub, key: key), valuesKind == kind else { return negated ? "1=1" : "1=0" }
        return negated ? (expr + " IS NULL OR " + expr + " NOT IN " + values).parenthesized : expr + " IN " + values
    }

    /// `(SELECT <key> FROM Sub WHERE ... AND <key> IS NOT NULL)` for `$select`/`$dontSelect`; nil when the class
    /// or the key does not exist (nothing is selected).
    func selectedValues(_ sub: SubQuery, key: String) throws(ParseError) -> (SQLFragment, ScalarKind)? {
        guard let subSchema = schemas[sub.className] else { return nil }
        let a = newAlias()
        let parser = QueryParser(now: ParseDate(milliseconds: 0))
        let keyExpr: SQLFragment
        let kind: ScalarKind
        switch target(try parser.fieldPath(key), schema: subSchema, alias: a) {
        case .column(let e, let type):
            keyExpr = e
            kind = Self.storageKind(type)
        case .json(let base, let path):
            keyExpr = dialect.jsonExtract(base, path: path, as: .text)
            kind = .text
        default: return nil
        }
        var f = SQLFragment("(SELECT ") + keyExpr + SQLFragment(unsafeSQL: " FROM \(dialect.table(sub.className)) AS \(a) WHERE ")
        f.append(try compile(sub.predicate, schema: subSchema, alias: a))
        f.append(" AND ")
        f.append(keyExpr)
        f.append(" IS NOT NULL")
        f.append(readFilter(alias: a))
        f.append(")")
        return (f, kind)
    }

    /// ` AND (<alias>._rperm IS NULL OR it holds one of the principals)`, or nothing for the master key.
    public func readFilter(alias: String) -> SQLFragment {
        guard let principals = readPrincipals else { return "" }
        let col = SQLFragment(unsafeSQL: column(alias, "_rperm"))
        let holds = dialect.holdsAny(col, principals, alias: newAlias())
        return " AND (" + col + " IS NULL OR " + holds + ")"
    }

    // MARK: Relations

    func compileRelation(_ condition: Condition, field: String, owner: String, target: String, alias: String) throws(ParseError) -> SQLFragment {
        let join = dialect.table(Self.joinTable(field: field, owner: owner))
        let id = column(alias, "objectId")
        func members(_ related: SQLFragment, negated: Bool) -> SQLFragment {
            SQLFragment(unsafeSQL: "\(id) \(negated ? "NOT IN" : "IN") (SELECT owningId FROM \(join) WHERE ") + related + ")"
        }
        func ids(_ values: [JSONValue]) -> SQLFragment {
            let bound = values.compactMap(Pointer.init(json:)).filter { $0.className == target }.map { SQLValue.text($0.objectId) }
            return oneOf("relatedId", bound) ?? "1=0"
        }
        switch condition {
        case .equals(let v): return members(ids([v]), negated: false)
        case .notEquals(let v): return members(ids([v]), negated: true)
        case .isIn(let vs): return members(ids(vs), negated: false)
        case .containsAll(let vs):
            // Every listed object is related: as many distinct listed ids among the related ones as were listed.
            let listed = Set(vs.compactMap(Pointer.init(json:)).map(\.objectId))
            guard !listed.isEmpty else { return "1=0" }
            guard vs.allSatisfy({ Pointer(json: $0)?.className == target }) else { return "1=0" }
            var f = SQLFragment(unsafeSQL: "(SELECT COUNT(DISTINCT relatedId) FROM \(join) WHERE owningId = \(id) AND ")
            f.append(oneOf("relatedId", listed.sorted().map { .text($0) })!)
            f.append(") = ")
            f.append(bind: .integer(Int64(listed.count)))
            return f
        case .notIn(let vs): return members(ids(vs), negated: true)
        case .inQuery(let sub): return sub.className == target ? members("relatedId IN " + (try idsSubquery(sub)), negated: false) : "1=0"
        case .notInQuery(let sub): return sub.className == target ? members("relatedId IN " + (try idsSubquery(sub)), negated: true) : "1=1"
        case .exists(let b): return b ? "1=1" : "1=0"
        default: throw ParseError.invalidQuery("This constraint is not supported on a Relation field")
        }
    }
}

/// Hands out distinct table aliases within one statement.
final class AliasCounter: @unchecked Sendable {
    // Used by one compiler on one task at a time; never shared across tasks.
    private var value = 0
    func next() -> Int {
        value += 1
        return value
    }
}
