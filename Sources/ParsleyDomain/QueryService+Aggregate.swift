public import ParsleyCore
import ParsleyStorage

extension QueryService {
    /// `GET /aggregate/:className` (the caller checks the master key): `distinct` with an optional `where`, or a
    /// `pipeline` (an array or an object of stages; stages given as parameters of their own are read too). Each runs
    /// as one SQL statement. An unknown class answers no results. Internal fields and credentials are refused
    /// wherever they are named (105, see `AggregateFields`); a statement the database refuses is 102, as Parse Server
    /// answers any failure of an aggregate, never a 5xx. `rawValues` / `rawFieldNames`: `AggregateRaw`.
    public func aggregate(_ className: String, params: [String: JSONValue], auth: Auth) async throws -> [JSONValue] {
        let raw = AggregateRaw(params, defaults: AggregateRaw(values: options.aggregationRawValues, fieldNames: options.aggregationRawFieldNames))
        var params = params
        for key in ["pipeline", "where"] { if let v = params[key] { params[key] = raw.input(v) } }
        if case .string(let name)? = params["distinct"] { params["distinct"] = .string(raw.inputField(name)) }
        for key in params.keys where ["match", "group", "project", "sort", "$match", "$group", "$project", "$sort"].contains(key) {
            params[key] = raw.input(params[key]!)
        }
        // Run again when a schema changed meanwhile, as a find is (`unskewed`): a field a write added while this read
        // ran is in its rows only if it was in the schema the statement was built from.
        return try await unskewed { try await aggregateRows(className, params: params, auth: auth) }.map(raw.output)
    }

    func aggregateRows(_ className: String, params: [String: JSONValue], auth: Auth) async throws -> [JSONValue] {
        let readOnly = auth.isReadOnly
        if readOnly, !options.allowAggregationForReadOnlyMasterKey {
            throw ParseError(.operationForbidden, "read-only masterKey isn't allowed to perform the aggregate operation.")
        }
        try requireExplainAllowed(params["explain"]?.isTruthy ?? false, auth: auth)
        guard Naming.isValidClassName(className) else { throw ParseError.invalidClassName(className) }
        guard let schema = try await schemas.current(className) else { return [] }  // (re-read on a miss: another node's class)
        let all = schemas.all()
        // A client's parser: `_` keys are 105 in `where` and `$match`, as in a client's find.
        var parser = QueryParser(allowInternalFields: false, now: .now)
        parser.schemas = all
        if let field = params["distinct"] {
            guard let name = field.stringValue, !name.isEmpty else { throw ParseError(.invalidQuery, "distinct must be a field name") }
            try AggregateFields.check(name, in: className, readOnly: readOnly)
            let predicate = try parser.parse(params["where"], className: className)
            try AggregateFields.check(predicate, in: className, readOnly: readOnly)
            return try await runAggregate { try await store.distinct(name, schema: schema, predicate: predicate, schemas: all) }
        }
        var stages = params["pipeline"]
        if stages == nil {
            let names = ["match", "group", "project", "sort", "skip", "limit", "count"]
            let given = params.filter { names.contains($0.key.hasPrefix("$") ? String($0.key.dropFirst()) : $0.key) }
            guard !given.isEmpty else { throw ParseError(.invalidQuery, "Send distinct or pipeline.") }
            stages = .object(given)
        }
        let pipeline = try AggregatePipeline.parse(stages!)
        for field in pipeline.fieldReferences { try AggregateFields.check(field, in: className, readOnly: readOnly) }
        let predicate = try parser.parse(pipeline.match, className: className)
        try AggregateFields.check(predicate, in: className, readOnly: readOnly)
        if pipeline.group != nil || pipeline.count != nil {
            let rows = try await runAggregate { try await store.aggregate(pipeline, schema: schema, predicate: predicate, schemas: all) }
            return rows.map(JSONValue.object)
        }
        // $match, $project, $sort, $skip, $limit alone: a find.
        var order: [SortKey] = []
        for (key, descending) in pipeline.sort {
            order.append(SortKey(path: try parser.fieldPath(key == "_id" ? "objectId" : key), descending: descending))
        }
        let spec = FindSpec(
            schema: schema, predicate: predicate, order: order, limit: pipeline.limit, skip: pipeline.skip,
            keys: pipeline.project.map { Set($0.map { $0 == "_id" ? "objectId" : $0 }) }, readPrincipals: nil, schemas: all)
        let found = try await runAggregate { try await store.find(spec) }
        return found.map {
            .object(
                AggregateFields.visible(
                    shape($0, schema: schema, keys: pipeline.project.map(Set.init), exclude: []), in: className, readOnly: readOnly))
        }
    }

    /// `run`, with any other failure of the database as 102 (Parse Server answers an aggregate the database refuses
    /// with 102 too). The database's message is not passed on.
    func runAggregate<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await run(body)
        } catch StoreError.database {
            throw ParseError(.invalidQuery, "The database could not run this aggregate.")
        }
    }
}
