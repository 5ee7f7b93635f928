/// The query AST: what a `where` means, independent of any database. The SQL compilers and (later) the
/// LiveQuery matcher consume the same tree.
public indirect enum QueryNode: Sendable, Hashable {
    case all
    case and([QueryNode])
    case or([QueryNode])
    case nor([QueryNode])
    case field(FieldPath, Condition)
    /// Objects that are members of relation `key` of `owner`.
    case relatedTo(owner: Pointer, key: String)
}

/// A field reference, possibly dotted into an Object field: `stats.wins` is field `stats`, subpath `["wins"]`.
public struct FieldPath: Sendable, Hashable, CustomStringConvertible {
    public var field: String
    public var subpath: [String]

    public init(field: String, subpath: [String] = []) {
        self.field = field
        self.subpath = subpath
    }

    public var description: String { ([field] + subpath).joined(separator: ".") }
}

public enum Comparison: String, Sendable, Hashable {
    case lessThan = "$lt", lessThanOrEqual = "$lte", greaterThan = "$gt", greaterThanOrEqual = "$gte"
}

/// A sub-query used by `$inQuery`, `$notInQuery`, `$select` and `$dontSelect`.
public struct SubQuery: Sendable, Hashable {
    public var className: String
    public var predicate: QueryNode
    public init(className: String, predicate: QueryNode) {
        self.className = className
        self.predicate = predicate
    }
}

public struct TextSearch: Sendable, Hashable {
    public var term: String
    public var language: String?
    public var caseSensitive: Bool
    public var diacriticSensitive: Bool
}

/// One constraint on one field. Values are normalised Parse JSON (dates canonical, `$relativeTime` resolved).
public enum Condition: Sendable, Hashable {
    case equals(JSONValue)
    case notEquals(JSONValue)
    case compare(Comparison, JSONValue)
    case isIn([JSONValue])
    case notIn([JSONValue])
    case containsAll([JSONValue])
    /// `$all` whose elements are all `{"$regex":..}`: every pattern matches some element.
    case containsAllMatching([RegexPattern])
    case containedBy([JSONValue])
    case exists(Bool)
    case regex(RegexPattern)
    case text(TextSearch)
    case select(SubQuery, key: String)
    case dontSelect(SubQuery, key: String)
    case inQuery(SubQuery)
    case notInQuery(SubQuery)
    case nearSphere(GeoPoint, maxDistanceRadians: Double?)
    case withinBox(southwest: GeoPoint, northeast: GeoPoint)
    case withinPolygon([GeoPoint])
    case withinCenterSphere(GeoPoint, radians: Double)
    case geoIntersects(GeoPoint)
}

public struct RegexPattern: Sendable, Hashable {
    public var pattern: String
    public var options: String
    public init(pattern: String, options: String) {
        self.pattern = pattern
        self.options = options
    }
}

public struct SortKey: Sendable, Equatable {
    public var path: FieldPath
    public var descending: Bool
    /// `$score`: relevance of a `$text` search.
    public var isTextScore: Bool { path.field == "$score" }

    public init(path: FieldPath, descending: Bool) {
        self.path = path
        self.descending = descending
    }
}

extension QueryNode {
    /// The first `$nearSphere` condition at the top level (implicit sort by distance).
    public var nearSphere: (FieldPath, GeoPoint)? {
        switch self {
        case .field(let path, .nearSphere(let point, _)): return (path, point)
        case .and(let nodes):
            for n in nodes { if let hit = n.nearSphere { return hit } }
            return nil
        default: return nil
        }
    }

    /// The first `$text` condition at the top level (for `$score`).
    public var textSearch: (FieldPath, TextSearch)? {
        switch self {
        case .field(let path, .text(let t)): return (path, t)
        case .and(let nodes):
            for n in nodes { if let hit = n.textSearch { return hit } }
            return nil
        default: return nil
        }
    }

    /// Every field name the predicate mentions at the top level of its class.
    public var referencedFields: Set<String> {
        switch self {
        case .all, .relatedTo: return []
        case .and(let n), .or(let n), .nor(let n): return n.reduce(into: Set()) { $0.formUnion($1.referencedFields) }
        case .field(let p, _): return [p.field]
        }
    }
}
