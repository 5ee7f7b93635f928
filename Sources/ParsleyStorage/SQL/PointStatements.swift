import ParsleyCore
import Synchronization

/// The SELECT of a lookup by id (`objectId` equal to one id, no order, no skip), kept per class, select list and
/// caller's read principals, with the place of the id among its parameters: the text and parameters
/// `SQLStore.selectStatement` builds, without building them on every get (a profile of get by id had the building at
/// 5% of the server's time). An entry is made by that same function, with a stand-in id that must appear exactly
/// once among the parameters and nowhere in the text; otherwise the lookup is not kept.
final class PointStatements: Sendable {
    static let shared = PointStatements()

    private struct Key: Hashable {
        let dialect: ObjectIdentifier
        let tablePrefix: String
        let className: String
        let principals: [String]?
        let keys: Set<String>?
        let includeInternal: Bool
        let limit: Int?
    }
    private struct Entry {
        let columns: [(name: String, type: FieldType)]
        let statement: SQLFragment
        let fields: [(String, FieldType)]
        let idIndex: Int
    }
    private let entries = Mutex<[Key: Entry]>([:])
    /// Classes, keys and callers' principals vary; past this many entries the cache starts over.
    private static let limit = 1024
    /// Stands for the id while the statement is built (alphanumeric, as the ids it stands for).
    static let standIn = "pTsTaNdIn0x7fq"

    /// The lookup of `id` described by `spec` (whose predicate is `objectId` equal to `id`), from the cache or built.
    func statement(
        _ spec: FindSpec, id: String, dialect: any SQLDialect, build: (FindSpec) throws(ParseError) -> (SQLFragment, [(String, FieldType)])
    ) throws(ParseError) -> (SQLFragment, [(String, FieldType)]) {
        // Only plain ids: the compiler's text does not depend on them (it binds them), which the stand-in shows.
        guard (1...64).contains(id.utf8.count), id.utf8.allSatisfy(Self.isPlain), spec.skip == 0, !spec.withTextScore else { return try build(spec) }
        let key = Key(
            dialect: ObjectIdentifier(type(of: dialect)), tablePrefix: dialect.tablePrefix, className: spec.schema.className,
            principals: spec.readPrincipals, keys: spec.keys,
            includeInternal: spec.includeInternal, limit: spec.limit)
        let columns = spec.schema.storedFields
        if let hit = entries.withLock({ $0[key] }), Self.same(hit.columns, columns) {
            var statement = hit.statement
            statement.binds[hit.idIndex] = .text(id)
            return (statement, hit.fields)
        }
        var standIn = spec
        standIn.predicate = .field(FieldPath(field: "objectId"), .equals(.string(Self.standIn)))
        let (template, fields) = try build(standIn)
        let marks = template.binds.indices.filter { template.binds[$0] == .text(Self.standIn) }
        guard marks.count == 1, !template.sql.contains(Self.standIn) else { return try build(spec) }
        entries.withLock {
            if $0.count >= Self.limit { $0.removeAll() }
            $0[key] = Entry(columns: columns, statement: template, fields: fields, idIndex: marks[0])
        }
        var statement = template
        statement.binds[marks[0]] = .text(id)
        return (statement, fields)
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte == 0x2D
    }

    private static func same(_ a: [(name: String, type: FieldType)], _ b: [(name: String, type: FieldType)]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.name == $1.name && $0.type == $1.type }
    }

    /// Whether a predicate pins at most one object by primary key and asks nothing costly of it: `objectId` equal to
    /// one id among its top-level conjuncts (as a pointer-permission or ACL'd get has), the other conditions plain
    /// comparisons (no sub-query, relation, regex, text or geo test). Such a statement touches one row, whatever the
    /// class's size, so a backend may run it without leaving the caller's thread.
    static func pinsOneObject(_ predicate: QueryNode) -> Bool {
        switch predicate {
        case .field(let path, .equals(.string)) where path.field == "objectId" && path.subpath.isEmpty: return true
        case .and(let nodes): return nodes.contains(where: pinsOneObject) && nodes.allSatisfy(isPlain)
        default: return false
        }
    }

    private static func isPlain(_ node: QueryNode) -> Bool {
        switch node {
        case .all: return true
        case .and(let nodes), .or(let nodes), .nor(let nodes): return nodes.allSatisfy(isPlain)
        case .relatedTo: return false
        case .field(_, let condition):
            switch condition {
            case .equals, .notEquals, .compare, .isIn, .notIn, .containsAll, .containedBy, .exists: return true
            default: return false
            }
        }
    }
}
