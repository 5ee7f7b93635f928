public import ParsleyCore

/// Parse Server 9's REST keys of `requestComplexity`, checked for callers without the master or maintenance key.
/// A limit of nil is off, which is Parse Server 9's default for every one of them (-1).
public struct RequestComplexity: Sendable, Equatable {
    /// Longest include path, in pointer hops (`include=a.b.c` is 3).
    public var includeDepth: Int?
    /// Include paths in one query, every prefix counted (`include=a.b` is `a` and `a.b`, as Parse Server counts them).
    public var includeCount: Int?
    /// Nesting of `$inQuery`, `$notInQuery`, `$select` and `$dontSelect` (one of them is depth 1).
    public var subqueryDepth: Int?
    /// Nesting of `$or`, `$and` and `$nor` (one of them is depth 1; other operators add none).
    public var queryDepth: Int?
    /// Sub-requests in one `/batch`.
    public var batchRequestLimit: Int?

    public init() {}

    static func exempt(_ auth: Auth) -> Bool { auth.isMaster || auth.isMaintenance }

    /// 102, with Parse Server 9's messages, when a find's includes go deeper or are more than allowed.
    public func checkIncludes(_ paths: [[String]], auth: Auth) throws(ParseError) {
        guard !Self.exempt(auth), !paths.isEmpty else { return }
        if let includeDepth, let deepest = paths.map(\.count).max(), deepest > includeDepth {
            throw ParseError(.invalidQuery, "Include depth of \(deepest) exceeds maximum allowed depth of \(includeDepth)")
        }
        if let includeCount {
            var prefixes = Set<[String]>()
            for path in paths where !path.isEmpty {
                for n in 1...path.count { prefixes.insert(Array(path.prefix(n))) }
            }
            if prefixes.count > includeCount {
                throw ParseError(.invalidQuery, "Number of include fields (\(prefixes.count)) exceeds maximum allowed (\(includeCount))")
            }
        }
    }

    /// 102 when a `where` nests logical operators or sub-queries deeper than allowed.
    public func checkWhere(_ whereValue: JSONValue?, auth: Auth) throws(ParseError) {
        guard !Self.exempt(auth), let whereValue, queryDepth != nil || subqueryDepth != nil else { return }
        let (logical, subqueries) = Self.depths(whereValue, budget: 64)
        if let queryDepth, logical > queryDepth {
            throw ParseError(.invalidQuery, "Query condition nesting depth exceeds maximum allowed depth of \(queryDepth)")
        }
        if let subqueryDepth, subqueries > subqueryDepth {
            throw ParseError(.invalidQuery, "Subquery nesting depth exceeds maximum allowed depth of \(subqueryDepth)")
        }
    }

    /// 107 when a batch has more sub-requests than allowed (Parse Server 9's message).
    public func checkBatch(_ count: Int, auth: Auth) throws(ParseError) {
        guard !Self.exempt(auth), let batchRequestLimit, count > batchRequestLimit else { return }
        throw ParseError(
            .invalidJSON, "Batch request contains \(count) sub-requests, which exceeds the limit of \(batchRequestLimit).")
    }

    /// The deepest nesting of logical operators and of sub-queries in a `where` (and its sub-queries' `where`s). The walk
    /// stops `budget` levels down (the JSON parser's own nesting limit bounds it anyway).
    static func depths(_ value: JSONValue, budget: Int) -> (logical: Int, subqueries: Int) {
        guard budget > 0 else { return (0, 0) }
        var logical = 0
        var subqueries = 0
        switch value {
        case .array(let items):
            for item in items {
                let d = depths(item, budget: budget - 1)
                logical = max(logical, d.logical)
                subqueries = max(subqueries, d.subqueries)
            }
        case .object(let fields):
            for (key, child) in fields {
                var d = depths(child, budget: budget - 1)
                switch key {
                case "$or", "$and", "$nor": d.logical += 1
                case "$inQuery", "$notInQuery", "$select", "$dontSelect": d.subqueries += 1
                default: break
                }
                logical = max(logical, d.logical)
                subqueries = max(subqueries, d.subqueries)
            }
        default: break
        }
        return (logical, subqueries)
    }
}
