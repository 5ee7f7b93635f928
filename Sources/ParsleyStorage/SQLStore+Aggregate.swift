public import ParsleyCore

/// `GET /aggregate`'s grouping and counting stages and `distinct`, each compiled to one SQL statement over the class's
/// table (the `$match` through the same `WhereCompiler` as a find). Read with the master key only.
extension SQLStore {
    /// `$group` (with `$sort`, `$skip`, `$limit`) or `$count`: Parse Server's results, the group key as `objectId`.
    public func aggregate(
        _ pipeline: AggregatePipeline, schema: ClassSchema, predicate: QueryNode, schemas: [String: ClassSchema]
    ) async throws -> [[String: JSONValue]] {
        let compiler = WhereCompiler(dialect: dialect, schemas: schemas, readPrincipals: nil)
        let alias = "t0"
        let from = SQLFragment(unsafeSQL: " FROM \(dialect.table(schema.className)) AS \(alias) WHERE ")
        let filter = try compiler.compile(predicate, schema: schema, alias: alias)
        if let name = pipeline.count, pipeline.group == nil {
            let statement = "SELECT COUNT(*)" + from + filter
            let rows = try await database.read { db in try await db.query(statement) }
            guard case .integer(let n)? = rows.first?.first, n > 0 else { return [] }
            return [[name: .int(n)]]
        }
        guard let group = pipeline.group else { return [] }
        guard pipeline.count == nil else { throw ParseError(.invalidQuery, "$count after $group is not supported.") }

        func fieldType(_ name: String) -> FieldType? {
            switch name {
            case "objectId": return .string
            case "createdAt", "updatedAt": return .date
            default: return schema.fields[name]
            }
        }
        // A field without a column of its own: a relation or an unknown field is missing on every object (null, as
        // Mongo answers); `ACL` is kept as `_rperm`/`_wperm`, which no group or accumulator reads (102).
        func columnType(_ name: String) throws(ParseError) -> FieldType? {
            guard let type = fieldType(name) else { return nil }
            switch type {
            case .relation: return nil
            case .acl: throw ParseError(.invalidQuery, "ACL cannot be grouped or accumulated in an aggregate.")
            default: return type
            }
        }
        // One SQL expression per value, with the type its column decodes as (nil: a constant null).
        func value(_ e: AggregatePipeline.Expression) throws(ParseError) -> (SQLFragment, FieldType?) {
            switch e {
            case .field(let name):
                guard let type = try columnType(name) else { return ("NULL", nil) }
                return (SQLFragment(unsafeSQL: compiler.column(alias, name)), type)
            case .datePart(let part, let name):
                guard try columnType(name) == .date else { throw ParseError(.invalidQuery, "$\(part.rawValue) needs a Date field, not \(name)") }
                // Dates are stored as fixed-width ISO text: 2024-05-01T10:30:00.000Z.
                let (start, length) = Self.isoPosition(part)
                return (SQLFragment(unsafeSQL: "CAST(substr(\(compiler.column(alias, name)), \(start), \(length)) AS INTEGER)"), .number)
            case .constant(let v):
                let literal: String
                switch v {
                case .int(let i): literal = String(i)
                case .double(let d) where d.isFinite: literal = String(d)
                default: literal = "0"
                }
                return (SQLFragment(unsafeSQL: literal), .number)
            }
        }
        func number(_ name: String, _ op: String) throws(ParseError) -> SQLFragment {
            guard let type = try columnType(name) else { return "NULL" }
            let column = compiler.column(alias, name)
            switch (op, type) {
            // `+ 0.0`: a sum of whole numbers too large for 64 bits becomes a double (SQLite's SUM of integers
            // fails on overflow; PostgreSQL's columns are doubles already).
            case ("SUM", .number): return SQLFragment(unsafeSQL: "SUM(\(column) + 0.0)")
            case (_, .number): return SQLFragment(unsafeSQL: "\(op)(\(column))")
            // Only scalar columns have an order on both backends (no MIN or MAX of JSONB in PostgreSQL).
            case ("MIN", .string), ("MIN", .date), ("MIN", .boolean), ("MIN", .pointer), ("MIN", .file),
                ("MAX", .string), ("MAX", .date), ("MAX", .boolean), ("MAX", .pointer), ("MAX", .file):
                return SQLFragment(unsafeSQL: "\(op)(\(column))")
            case ("MIN", _), ("MAX", _):
                throw ParseError(.invalidQuery, "$\(op.lowercased()) needs a Number, String, Date, Boolean, Pointer or File field, not \(name)")
            default: throw ParseError(.invalidQuery, "$\(op.lowercased()) needs a Number field, not \(name)")
            }
        }

        // The parts of the group key: a column, or a constant (a number, or null for a field no object has) that is
        // the same for every object. Constants are neither selected nor grouped by (GROUP BY would read a number as
        // a column position, and PostgreSQL refuses a NULL there): each result gets them here.
        enum KeyPart { case column(Int, FieldType), constant(JSONValue) }
        var grouped: [SQLFragment] = []
        func keyPart(_ e: AggregatePipeline.Expression) throws(ParseError) -> KeyPart {
            if case .constant(let v) = e { return .constant(v) }
            let (sql, type) = try value(e)
            guard let type else { return .constant(.null) }
            grouped.append(sql)
            return .column(grouped.count - 1, type)
        }
        var parts: [(name: String?, part: KeyPart)] = []
        switch group.key {
        case .single(nil): break
        case .single(let e?): parts.append((nil, try keyPart(e)))
        case .object(let named): for (name, e) in named { parts.append((name, try keyPart(e))) }
        }
        enum Output { case number, decoded(FieldType?), average, count(times: JSONValue) }
        var outputs: [(name: String, sql: SQLFragment, output: Output)] = []
        for (name, accumulator) in group.accumulators {
            switch accumulator {
            // {"$sum": k}: the count times k, multiplied here (no integer overflow in SQL).
            case .sum(.constant(let k)): outputs.append((name, "COUNT(*)", .count(times: k)))
            case .sum(.field(let f)): outputs.append((name, try number(f, "SUM"), .number))
            case .sum(let e): outputs.append((name, "SUM(" + (try value(e)).0 + ")", .number))
            case .avg(let f): outputs.append((name, try number(f, "AVG"), .average))
            case .min(let f): outputs.append((name, try number(f, "MIN"), .decoded(try columnType(f))))
            case .max(let f): outputs.append((name, try number(f, "MAX"), .decoded(try columnType(f))))
            }
        }
        var select = SQLFragment(unsafeSQL: "SELECT ")
        var columns: [SQLFragment] = []
        for (i, sql) in grouped.enumerated() { columns.append(sql + SQLFragment(unsafeSQL: " AS \(dialect.quote("k\(i)"))")) }
        for (i, o) in outputs.enumerated() { columns.append(o.sql + SQLFragment(unsafeSQL: " AS \(dialect.quote("a\(i)"))")) }
        // One group over everything needs to know whether there was anything at all.
        if grouped.isEmpty { columns.append(SQLFragment(unsafeSQL: "COUNT(*) AS \(dialect.quote("n"))")) }
        select.append(SQLFragment.join(columns, ", "))
        var statement = select + from + filter
        if !grouped.isEmpty {
            statement.append(" GROUP BY ")
            statement.append(SQLFragment.join(grouped, ", "))
        }
        var order: [String] = []
        for (key, descending) in pipeline.sort {
            let direction = descending ? " DESC" : " ASC"
            if key == "_id" || key == "objectId" {
                order += grouped.indices.map { dialect.quote("k\($0)") + direction }
            } else if let dot = key.firstIndex(of: "."), ["_id", "objectId"].contains(key[..<dot]),
                let part = parts.first(where: { $0.name == String(key[key.index(after: dot)...]) })?.part
            {
                // A constant part orders nothing.
                if case .column(let i, _) = part { order.append(dialect.quote("k\(i)") + direction) }
            } else if let i = outputs.firstIndex(where: { $0.name == key }) {
                order.append(dialect.quote("a\(i)") + direction)
            } else {
                throw ParseError(.invalidQuery, "$sort after $group may name _id or a $group field, not \(key)")
            }
        }
        if !order.isEmpty { statement.append(SQLFragment(unsafeSQL: " ORDER BY " + order.joined(separator: ", "))) }
        if let limit = pipeline.limit {
            statement.append(" LIMIT \(Int64(limit))")
        } else if pipeline.skip > 0 {
            statement.append(dialect.unlimitedClause)
        }
        if pipeline.skip > 0 { statement.append(" OFFSET \(Int64(pipeline.skip))") }
        let finalStatement = statement
        let rows = try await database.read { db in try await db.query(finalStatement) }
        return rows.compactMap { row -> [String: JSONValue]? in
            // One group over no objects at all: no result (as Mongo answers).
            if grouped.isEmpty, case .integer(0) = row[row.count - 1] { return nil }
            var result: [String: JSONValue] = [:]
            func decoded(_ v: SQLValue, _ type: FieldType?) -> JSONValue {
                guard let type else { return .null }
                return StorageCodec.decode(v, as: type)
            }
            func key(_ part: KeyPart) -> JSONValue {
                switch part {
                case .column(let i, let type): return StorageCodec.decode(row[i], as: type)
                case .constant(let v): return v
                }
            }
            switch group.key {
            case .single(nil): result["objectId"] = .null
            case .single: result["objectId"] = key(parts[0].part)
            case .object:
                var o: [String: JSONValue] = [:]
                for (name, part) in parts { o[name ?? ""] = key(part) }
                result["objectId"] = .object(o)
            }
            for (i, o) in outputs.enumerated() {
                let v = row[grouped.count + i]
                switch o.output {
                case .number: result[o.name] = Self.number(v)
                case .count(let k): result[o.name] = Self.product(v, k)
                case .average:
                    if case .null = v { result[o.name] = .null } else { result[o.name] = Self.number(v, integral: false) }
                case .decoded(let type): result[o.name] = decoded(v, type).isNull && type == .number ? .null : Self.normalized(decoded(v, type))
                }
            }
            return result
        }
    }

    /// `distinct=<field>`: the field's distinct values among the objects `predicate` selects, array elements each on
    /// their own; none for a field the class does not have.
    public func distinct(_ field: String, schema: ClassSchema, predicate: QueryNode, schemas: [String: ClassSchema]) async throws -> [JSONValue] {
        let type: FieldType
        switch field {
        case "objectId": type = .string
        case "createdAt", "updatedAt": type = .date
        default:
            // Relations and `ACL` have no column of their own (`_rperm`/`_wperm` hold the ACL): none, as Parse
            // Server answers.
            guard let t = schema.fields[field], t != .acl else { return [] }
            if case .relation = t { return [] }
            type = t
        }
        let compiler = WhereCompiler(dialect: dialect, schemas: schemas, readPrincipals: nil)
        let alias = "t0"
        let column = SQLFragment(unsafeSQL: compiler.column(alias, field))
        var statement: SQLFragment
        if type == .array {
            let (from, element) = dialect.arrayElements(of: column, alias: "e0")
            statement =
                "SELECT DISTINCT " + dialect.elementJSON(element) + SQLFragment(unsafeSQL: " FROM \(dialect.table(schema.className)) AS \(alias), ")
                + from
        } else {
            statement = "SELECT DISTINCT " + column + SQLFragment(unsafeSQL: " FROM \(dialect.table(schema.className)) AS \(alias)")
        }
        statement.append(" WHERE ")
        statement.append(try compiler.compile(predicate, schema: schema, alias: alias))
        if type != .array { statement.append(" AND " + column + " IS NOT NULL") }
        let finalStatement = statement
        let rows = try await database.read { db in try await db.query(finalStatement) }
        return rows.compactMap { row in
            guard let v = row.first else { return nil }
            if type == .array {
                guard let text = v.text, let json = try? JSONParser.parse(text) else { return Self.normalized(StorageCodec.decode(v, as: .number)) }
                return json
            }
            return Self.normalized(StorageCodec.decode(v, as: type))
        }
    }

    /// Where a date part sits in the stored ISO text (1-based start, length).
    static func isoPosition(_ part: AggregatePipeline.DatePart) -> (Int, Int) {
        switch part {
        case .year: return (1, 4)
        case .month: return (6, 2)
        case .dayOfMonth: return (9, 2)
        case .hour: return (12, 2)
        case .minute: return (15, 2)
        case .second: return (18, 2)
        }
    }

    /// A SQL number as Parse JSON: whole values as integers (both backends answer the same), unless `integral` is off.
    static func number(_ v: SQLValue, integral: Bool = true) -> JSONValue {
        switch v {
        case .integer(let i): return integral ? .int(i) : .double(Double(i))
        case .real(let d): return integral ? normalized(.double(d)) : .double(d)
        case .null: return .int(0)
        case .text(let s), .json(let s): return Double(s).map { normalized(.double($0)) } ?? .null
        }
    }

    /// `count` (a SQL integer) times `k`, as an integer while it fits, else as a double.
    static func product(_ count: SQLValue, _ k: JSONValue) -> JSONValue {
        let n: Int64
        switch count {
        case .integer(let i): n = i
        default: n = 0
        }
        switch k {
        case .int(let i):
            let (p, overflow) = n.multipliedReportingOverflow(by: i)
            return overflow ? .double(Double(n) * Double(i)) : .int(p)
        case .double(let d): return normalized(.double(Double(n) * d))
        default: return .int(0)
        }
    }

    /// Whole doubles as integers.
    static func normalized(_ v: JSONValue) -> JSONValue {
        if case .double(let d) = v, d == d.rounded(), abs(d) < 9e15 { return .int(Int64(d)) }
        return v
    }
}
