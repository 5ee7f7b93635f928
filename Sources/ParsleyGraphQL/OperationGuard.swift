import Foundation
import GraphQL
import ParsleyCore
import ParsleyDomain

/// What an operation asks for, read from its syntax before anything runs: whether it introspects the schema, how
/// deep its fields nest and how many field selections it has, following fragment spreads.
struct OperationGuard {
    let document: Document
    let fragments: [String: FragmentDefinition]

    init(_ document: Document) {
        self.document = document
        var fragments: [String: FragmentDefinition] = [:]
        for case let fragment as FragmentDefinition in document.definitions { fragments[fragment.name.value] = fragment }
        self.fragments = fragments
    }

    /// The operation `name` names, or the only one (nil when there is no such operation; GraphQL answers that).
    func operation(named name: String?) -> OperationDefinition? {
        let operations = document.definitions.compactMap { $0 as? OperationDefinition }
        guard let name else { return operations.count == 1 ? operations[0] : nil }
        return operations.first { $0.name?.value == name }
    }

    /// Whether any operation or fragment of the document has `__schema`, or `__type` with arguments, at any depth
    /// (inline fragments and fragments included: GHSA-q5q9-2rhp-33qw). `__typename` is always allowed.
    var introspects: Bool {
        func look(_ set: SelectionSet) -> Bool {
            for selection in set.selections {
                switch selection {
                case let field as Field:
                    if field.name.value == "__schema" || (field.name.value == "__type" && !field.arguments.isEmpty) { return true }
                    if let inner = field.selectionSet, look(inner) { return true }
                case let inline as InlineFragment:
                    if look(inline.selectionSet) { return true }
                default: continue
                }
            }
            return false
        }
        for definition in document.definitions {
            if let operation = definition as? OperationDefinition, look(operation.selectionSet) { return true }
            if let fragment = definition as? FragmentDefinition, look(fragment.selectionSet) { return true }
        }
        return false
    }

    /// Depth and field count of `operation`. A fragment spread is followed once per path (a cycle is GraphQL's
    /// validation error, not an endless walk here); counting stops once `stop` fields were seen.
    func measure(_ operation: OperationDefinition, stop: Int) -> (depth: Int, fields: Int) {
        var fields = 0
        var deepest = 0
        func walk(_ set: SelectionSet, depth: Int, path: Set<String>) {
            for selection in set.selections {
                if fields > stop { return }
                switch selection {
                case let field as Field:
                    fields += 1
                    deepest = max(deepest, depth)
                    if let inner = field.selectionSet { walk(inner, depth: depth + 1, path: path) }
                case let inline as InlineFragment:
                    walk(inline.selectionSet, depth: depth, path: path)
                case let spread as FragmentSpread:
                    let name = spread.name.value
                    guard !path.contains(name), let fragment = fragments[name] else { continue }
                    walk(fragment.selectionSet, depth: depth, path: path.union([name]))
                default: continue
                }
            }
        }
        walk(operation.selectionSet, depth: 1, path: [])
        return (deepest, fields)
    }

    /// The first limit `operation` passes, as the Parse error a non-master caller gets (code 102, HTTP 400).
    func check(_ operation: OperationDefinition, _ limits: GraphQLLimits) -> ParseError? {
        let stop = max(limits.maxFields ?? Int.max - 1, 0)
        let (depth, fields) = measure(operation, stop: stop == Int.max - 1 ? 1_000_000 : stop)
        if let maxDepth = limits.maxDepth, depth > maxDepth {
            return ParseError(.invalidQuery, "GraphQL query depth of \(depth) exceeds maximum allowed depth of \(maxDepth)")
        }
        if let maxFields = limits.maxFields, fields > maxFields {
            return ParseError(.invalidQuery, "Number of GraphQL fields (\(fields)) exceeds maximum allowed (\(maxFields))")
        }
        return nil
    }
}

/// GraphQL's messages with what would tell a caller without the master key about the schema taken out: "did you
/// mean" hints and type names the caller did not write (Parse Server's redaction since GHSA-8cph-rgr4-g5vj and the
/// advisories after it; docs/graphql-contract.md §1.5).
enum SchemaHints {
    static func redact(_ message: String, query: String) -> String {
        var text = message
        if let range = text.range(of: " Did you mean ") { text = String(text[..<range.lowerBound]) }
        // `Field "x" of required type "T!" was not provided.`
        if text.hasPrefix("Field \""), text.hasSuffix("was not provided."), text.contains(" of required type ") {
            return "Field of required type was not provided."
        }
        if text.contains("can never be of type \"") { return "Fragment cannot be spread here." }
        // Every `type "T"` whose T the caller did not write: ` of type "T"` and ` on type "T"` go, `Expected value of
        // type "T"` and the like say `the correct type`, and `by type "T"` ends the sentence.
        var searchFrom = text.startIndex
        while let marker = text.range(of: "type \"", range: searchFrom..<text.endIndex) {
            guard let (name, end) = Self.quoted(after: marker.upperBound, in: text), !query.contains(name) else {
                searchFrom = marker.upperBound
                continue
            }
            let before = text[..<marker.lowerBound]
            var start = marker.lowerBound
            var replacement = "the correct type"
            for joiner in [" of ", " on ", " by "] where before.hasSuffix(joiner) {
                start = text.index(marker.lowerBound, offsetBy: -joiner.count)
                replacement = ""
                if joiner == " by ", before.hasSuffix("is not defined by ") {
                    start = text.index(marker.lowerBound, offsetBy: -" by ".count)
                }
            }
            if before.hasSuffix("Expected value of ") || before.hasSuffix("expecting ") || before.hasSuffix("non-nullable ") {
                start = marker.lowerBound
                replacement = "the correct type"
            }
            text.replaceSubrange(start..<end, with: replacement)
            searchFrom = text.index(start, offsetBy: replacement.count)
        }
        return text
    }

    /// The name up to the next `"` from `start` (a type name in GraphQL's messages, without `[`, `]`, `!`) and the
    /// index after that quote.
    static func quoted(after start: String.Index, in text: String) -> (String, String.Index)? {
        guard let end = text[start...].firstIndex(of: "\"") else { return nil }
        let name = String(text[start..<end].filter { !"[]!".contains($0) })
        return name.isEmpty ? nil : (name, text.index(after: end))
    }
}
