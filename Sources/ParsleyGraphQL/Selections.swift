import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// What the document selects below the field being resolved (fragments and inline fragments flattened): a find
/// counts only when `count` or `pageInfo` asks for it, a create re-reads only when more than its answer is selected.
enum Selections {
    /// Names selected directly under the field being resolved.
    static func names(_ info: GraphQLResolveInfo) -> Set<String> { FieldScope(info).names() }

    /// Names selected under the child field `child` of the field being resolved (`pageInfo`, `edges`, `gameScore`).
    static func names(under child: String, _ info: GraphQLResolveInfo) -> Set<String> { FieldScope(info).names(under: child) }

    /// The selection sets of the field path `path` below the field being resolved (`["edges", "node"]`).
    static func sets(under path: [String], _ info: GraphQLResolveInfo) -> [SelectionSet] { FieldScope(info).sets(under: path) }

    /// The fields of `sets`, fragments flattened; `accepts` picks the fragments that apply by their type condition
    /// (nil: no condition).
    static func fields(
        in sets: [SelectionSet], _ fragments: [String: FragmentDefinition], accepts: (String?) -> Bool = { _ in true }
    ) -> [Field] {
        var out: [Field] = []
        for set in sets {
            for selection in set.selections {
                if let field = selection as? Field {
                    out.append(field)
                } else if let inline = selection as? InlineFragment {
                    if accepts(inline.typeCondition?.name.value) { out += fields(in: [inline.selectionSet], fragments, accepts: accepts) }
                } else if let spread = selection as? FragmentSpread, let fragment = fragments[spread.name.value],
                    accepts(fragment.typeCondition.name.value)
                {
                    out += fields(in: [fragment.selectionSet], fragments, accepts: accepts)
                }
            }
        }
        return out
    }
}

/// A field as the document wrote it, wherever it is being resolved (by the GraphQL library's executor or by
/// `PlainQuery`): its occurrences under one response key, merged, and the document's fragments. `@unchecked
/// Sendable`: the library's syntax tree is not marked `Sendable`, and a parsed document is only ever read.
struct FieldScope: @unchecked Sendable {
    let fields: [Field]
    let fragments: [String: FragmentDefinition]

    init(fields: [Field], fragments: [String: FragmentDefinition]) {
        self.fields = fields
        self.fragments = fragments
    }

    init(_ info: GraphQLResolveInfo) {
        self.init(fields: info.fieldASTs, fragments: info.fragments)
    }

    /// Names selected directly under the field.
    func names() -> Set<String> {
        Set(Selections.fields(in: fields.compactMap(\.selectionSet), fragments).map(\.name.value))
    }

    /// Names selected under the child field `child` of the field.
    func names(under child: String) -> Set<String> {
        Set(Selections.fields(in: sets(under: [child]), fragments).map(\.name.value))
    }

    /// The selection sets of the field path `path` below the field (`["edges", "node"]`).
    func sets(under path: [String]) -> [SelectionSet] {
        var sets = fields.compactMap(\.selectionSet)
        for name in path {
            sets = Selections.fields(in: sets, fragments).filter { $0.name.value == name }.compactMap(\.selectionSet)
        }
        return sets
    }
}

/// The REST `keys` and `include` a selection of a class type's fields needs (Parse Server's `extractKeysAndInclude`,
/// docs/graphql-contract.md §4.1): the selected fields become `keys` (`id` as `objectId`, `__typename` dropped, a
/// pointer's selection as dotted keys below it), and every selected pointer, and every array selected with a fragment
/// on a class type, is included, so that a find reads its page and the objects it points to in one plan.
struct ReadPlan: Sendable {
    /// Dotted keys to read (nil: every key, as when a selected name is not a field of the class).
    var keys: [String]?
    var include: [String]

    /// `find` reading only these keys and including these paths.
    func applied(to find: FindOptions = FindOptions()) -> FindOptions {
        var out = find
        out.keys = keys
        out.include = include
        return out
    }
}

/// Makes read plans from selection sets, knowing the classes shown (by class and by type name).
struct ReadPlanner: Sendable {
    let shapes: [String: ClassShape]
    let byTypeName: [String: ClassShape]
    /// Pointer levels followed (QueryService includes up to 8; deeper pointers resolve with a get of their own).
    static let maxDepth = 8

    init(shapes: [String: ClassShape]) {
        self.shapes = shapes
        self.byTypeName = Dictionary(shapes.values.map { ($0.typeName, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The plan for objects of `shape` read for the selection sets `sets`.
    func plan(_ sets: [SelectionSet], _ shape: ClassShape, _ fragments: [String: FragmentDefinition]) -> ReadPlan {
        var keys = OrderedSet<String>()
        var include = OrderedSet<String>()
        var allKeys = false
        collect(sets, shape, fragments, prefix: "", depth: 0, keys: &keys, include: &include, allKeys: &allKeys)
        return ReadPlan(keys: allKeys ? nil : Array(keys), include: Array(include))
    }

    /// The plan for the objects the field being resolved selects (a get, a node, a pointer read on its own).
    func plan(_ info: GraphQLResolveInfo, _ shape: ClassShape) -> ReadPlan {
        plan(FieldScope(info), shape)
    }

    /// The plan for the objects the field `scope` selects.
    func plan(_ scope: FieldScope, _ shape: ClassShape) -> ReadPlan {
        plan(scope.fields.compactMap(\.selectionSet), shape, scope.fragments)
    }

    private func collect(
        _ sets: [SelectionSet], _ shape: ClassShape, _ fragments: [String: FragmentDefinition], prefix: String, depth: Int,
        keys: inout OrderedSet<String>, include: inout OrderedSet<String>, allKeys: inout Bool
    ) {
        let typeName = shape.typeName
        let fields = Selections.fields(in: sets, fragments) { $0 == nil || $0 == typeName || $0 == "Node" || $0 == "ParseObject" }
        var byName = OrderedDictionary<String, [SelectionSet]>()
        for field in fields { byName[field.name.value, default: []] += field.selectionSet.map { [$0] } ?? [] }
        for (name, subs) in byName {
            switch name {
            case "__typename": continue
            case "id", "objectId": keys.append(prefix + "objectId")
            case "createdAt", "updatedAt", "ACL": keys.append(prefix + name)
            default:
                guard let type = shape.schema.fields[name] else {
                    allKeys = true
                    continue
                }
                keys.append(prefix + name)
                guard depth < Self.maxDepth else { continue }
                switch type {
                case .pointer(let target):
                    include.append(prefix + name)
                    // The pointer's objectId at least, so the included objects are read with the keys asked for.
                    keys.append(prefix + name + ".objectId")
                    if let targetShape = shapes[target] {
                        collect(
                            subs, targetShape, fragments, prefix: prefix + name + ".", depth: depth + 1, keys: &keys, include: &include,
                            allKeys: &allKeys)
                    }
                case .array:
                    // `ArrayResult` is a union: the fragments on class types say which included objects are read, and how.
                    for (typeCondition, set) in Self.typedFragments(subs, fragments) {
                        guard let targetShape = byTypeName[typeCondition] else { continue }
                        include.append(prefix + name)
                        collect(
                            [set], targetShape, fragments, prefix: prefix + name + ".", depth: depth + 1, keys: &keys, include: &include,
                            allKeys: &allKeys)
                    }
                default: break
                }
            }
        }
    }

    /// The inline fragments and fragment spreads of `sets` with their type conditions (nested ones flattened).
    static func typedFragments(_ sets: [SelectionSet], _ fragments: [String: FragmentDefinition]) -> [(String, SelectionSet)] {
        var out: [(String, SelectionSet)] = []
        for set in sets {
            for selection in set.selections {
                if let inline = selection as? InlineFragment {
                    if let condition = inline.typeCondition?.name.value {
                        out.append((condition, inline.selectionSet))
                    } else {
                        out += typedFragments([inline.selectionSet], fragments)
                    }
                } else if let spread = selection as? FragmentSpread, let fragment = fragments[spread.name.value] {
                    out.append((fragment.typeCondition.name.value, fragment.selectionSet))
                }
            }
        }
        return out
    }
}
