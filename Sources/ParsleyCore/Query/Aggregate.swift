/// `GET /aggregate/:className`'s `pipeline` (Parse Server's PostgreSQL subset), checked and put in the one order a
/// single SQL statement can run it: `$match`, then `$group` (or `$project`), `$sort`, `$skip`, `$limit`; `$count` last.
/// Anything else is Parse's 102.
public struct AggregatePipeline: Sendable, Equatable {
    /// A value computed per object: a field (`"$score"`), a date part of a field (`{"$year": "$createdAt"}`) or a
    /// constant.
    public enum Expression: Sendable, Equatable {
        case field(String)
        case datePart(DatePart, field: String)
        case constant(JSONValue)
    }

    public enum DatePart: String, Sendable, CaseIterable {
        case year, month, dayOfMonth, hour, minute, second
    }

    public enum Accumulator: Sendable, Equatable {
        case sum(Expression)
        case avg(String)
        case min(String)
        case max(String)
    }

    /// `_id` of a `$group`: one value (null: everything in one group) or an object of named values.
    public enum GroupKey: Sendable, Equatable {
        case single(Expression?)
        case object([(String, Expression)])

        public static func == (a: GroupKey, b: GroupKey) -> Bool {
            switch (a, b) {
            case (.single(let x), .single(let y)): return x == y
            case (.object(let x), .object(let y)): return x.elementsEqual(y) { $0.0 == $1.0 && $0.1 == $1.1 }
            default: return false
            }
        }
    }

    public struct Group: Sendable, Equatable {
        public var key: GroupKey
        public var accumulators: [(name: String, accumulator: Accumulator)]

        public static func == (a: Group, b: Group) -> Bool {
            a.key == b.key && a.accumulators.elementsEqual(b.accumulators) { $0.name == $1.name && $0.accumulator == $1.accumulator }
        }
    }

    /// `$match` conditions (a `where`), combined with `$and` when there are several.
    public var match: JSONValue?
    public var group: Group?
    /// `$project`: the fields kept (without a group).
    public var project: [String]?
    public var sort: [(key: String, descending: Bool)] = []
    public var skip = 0
    public var limit: Int?
    /// `$count`: the name of the one field of the one result.
    public var count: String?

    public static func == (a: AggregatePipeline, b: AggregatePipeline) -> Bool {
        a.match == b.match && a.group == b.group && a.project == b.project && a.skip == b.skip && a.limit == b.limit && a.count == b.count
            && a.sort.elementsEqual(b.sort) { $0.key == $1.key && $0.descending == $1.descending }
    }

    public init() {}

    /// Every field of the class the stages after `$match` name: the `$group` key and accumulator operands, or (without a
    /// group) the `$project` and `$sort` fields (`_id` as `objectId`). After a `$group`, `$sort` names its results.
    public var fieldReferences: [String] {
        func fields(_ e: Expression) -> [String] {
            switch e {
            case .field(let f), .datePart(_, let f): return [f]
            case .constant: return []
            }
        }
        guard let group else {
            return ((project ?? []) + sort.map(\.key)).map { $0 == "_id" ? "objectId" : $0 }
        }
        var names: [String] = []
        switch group.key {
        case .single(let e?): names += fields(e)
        case .single(nil): break
        case .object(let parts): for (_, e) in parts { names += fields(e) }
        }
        for (_, accumulator) in group.accumulators {
            switch accumulator {
            case .sum(let e): names += fields(e)
            case .avg(let f), .min(let f), .max(let f): names.append(f)
            }
        }
        return names
    }

    /// Parses `pipeline` (an array of stages, or one object of stages); stage names with or without `$`.
    public static func parse(_ pipeline: JSONValue) throws(ParseError) -> AggregatePipeline {
        // The position each stage may take: a later stage never comes before an earlier one.
        let rank = ["match": 0, "group": 1, "project": 1, "sort": 2, "skip": 3, "limit": 4, "count": 5]
        func position(_ raw: String) -> Int { rank[raw.hasPrefix("$") ? String(raw.dropFirst()) : raw] ?? 99 }
        var stages: [(String, JSONValue)] = []
        switch pipeline {
        case .array(let items):
            for item in items {
                guard case .object(let o) = item, o.count == 1, let (name, value) = o.first else {
                    throw ParseError(.invalidQuery, "Each pipeline stage must be an object with one stage name.")
                }
                stages.append((name, value))
            }
        case .object(let o):
            // An object keeps no order: its stages run in the one order they can.
            stages = o.sorted { (position($0.key), $0.key) < (position($1.key), $1.key) }.map { ($0.key, $0.value) }
        default:
            throw ParseError(.invalidQuery, "pipeline must be an array or an object of stages")
        }
        var p = AggregatePipeline()
        var last = -1
        var matches: [JSONValue] = []
        for (raw, value) in stages {
            let name = raw.hasPrefix("$") ? String(raw.dropFirst()) : raw
            guard let position = rank[name] else { throw ParseError(.invalidQuery, "Invalid aggregate stage '\(raw)'.") }
            guard position >= last || (name == "match" && last == 0) else {
                throw ParseError(.invalidQuery, "The aggregate stage '\(raw)' cannot come after the stages before it in one query.")
            }
            last = position
            switch name {
            case "match":
                guard case .object = value else { throw ParseError(.invalidQuery, "$match must be an object") }
                matches.append(value)
            case "group":
                guard p.project == nil else { throw ParseError(.invalidQuery, "$group and $project cannot both be used in one pipeline.") }
                p.group = try parseGroup(value)
            case "project":
                guard p.group == nil else { throw ParseError(.invalidQuery, "$group and $project cannot both be used in one pipeline.") }
                guard case .object(let o) = value else { throw ParseError(.invalidQuery, "$project must be an object") }
                p.project = o.filter { $0.value.isTruthy }.keys.sorted()
            case "sort":
                guard case .object(let o) = value, !o.isEmpty else { throw ParseError(.invalidQuery, "$sort must be an object of fields") }
                for (key, direction) in o.sorted(by: { $0.key < $1.key }) {
                    guard let d = direction.integerValue, d == 1 || d == -1 else { throw ParseError(.invalidQuery, "$sort values must be 1 or -1") }
                    p.sort.append((key, d == -1))
                }
            case "skip":
                guard let n = value.integerValue, n >= 0 else { throw ParseError(.invalidQuery, "$skip must be a non-negative integer") }
                p.skip = n
            case "limit":
                guard let n = value.integerValue, n > 0 else { throw ParseError(.invalidQuery, "$limit must be a positive integer") }
                p.limit = n
            default:  // count
                guard let field = value.stringValue, !field.isEmpty, !field.hasPrefix("$") else {
                    throw ParseError(.invalidQuery, "$count must be a field name")
                }
                p.count = field
            }
        }
        if !matches.isEmpty { p.match = matches.count == 1 ? matches[0] : ["$and": .array(matches)] }
        return p
    }

    static func parseGroup(_ value: JSONValue) throws(ParseError) -> Group {
        guard case .object(let o) = value else { throw ParseError(.invalidQuery, "$group must be an object") }
        guard let id = o["_id"] ?? o["objectId"] else { throw ParseError(.invalidQuery, "$group needs an _id") }
        let key: GroupKey
        switch id {
        case .null: key = .single(nil)
        case .object(let fields) where !fields.keys.contains(where: { $0.hasPrefix("$") }):
            var parts: [(String, Expression)] = []
            for (name, v) in fields.sorted(by: { $0.key < $1.key }) { parts.append((name, try expression(v))) }
            key = .object(parts)
        default: key = .single(try expression(id))
        }
        var accumulators: [(String, Accumulator)] = []
        for (name, spec) in o.sorted(by: { $0.key < $1.key }) where name != "_id" && name != "objectId" {
            guard case .object(let a) = spec, a.count == 1, let (op, operand) = a.first else {
                throw ParseError(.invalidQuery, "$group field \(name) must be one accumulator such as {\"$sum\": 1}")
            }
            func field() throws(ParseError) -> String {
                guard case .field(let f) = try expression(operand) else { throw ParseError(.invalidQuery, "\(op) needs a field (\"$name\")") }
                return f
            }
            switch op {
            case "$sum": accumulators.append((name, .sum(try expression(operand))))
            case "$avg": accumulators.append((name, .avg(try field())))
            case "$min": accumulators.append((name, .min(try field())))
            case "$max": accumulators.append((name, .max(try field())))
            default: throw ParseError(.invalidQuery, "Invalid accumulator \(op); use $sum, $avg, $min or $max.")
            }
        }
        return Group(key: key, accumulators: accumulators)
    }

    static func expression(_ value: JSONValue) throws(ParseError) -> Expression {
        switch value {
        case .string(let s) where s.hasPrefix("$"):
            let name = String(s.dropFirst())
            // Internal fields (the password hash, tokens, `_rperm`...) are never aggregated: 105, as everywhere in aggregate.
            if name.hasPrefix("_") { throw ParseError.invalidKeyName(name) }
            guard Naming.isValidFieldName(name) || ["objectId", "createdAt", "updatedAt"].contains(name) else {
                throw ParseError(.invalidQuery, "Invalid field \(s)")
            }
            return .field(name)
        case .int, .double: return .constant(value)
        case .object(let o) where o.count == 1:
            let (op, operand) = o.first!
            guard op.hasPrefix("$"), let part = DatePart(rawValue: String(op.dropFirst())) else {
                throw ParseError(.invalidQuery, "Invalid expression \(op); date parts are $year, $month, $dayOfMonth, $hour, $minute, $second.")
            }
            guard case .field(let f) = try expression(operand) else { throw ParseError(.invalidQuery, "\(op) needs a field (\"$name\")") }
            return .datePart(part, field: f)
        default:
            throw ParseError(.invalidQuery, "Invalid expression \(JSONWriter.string(value)): use \"$field\", a number or a date part.")
        }
    }
}
