import ParsleyCore

/// A `where` input as Parse's REST query operators (docs/graphql-contract.md §4.3), and `ACLInput` as Parse's ACL
/// map. The services then check them as they check a REST request.
enum GraphQLWhere {
    static let operators: [String: String] = [
        "equalTo": "$eq", "notEqualTo": "$ne", "lessThan": "$lt", "lessThanOrEqualTo": "$lte", "greaterThan": "$gt",
        "greaterThanOrEqualTo": "$gte", "in": "$in", "notIn": "$nin", "exists": "$exists", "matchesRegex": "$regex",
        "options": "$options", "containedBy": "$containedBy", "contains": "$all", "inQueryKey": "$select",
        "notInQueryKey": "$dontSelect", "nearSphere": "$nearSphere", "maxDistance": "$maxDistance",
        "maxDistanceInRadians": "$maxDistanceInRadians", "maxDistanceInMiles": "$maxDistanceInMiles",
        "maxDistanceInKilometers": "$maxDistanceInKilometers",
    ]

    /// `{score: {greaterThan: 10}, OR: [...]}` → `{"score": {"$gt": 10}, "$or": [...]}`. `shapes` are the classes
    /// shown (a pointer's `have` is read with its target's fields).
    static func parse(_ input: [String: JSONValue], _ shape: ClassShape, _ shapes: [String: ClassShape]) throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for (key, value) in input {
            switch key {
            case "AND", "OR", "NOR":
                guard case .array(let items) = value else { continue }
                out["$" + key.lowercased()] = .array(
                    try items.map { item in
                        guard case .object(let clause) = item else { throw ParseError.invalidQuery("Invalid \(key) clause") }
                        return .object(try parse(clause, shape, shapes))
                    })
            default:
                let field = key == "id" ? "objectId" : key
                // A subquery's raw `where` may hold a plain value: an equality, as on REST.
                guard case .object(let constraints) = value else {
                    out[field] = operand(value, field: field, shape)
                    continue
                }
                let type = shape.schema.fields[field]
                if let target = type?.targetClass {
                    for (name, constraint) in try related(constraints, field: field, type: type, target: target, shapes) {
                        out[name] = constraint
                    }
                } else if type == .object || type == .acl {
                    for (name, constraint) in try keyValues(constraints, field: field) {
                        var parsed = out[name]?.objectValue ?? [:]
                        parsed.merge(constraint) { _, new in new }
                        out[name] = .object(parsed)
                    }
                } else {
                    var parsed = out[field]?.objectValue ?? [:]
                    parsed.merge(try self.constraints(constraints, field: field, shape, shapes)) { _, new in new }
                    out[field] = .object(parsed)
                }
            }
        }
        return out
    }

    /// One field's operators (`{greaterThan: 10, exists: true}` → `{"$gt": 10, "$exists": true}`).
    static func constraints(
        _ constraints: [String: JSONValue], field: String, _ shape: ClassShape, _ shapes: [String: ClassShape]
    ) throws -> [String: JSONValue] {
        var parsed: [String: JSONValue] = [:]
        for (op, operand) in constraints where operand != .null {
            switch op {
            case "exists", "options", "matchesRegex", "maxDistance", "maxDistanceInRadians", "maxDistanceInMiles", "maxDistanceInKilometers":
                parsed[operators[op]!] = operand
            case "inQueryKey", "notInQueryKey":
                parsed[operators[op]!] = try select(operand, shapes)
            case "text":
                guard case .object(let search)? = operand["search"] else { throw ParseError.invalidQuery("Invalid text search") }
                var out: [String: JSONValue] = [:]
                for (name, value) in search { out["$" + name] = value }
                parsed["$text"] = ["$search": .object(out)]
            case "nearSphere":
                parsed["$nearSphere"] = FieldInputs.geoPoint(operand)
            case "within":
                let box = operand["box"]
                parsed["$within"] = ["$box": [FieldInputs.geoPoint(box?["bottomLeft"] ?? .null), FieldInputs.geoPoint(box?["upperRight"] ?? .null)]]
            case "geoWithin":
                if case .array(let points)? = operand["polygon"] {
                    parsed["$geoWithin"] = ["$polygon": .array(points.map(FieldInputs.geoPoint))]
                } else if let sphere = operand["centerSphere"], sphere != .null {
                    parsed["$geoWithin"] = ["$centerSphere": [FieldInputs.geoPoint(sphere["center"] ?? .null), sphere["distance"] ?? .null]]
                }
            case "geoIntersects":
                parsed["$geoIntersects"] = ["$point": FieldInputs.geoPoint(operand["point"] ?? .null)]
            default:
                guard let parseOp = operators[op] else { throw ParseError.invalidQuery("Invalid constraint \(op)") }
                parsed[parseOp] = self.operand(operand, field: field, shape)
            }
        }
        return parsed
    }

    /// `{query: {className, where}, key}` → `{query: {className, where: <parsed>}, key}` (`$select`/`$dontSelect`).
    static func select(_ operand: JSONValue, _ shapes: [String: ClassShape]) throws -> JSONValue {
        guard let className = operand["query"]?["className"]?.stringValue, let key = operand["key"] else {
            throw ParseError.invalidQuery("Improper usage of $select")
        }
        var whereValue = operand["query"]?["where"]?.objectValue ?? [:]
        if let target = shapes[className] { whereValue = try parse(whereValue, target, shapes) }
        return ["query": ["className": .string(className), "where": .object(whereValue)], "key": key]
    }

    /// A pointer's or relation's `have`, `haveNot`, `exists` (`$inQuery`, `$notInQuery`, `$exists`; a relation's
    /// `exists` is an `$inQuery`/`$notInQuery` of any object).
    static func related(
        _ constraints: [String: JSONValue], field: String, type: FieldType?, target: String, _ shapes: [String: ClassShape]
    ) throws -> [String: JSONValue] {
        var parsed: [String: JSONValue] = [:]
        for (op, operand) in constraints where operand != .null {
            switch op {
            case "have", "haveNot":
                let inner = try shapes[target].map { try parse(operand.objectValue ?? [:], $0, shapes) } ?? [:]
                parsed[op == "have" ? "$inQuery" : "$notInQuery"] = ["where": .object(inner), "className": .string(target)]
            case "exists":
                if case .relation? = type {
                    let any: JSONValue = ["where": ["objectId": ["$exists": true]], "className": .string(target)]
                    parsed[operand == .bool(true) ? "$inQuery" : "$notInQuery"] = any
                } else {
                    parsed["$exists"] = operand
                }
            default: throw ParseError.invalidQuery("Invalid constraint \(op)")
            }
        }
        return [field: .object(parsed)]
    }

    /// An `Object` field's `{lessThan: {key: "a.b", value: 100}}` → `{"f.a.b": {"$lt": 100}}`.
    static func keyValues(_ constraints: [String: JSONValue], field: String) throws -> [String: [String: JSONValue]] {
        var out: [String: [String: JSONValue]] = [:]
        for (op, operand) in constraints where operand != .null {
            guard let parseOp = operators[op] else { throw ParseError.invalidQuery("Invalid constraint \(op)") }
            if op == "exists" {
                out[field, default: [:]][parseOp] = operand
                continue
            }
            for pair in operand.arrayValue ?? [operand] {
                guard let key = pair["key"]?.stringValue else { throw ParseError.invalidQuery("Invalid constraint \(op)") }
                out[field + "." + key, default: [:]][parseOp] = pair["value"] ?? .null
            }
        }
        return out
    }

    /// A constraint's value as Parse JSON: ids decoded from global ids, dates as `{__type: "Date", iso}`.
    static func operand(_ value: JSONValue, field: String, _ shape: ClassShape) -> JSONValue {
        if case .array(let items) = value { return .array(items.map { operand($0, field: field, shape) }) }
        if field == "objectId", case .string(let id) = value { return .string(GraphQLNames.objectId(from: id, className: shape.className)) }
        if field == "createdAt" || field == "updatedAt" || shape.schema.fields[field] == .date, case .string(let iso) = value {
            return ["__type": "Date", "iso": .string(iso)]
        }
        return value
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
