import ParsleyCore
import Synchronization

/// `SELECT <alias>."objectId", <alias>."createdAt", ...`: the head of a find's statement, kept per class and alias
/// (and dialect) while the class's columns stay the same. Building it quoted every column on every read (2% of a get by id).
final class SelectLists: Sendable {
    static let shared = SelectLists()

    private struct Key: Hashable {
        let dialect: ObjectIdentifier
        let alias: String
        let className: String
    }
    private struct Entry {
        let names: [String]
        let text: String
    }
    private let entries = Mutex<[Key: Entry]>([:])
    /// Classes come and go with the schema; past this many entries the cache starts over.
    private static let limit = 512

    func text(className: String, fields: [(name: String, type: FieldType)], alias: String, compiler: WhereCompiler) -> String {
        let key = Key(dialect: ObjectIdentifier(type(of: compiler.dialect)), alias: alias, className: className)
        if let hit = entries.withLock({ $0[key] }), hit.names.count == fields.count,
            zip(hit.names, fields).allSatisfy({ $0 == $1.name })
        {
            return hit.text
        }
        var select = "SELECT "
        for (i, name) in (["objectId", "createdAt", "updatedAt", "_rperm", "_wperm"] + fields.map(\.name)).enumerated() {
            if i > 0 { select += ", " }
            select += compiler.column(alias, name)
        }
        let entry = Entry(names: fields.map(\.name), text: select)
        entries.withLock {
            if $0.count >= Self.limit { $0.removeAll() }
            $0[key] = entry
        }
        return select
    }
}
