public import ParsleyCore

/// Parse objects on a SQL database: one table per class, one column per field, relations in join tables,
/// the schema in `_SCHEMA`. Dialect-neutral; each backend supplies a `SQLDatabase`.
public struct SQLStore: Sendable {
    public let database: any SQLDatabase
    public var dialect: any SQLDialect { database.dialect }

    public init(database: any SQLDatabase) {
        self.database = database
    }

    /// Prepares the backend and creates the schema table if needed.
    public func bootstrap() async throws {
        try await database.prepare()
        let q = dialect.table("_SCHEMA")
        let lock = dialect.tableCreationLock
        _ = try await database.write { db in
            if let lock { try await db.query(lock) }
            try await db.query(
                SQLFragment(unsafeSQL: "CREATE TABLE IF NOT EXISTS \(q) (className TEXT PRIMARY KEY, schema TEXT NOT NULL, version BIGINT NOT NULL)"))
        }
    }

    /// Every stored class schema with its version.
    public func loadSchemas() async throws -> [(ClassSchema, Int64)] {
        let q = dialect.table("_SCHEMA")
        let rows = try await database.read { db in try await db.query(SQLFragment(unsafeSQL: "SELECT schema, version FROM \(q)")) }
        return rows.compactMap { row in
            guard case .text(let text) = row[0], let json = try? JSONParser.parse(text), let schema = ClassSchema(json: json),
                case .integer(let version) = row[1]
            else { return nil }
            return (schema, version)
        }
    }

    /// A writer bound to the executor of a write transaction.
    public func writer(_ executor: any SQLExecutor) -> SQLWriter { SQLWriter(db: executor, dialect: dialect) }
}

/// What a find reads.
public struct FindSpec: Sendable {
    public var schema: ClassSchema
    public var predicate: QueryNode
    public var order: [SortKey]
    public var limit: Int?
    public var skip: Int
    /// Top-level fields to return (nil: all). `objectId`, `createdAt`, `updatedAt` and `ACL` always come back.
    public var keys: Set<String>?
    /// Read permissions (nil: master key).
    public var readPrincipals: [String]?
    /// Schemas of classes that sub-queries may name.
    public var schemas: [String: ClassSchema]
    /// Also return internal `_`-prefixed fields (server use only, e.g. the password hash at log-in).
    public var includeInternal = false
    /// Add the `$text` relevance as `score` to each result (`keys=$score`).
    public var withTextScore = false
    /// A count of the whole class without read permissions to apply (master key, no `where`) answers the
    /// database's estimate when it is at least this (`estimatedCountThreshold`); nil: always counted.
    public var estimateCountsFrom: Int? = nil

    public init(
        schema: ClassSchema, predicate: QueryNode = .all, order: [SortKey] = [], limit: Int? = nil, skip: Int = 0,
        keys: Set<String>? = nil, readPrincipals: [String]?, schemas: [String: ClassSchema]
    ) {
        self.schema = schema
        self.predicate = predicate
        self.order = order
        self.limit = limit
        self.skip = skip
        self.keys = keys
        self.readPrincipals = readPrincipals
        self.schemas = schemas
    }
}

extension SQLStore {
    /// Runs a find; returns Parse objects (files without URLs, relations as placeholders).
    public func find(_ spec: FindSpec) async throws -> [[String: JSONValue]] {
        var statement: SQLFragment
        var fields: [(String, FieldType)]
        var pointId: String?
        if case .field(let path, .equals(.string(let id))) = spec.predicate, path.field == "objectId", path.subpath.isEmpty, spec.order.isEmpty {
            (statement, fields) = try PointStatements.shared.statement(spec, id: id, dialect: dialect) { s throws(ParseError) in
                try selectStatement(s)
            }
            statement.isPointLookup = true
            pointId = id
        } else {
            (statement, fields) = try selectStatement(spec)
            statement.isPointLookup = PointStatements.pinsOneObject(spec.predicate)
        }
        let finalStatement = statement
        let rows: [SQLRow]
        // A lookup by primary key (at most one row, so LIMIT 1 and no LIMIT agree) may share its statement with
        // concurrent ones; the id must be the statement's first parameter, which is what tells lookups apart.
        if let id = pointId, let pointReads = database.pointReads, Transaction.current == nil, spec.skip == 0, spec.limit != 0,
            statement.binds.first == .text(id)
        {
            rows = try await pointReads.read(id: id, statement: finalStatement, database: database) { ids in
                var many = spec
                many.predicate = .field(FieldPath(field: "objectId"), .isIn(ids.map { .string($0) }))
                many.limit = nil
                return try selectStatement(many).0
            }
        } else {
            rows = try await database.read { db in try await db.query(finalStatement) }
        }
        // Objects of one page mostly share a handful of ACLs: each distinct pair of permission lists is decoded once.
        var acls = ACLMemo()
        return rows.map { Self.decodeRow($0, fields: fields, schema: spec.schema, acls: &acls) }
    }

    public func count(_ spec: FindSpec) async throws -> Int {
        if let threshold = spec.estimateCountsFrom, spec.readPrincipals == nil, case .all = spec.predicate {
            let estimate = dialect.estimatedRowCount(spec.schema.className)
            let rows = try await database.read { db in try await db.query(estimate) }
            if case .integer(let n)? = rows.first?.first, n >= threshold { return Int(n) }
        }
        let compiler = WhereCompiler(dialect: dialect, schemas: spec.schemas, readPrincipals: spec.readPrincipals)
        let alias = "t0"
        var f = SQLFragment(unsafeSQL: "SELECT COUNT(*) FROM \(dialect.table(spec.schema.className)) AS \(alias) WHERE ")
        f.append(try compiler.compile(spec.predicate, schema: spec.schema, alias: alias))
        f.append(compiler.readFilter(alias: alias))
        let statement = f
        let rows = try await database.read { db in try await db.query(statement) }
        if case .integer(let n)? = rows.first?.first { return Int(n) }
        return 0
    }

    /// The SELECT for a find and the field columns it returns after the five system columns.
    public func selectStatement(_ spec: FindSpec) throws(ParseError) -> (SQLFragment, [(String, FieldType)]) {
        try Self.selectStatement(spec, dialect: dialect)
    }

    /// The SELECT for a find in `dialect` (no database needed) and the field columns it returns after the five
    /// system columns.
    public static func selectStatement(_ spec: FindSpec, dialect: any SQLDialect) throws(ParseError) -> (SQLFragment, [(String, FieldType)]) {
        let compiler = WhereCompiler(dialect: dialect, schemas: spec.schemas, readPrincipals: spec.readPrincipals)
        let alias = "t0"
        var fields = spec.keys.map { keys in spec.schema.storedFields.filter { keys.contains($0.name) } } ?? spec.schema.storedFields
        if !spec.includeInternal, fields.contains(where: { $0.name.hasPrefix("_") }) { fields.removeAll { $0.name.hasPrefix("_") } }
        var f = SQLFragment(unsafeSQL: SelectLists.shared.text(className: spec.schema.className, fields: fields, alias: alias, compiler: compiler))
        var scoreColumn = false
        if spec.withTextScore, let (path, search) = spec.predicate.textSearch,
            case .column(let e, _) = compiler.target(path, schema: spec.schema, alias: alias)
        {
            f.append(", ")
            f.append(
                dialect.textScore(
                    e, TextSearchTerms(term: search.term, caseSensitive: search.caseSensitive, diacriticSensitive: search.diacriticSensitive)))
            scoreColumn = true
        }
        f.append(" FROM \(dialect.table(spec.schema.className)) AS \(alias) WHERE ")
        f.append(try compiler.compile(spec.predicate, schema: spec.schema, alias: alias))
        f.append(compiler.readFilter(alias: alias))
        var orderParts: [SQLFragment] = []
        for key in spec.order {
            let direction = key.descending ? " DESC" : " ASC"
            if key.isTextScore {
                if let (path, search) = spec.predicate.textSearch, case .column(let e, _) = compiler.target(path, schema: spec.schema, alias: alias) {
                    orderParts.append(
                        dialect.textScore(
                            e, TextSearchTerms(term: search.term, caseSensitive: search.caseSensitive, diacriticSensitive: search.diacriticSensitive))
                            + direction)
                }
                continue
            }
            switch compiler.target(key.path, schema: spec.schema, alias: alias) {
            case .column(let e, _): orderParts.append(e + direction)
            case .json(let base, let path): orderParts.append(dialect.jsonExtract(base, path: path, as: .any) + direction)
            default: continue
            }
        }
        if spec.order.isEmpty, let (path, point) = spec.predicate.nearSphere,
            case .column(let e, .geoPoint) = compiler.target(path, schema: spec.schema, alias: alias)
        {
            orderParts.append(dialect.geoDistance(e, latitude: point.latitude, longitude: point.longitude) + " ASC")
        }
        if !orderParts.isEmpty {
            f.append(" ORDER BY ")
            f.append(SQLFragment.join(orderParts, ", "))
        }
        if let limit = spec.limit {
            // A literal, not a parameter: SQLite re-prepares a statement whose LIMIT is bound on every run.
            f.append(" LIMIT \(Int64(limit))")
        } else if spec.skip > 0 {
            f.append(dialect.unlimitedClause)
        }
        if spec.skip > 0 {
            f.append(" OFFSET \(Int64(spec.skip))")
        }
        var decoded = fields.map { ($0.name, $0.type) }
        if scoreColumn { decoded.append(("score", .number)) }
        return (f, decoded)
    }

    /// The `ACL` values of permission-list pairs already decoded while reading one result.
    struct ACLMemo {
        var last: (SQLValue, SQLValue, JSONValue?)?
        var seen: [String: JSONValue?] = [:]

        mutating func acl(_ readers: SQLValue, _ writers: SQLValue) -> JSONValue? {
            if let last, last.0 == readers, last.1 == writers { return last.2 }
            let key: String?
            if let r = readers.text, let w = writers.text { key = r + "\u{0}" + w } else { key = nil }
            if let key, let known = seen[key] {
                last = (readers, writers, known)
                return known
            }
            let value = SQLStore.decodeACL(readers, writers)
            if let key, seen.count < 64 { seen[key] = value }
            last = (readers, writers, value)
            return value
        }
    }

    static func decodeACL(_ readerList: SQLValue, _ writerList: SQLValue) -> JSONValue? {
        let readers = decodePermissions(readerList), writers = decodePermissions(writerList)
        guard readers != nil || writers != nil else { return nil }
        return ACL(readers: readers ?? [], writers: writers ?? []).json
    }

    /// A row of `objectId, createdAt, updatedAt, _rperm, _wperm, fields...` as a Parse object.
    public static func decodeRow(_ row: SQLRow, fields: [(String, FieldType)], schema: ClassSchema) -> [String: JSONValue] {
        var acls = ACLMemo()
        return decodeRow(row, fields: fields, schema: schema, acls: &acls)
    }

    static func decodeRow(_ row: SQLRow, fields: [(String, FieldType)], schema: ClassSchema, acls: inout ACLMemo) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        object.reserveCapacity(fields.count + 4)
        if case .text(let id) = row[0] { object["objectId"] = .string(id) }
        if case .text(let c) = row[1] { object["createdAt"] = .string(c) }
        if case .text(let u) = row[2] { object["updatedAt"] = .string(u) }
        if let acl = acls.acl(row[3], row[4]) { object["ACL"] = acl }
        for (i, (name, type)) in fields.enumerated() {
            let value = row[5 + i]
            if value == .null { continue }
            object[name] = StorageCodec.decode(value, as: type)
        }
        return object
    }

    static func decodePermissions(_ value: SQLValue) -> [String]? {
        guard let text = value.text else { return nil }
        if let fast = simpleStringList(text) { return fast }
        guard case .array(let items)? = try? JSONParser.parse(text) else { return nil }
        return items.compactMap(\.stringValue)
    }

    /// `["a","b"]` (or `["a", "b"]`) without escapes (what Parsley writes for ids and role names), read without the JSON parser;
    /// nil for anything else.
    static func simpleStringList(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            guard bytes.count >= 2, bytes[0] == UInt8(ascii: "["), bytes[bytes.count - 1] == UInt8(ascii: "]") else { return nil }
            var out: [String] = []
            var i = 1
            let end = bytes.count - 1
            while i < end {
                guard bytes[i] == UInt8(ascii: "\"") else { return nil }
                var j = i + 1
                while j < end, bytes[j] != UInt8(ascii: "\"") {
                    if bytes[j] == UInt8(ascii: "\\") { return nil }
                    j += 1
                }
                guard j < end else { return nil }
                out.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[(i + 1)..<j]), as: UTF8.self))
                i = j + 1
                if i < end {
                    guard bytes[i] == UInt8(ascii: ",") else { return nil }
                    i += 1
                    while i < end, bytes[i] == UInt8(ascii: " ") { i += 1 }  // PostgreSQL writes `["a", "b"]`
                    guard i < end else { return nil }
                }
            }
            return out
        }
    }
}
