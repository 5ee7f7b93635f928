import ParsleyCore

/// GraphQL inputs as the REST layer's JSON: `where` constraints as Parse's query operators, mutation fields as a
/// write body (docs/graphql-contract.md §4.2, §4.3). The services then check them as they check a REST request.
enum GraphQLWhere {
    static let operators: [String: String] = [
        "equalTo": "$eq", "notEqualTo": "$ne", "lessThan": "$lt", "lessThanOrEqualTo": "$lte", "greaterThan": "$gt",
        "greaterThanOrEqualTo": "$gte", "in": "$in", "notIn": "$nin", "exists": "$exists",
    ]

    /// `{score: {greaterThan: 10}, OR: [...]}` → `{"score": {"$gt": 10}, "$or": [...]}`.
    static func parse(_ input: [String: JSONValue], _ shape: ClassShape) throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for (key, value) in input {
            switch key {
            case "AND", "OR", "NOR":
                guard case .array(let items) = value else { continue }
                out["$" + key.lowercased()] = .array(
                    try items.map { item in
                        guard case .object(let clause) = item else { throw ParseError.invalidQuery("Invalid \(key) clause") }
                        return .object(try parse(clause, shape))
                    })
            default:
                guard case .object(let constraints) = value else { continue }
                let field = key == "id" ? "objectId" : key
                var parsed = out[field]?.objectValue ?? [:]
                for (op, operand) in constraints {
                    guard let parseOp = operators[op] else { throw ParseError.invalidQuery("Invalid constraint \(op)") }
                    parsed[parseOp] = op == "exists" ? operand : self.operand(operand, field: field, shape)
                }
                out[field] = .object(parsed)
            }
        }
        return out
    }

    /// A constraint's value as Parse JSON: ids decoded from global ids, dates as `{__type: "Date", iso}`.
    static func operand(_ value: JSONValue, field: String, _ shape: ClassShape) -> JSONValue {
        if case .array(let items) = value { return .array(items.map { operand($0, field: field, shape) }) }
        if field == "objectId", case .string(let id) = value { return .string(GraphQLNames.objectId(from: id, className: shape.className)) }
        if shape.schema.fields[field] == .date, case .string(let iso) = value { return ["__type": "Date", "iso": .string(iso)] }
        return value
    }

    /// A create's or update's `fields` input as a REST body: dates as Parse dates, `ACL` as Parse's ACL map, and on an
    /// update `null` as `{"__op": "Delete"}` (on a create a `null` field is left out).
    static func body(_ input: JSONValue?, _ shape: ClassShape, update: Bool) -> [String: JSONValue] {
        guard case .object(let fields)? = input else { return [:] }
        var out: [String: JSONValue] = [:]
        for (key, value) in fields {
            if value == .null {
                if update { out[key] = ["__op": "Delete"] }
                continue
            }
            if key == "ACL" {
                out[key] = acl(value)
            } else if shape.schema.fields[key] == .date, case .string(let iso) = value {
                out[key] = ["__type": "Date", "iso": .string(iso)]
            } else {
                out[key] = value
            }
        }
        return out
    }

    /// `ACLInput` → `{"<userId>": {read, write}, "role:<name>": {...}, "*": {...}}`; a `false` right is left out.
    static func acl(_ input: JSONValue) -> JSONValue {
        func rights(_ rule: JSONValue) -> JSONValue? {
            var out: [String: JSONValue] = [:]
            if rule["read"] == .bool(true) { out["read"] = .bool(true) }
            if rule["write"] == .bool(true) { out["write"] = .bool(true) }
            return out.isEmpty ? nil : .object(out)
        }
        var acl: [String: JSONValue] = [:]
        for user in input["users"]?.arrayValue ?? [] {
            guard let id = user["userId"]?.stringValue else { continue }
            acl[GraphQLNames.objectId(from: id, className: "_User")] = rights(user)
        }
        for role in input["roles"]?.arrayValue ?? [] {
            guard let name = role["roleName"]?.stringValue else { continue }
            acl["role:" + name] = rights(role)
        }
        if let rule = input["public"], rule != .null { acl["*"] = rights(rule) }
        return .object(acl)
    }
}
