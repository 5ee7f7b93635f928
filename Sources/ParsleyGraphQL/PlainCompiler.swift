import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// Compiles the selections of a validated document into `PlainQuery`'s plan: nil wherever something is met that
/// only the GraphQL library's executor answers (a directive, a field of a type it does not write).
struct PlainCompiler {
    let fragments: [String: FragmentDefinition]
    let planner: ReadPlanner

    /// The fields of `sets` by response key (alias or name), in the document's order, fragments flattened where
    /// their type condition applies to the type `typeName` (`also`: interfaces it implements); nil on a directive.
    func grouped(_ sets: [SelectionSet], typeName: String, also: Set<String> = []) -> OrderedDictionary<String, [Field]>? {
        var out = OrderedDictionary<String, [Field]>()
        func applies(_ condition: String?) -> Bool { condition == nil || condition == typeName || also.contains(condition ?? "") }
        func walk(_ set: SelectionSet) -> Bool {
            for selection in set.selections {
                switch selection {
                case let field as Field:
                    guard field.directives.isEmpty else { return false }
                    out[(field.alias ?? field.name).value, default: []].append(field)
                case let inline as InlineFragment:
                    guard inline.directives.isEmpty else { return false }
                    if applies(inline.typeCondition?.name.value), !walk(inline.selectionSet) { return false }
                case let spread as FragmentSpread:
                    guard spread.directives.isEmpty, let fragment = fragments[spread.name.value] else { return false }
                    if applies(fragment.typeCondition.name.value), !walk(fragment.selectionSet) { return false }
                default: return false
                }
            }
            return true
        }
        for set in sets where !walk(set) { return nil }
        return out
    }

    /// A response key as the answer writes it: its JSON text and a colon.
    static func encoded(_ key: String) -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.writeString(key, into: &out)
        out.append(UInt8(ascii: ":"))
        return out
    }

    /// A leaf entry of `type`.
    static func leaf(_ name: String, _ type: any GraphQLLeafType, nonNull: Bool) -> PlainObject.Entry {
        .leaf(name: name, type: type, kind: LeafKind(type), nonNull: nonNull)
    }

    /// What `sets` select of an object of `shape`'s class type.
    func object(_ sets: [SelectionSet], _ shape: ClassShape) -> PlainObject? {
        guard let fields = grouped(sets, typeName: shape.typeName, also: ["Node", "ParseObject"]) else { return nil }
        let plain = PlainObject(shape: shape)
        let types = Dictionary(shape.outputFields.map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
        for (key, occurrences) in fields {
            let name = occurrences[0].name.value
            let entry: PlainObject.Entry
            switch name {
            case "__typename": entry = .typename(shape.typeName)
            case "id" where types["id"] == nil: entry = .globalId
            case "objectId": entry = Self.leaf(name, GraphQLID, nonNull: true)
            case "createdAt", "updatedAt": entry = Self.leaf(name, GraphQLScalars.date, nonNull: true)
            default:
                guard let type = types[name] else { return nil }
                let nonNull = shape.schema.fieldOptions[name]?.isRequired == true
                if case .pointer(let target) = type {
                    guard let targetShape = planner.shapes[target] else {
                        // A pointer to a class not shown is the `Object` scalar.
                        entry = Self.leaf(name, GraphQLScalars.object, nonNull: nonNull)
                        break
                    }
                    guard let target = object(occurrences.compactMap(\.selectionSet), targetShape) else { return nil }
                    entry = .pointer(name: name, target: target, scope: FieldScope(fields: occurrences, fragments: fragments), nonNull: nonNull)
                } else {
                    guard let leaf = FieldTypes.leafOutputType(type) else { return nil }
                    entry = Self.leaf(name, leaf, nonNull: nonNull)
                }
            }
            plain.entries.append((Self.encoded(key), entry))
        }
        return plain
    }

    /// What `sets` select of a find's connection over `shape`'s class.
    func connection(_ sets: [SelectionSet], _ shape: ClassShape) -> PlainConnection? {
        let typeName = shape.typeName + "Connection"
        guard let fields = grouped(sets, typeName: typeName) else { return nil }
        var plain = PlainConnection()
        for (name, occurrences) in fields {
            let key = Self.encoded(name)
            let subs = occurrences.compactMap(\.selectionSet)
            switch occurrences[0].name.value {
            case "__typename": plain.entries.append((key, .typename(typeName)))
            case "count": plain.entries.append((key, .count))
            case "edges":
                guard let edges = grouped(subs, typeName: shape.typeName + "Edge") else { return nil }
                var edge = PlainEdge()
                for (name, occurrences) in edges {
                    let key = Self.encoded(name)
                    switch occurrences[0].name.value {
                    case "__typename": edge.entries.append((key, .typename(shape.typeName + "Edge")))
                    case "cursor": edge.entries.append((key, .cursor))
                    case "node":
                        guard let node = object(occurrences.compactMap(\.selectionSet), shape) else { return nil }
                        edge.entries.append((key, .node(node)))
                    default: return nil
                    }
                }
                plain.entries.append((key, .edges(edge)))
            case "pageInfo":
                guard let info = grouped(subs, typeName: "PageInfo") else { return nil }
                var fields: [(key: [UInt8], field: PlainConnection.PageInfoField)] = []
                for (name, occurrences) in info {
                    let key = Self.encoded(name)
                    switch occurrences[0].name.value {
                    case "__typename": fields.append((key, .typename))
                    case "hasNextPage": fields.append((key, .hasNextPage))
                    case "hasPreviousPage": fields.append((key, .hasPreviousPage))
                    case "startCursor": fields.append((key, .startCursor))
                    case "endCursor": fields.append((key, .endCursor))
                    default: return nil
                    }
                }
                plain.entries.append((key, .pageInfo(fields)))
            default: return nil
            }
        }
        return plain
    }
}
