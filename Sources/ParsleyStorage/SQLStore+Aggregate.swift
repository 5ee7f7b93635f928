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
        let from = SQLFragment(unsafeSQL: " FROM \(dialect.quote(schema.className)) AS \(alias) WHERE ")
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
        // One SQL expression per value, with the type its column decodes as.
        func value(_ e: AggregatePipeline.Expression) throws(ParseError) -> (SQLFragment, FieldType?) {
            switch e {
            case .field(let name):
                guard let type = fieldType(name) else { return ("NULL", nil) }
                if case .relation = type { return ("NULL", nil) }
                return (SQLFragment(unsafeSQL: compiler.column(alias, name)), type)
            case .datePart(let part, let name):
                guard fieldType(name) == .date else { throw ParseError(.invalidQuery, "$\(part.rawValue) needs a Date field, not \(name)") }
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
            guard let type = fieldType(name) else { return "NULL" }
            guard type == .number || op == "MIN" || op == "MAX" else { throw ParseError(.invalidQuery, "$\(op.lowercased()) needs a Number field, not \(name)") }
            return SQLFragment(unsafeSQL: "\(op)(\(compiler.column(alias, name)))")
        }

        var keys: [(name: String?, sql: SQLFragment, type: FieldType?)] = []
        switch group.key {
        case .single(nil): break
        case .single(let e?):
            let (sql, type) = try value(e)
            keys.append((nil, sql, type))
        case .object(let parts):
            for (name, e) in parts {
                let (sql, type) = try value(e)
                keys.append((name, sql, type))
            }
        }
        enum Output { case number, decoded(FieldType?), average }
        var outputs: [(name: String, sql: SQLFragment, output: Output)] = []
        for (name, accumulator) in group.accumulators {
            switch accumulator {
            case .sum(.constant(let k)): outputs.append((name, "COUNT(*) * " + (try value(.constant(k))).0, .number))
            case .sum(.field(let f)): outputs.append((name, try number(f, "SUM"), .number))
            case .sum(let e): outputs.append((name, "SUM(" + (try value(e)).0 + ")", .number))
            case .avg(let f): outputs.append((name, try number(f, "AVG"), .average))
            case .min(let f): outputs.append((name, try number(f, "MIN"), .decoded(fieldType(f))))
            case .max(let f): outputs.append((name, try number(f, "MAX"), .decoded(fieldType(f))))
            }
        }
        var select = SQLFragment(unsafeSQL: "SELECT ")
        var columns: [SQLFragment] = []
        for (i, k) in keys.enumerated() { columns.append(k.sql + SQLFragment(unsafeSQL: " AS \(dialect.quote("k\(i)"))")) }
        for (i, o) in outputs.enumerated() { columns.append(o.sql + SQLFragment(unsafeSQL: " AS \(dialect.quote("a\(i)"))")) }
        // One group over everything needs to know whether there was anything at all.
        if keys.isEmpty { columns.append(SQLFragment(unsafeSQL: "COUNT(*) AS \(dialect.quote("n"))")) }
        select.append(SQLFragment.join(columns, ", "))
        var statement = select + from + filter
        if !keys.isEmpty {
            statement.append(" GROUP BY ")
            statement.append(SQLFragment.join(keys.map(\.sql), ", "))
        }
        var order: [String] = []
        for (key, descending) in pipeline.sort {
            let direction = descending ? " DESC" : " ASC"
            if key == "_id" || key == "objectId" {
                order += keys.indices.map { dialect.quote("k\($0)") + direction }
            } else if key.hasPrefix("_id.") || key.hasPrefix("objectId."), let i = keys.firstIndex(where: { $0.name == String(key.split(separator: ".")[1]) }) {
                order.append(dialect.quote("k\(i)") + direction)
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
            if keys.isEmpty, case .integer(0) = row[row.count - 1] { return nil }
            var result: [String: JSONValue] = [:]
            func decoded(_ v: SQLValue, _ type: FieldType?) -> JSONValue {
                guard let type else { return .null }
                return StorageCodec.decode(v, as: type)
            }
            switch group.key {
            case .single(nil): result["objectId"] = .null
            case .single: result["objectId"] = decoded(row[0], keys[0].type)
            case .object:
                var o: [String: JSONValue] = [:]
                for (i, k) in keys.enumerated() { o[k.name ?? ""] = decoded(row[i], k.type) }
                result["objectId"] = .object(o)
            }
            for (i, o) in outputs.enumerated() {
                let v = row[keys.count + i]
                switch o.output {
                case .number: result[o.name] = Self.number(v)
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
            guard let t = schema.fields[field] else { return [] }
            if case .relation = t { return [] }
            type = t
        }
        let compiler = WhereCompiler(dialect: dialect, schemas: schemas, readPrincipals: nil)
        let alias = "t0"
        let column = SQLFragment(unsafeSQL: compiler.column(alias, field))
        var statement: SQLFragment
        if type == .array {
            let (from, element) = dialect.arrayElements(of: column, alias: "e0")
            statement = "SELECT DISTINCT " + dialect.elementJSON(element) + SQLFragment(unsafeSQL: " FROM \(dialect.quote(schema.className)) AS \(alias), ") + from
        } else {
            statement = "SELECT DISTINCT " + column + SQLFragment(unsafeSQL: " FROM \(dialect.quote(schema.className)) AS \(alias)")
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

    /// Whole doubles as integers.
    static func normalized(_ v: JSONValue) -> JSONValue {
        if case .double(let d) = v, d == d.rounded(), abs(d) < 9e15 { return .int(Int64(d)) }
        return v
    }
}
