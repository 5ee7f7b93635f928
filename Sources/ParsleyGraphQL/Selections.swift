import GraphQL
import OrderedCollections

/// What the document selects below the field being resolved (fragments and inline fragments flattened): a find
/// counts only when `count` or `pageInfo` asks for it, a create re-reads only when more than its answer is selected.
enum Selections {
    /// Names selected directly under the field being resolved.
    static func names(_ info: GraphQLResolveInfo) -> Set<String> {
        Set(fields(in: info.fieldASTs.compactMap(\.selectionSet), info.fragments).map(\.name.value))
    }

    /// Names selected under the child field `child` of the field being resolved (`pageInfo`, `edges`, `gameScore`).
    static func names(under child: String, _ info: GraphQLResolveInfo) -> Set<String> {
        let children = fields(in: info.fieldASTs.compactMap(\.selectionSet), info.fragments).filter { $0.name.value == child }
        return Set(fields(in: children.compactMap(\.selectionSet), info.fragments).map(\.name.value))
    }

    static func fields(in sets: [SelectionSet], _ fragments: [String: FragmentDefinition]) -> [Field] {
        var out: [Field] = []
        for set in sets {
            for selection in set.selections {
                if let field = selection as? Field {
                    out.append(field)
                } else if let inline = selection as? InlineFragment {
                    out += fields(in: [inline.selectionSet], fragments)
                } else if let spread = selection as? FragmentSpread, let fragment = fragments[spread.name.value] {
                    out += fields(in: [fragment.selectionSet], fragments)
                }
            }
        }
        return out
    }
}
