import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// A find as a Relay connection: the arguments a find query and a relation field take (`where`, `order`, `skip`,
/// `after`, `first`, `before`, `last`) and their page arithmetic (docs/graphql-contract.md §4.4), run as a REST find
/// under the caller's auth.
struct ConnectionQuery: Sendable {
    let shape: ClassShape
    let planner: ReadPlanner
    let services: GraphQLServices

    var shapes: [String: ClassShape] { planner.shapes }

    /// The arguments of a connection over a class with this `where` input and `order` enum (`options`, read
    /// preferences, is accepted and has no effect).
    static func arguments(_ whereType: GraphQLInputObjectType, _ order: GraphQLEnumType, _ readOptions: GraphQLInputObjectType)
        -> GraphQLArgumentConfigMap
    {
        [
            "where": GraphQLArgument(type: whereType), "order": GraphQLArgument(type: GraphQLList(GraphQLNonNull(order))),
            "skip": GraphQLArgument(type: GraphQLInt), "after": GraphQLArgument(type: GraphQLString),
            "first": GraphQLArgument(type: GraphQLInt), "before": GraphQLArgument(type: GraphQLString),
            "last": GraphQLArgument(type: GraphQLInt), "options": GraphQLArgument(type: readOptions),
        ]
    }

    /// Runs the find `arguments` ask for, `constraint` (a relation's `$relatedTo`) added to its `where`.
    func run(_ arguments: JSONValue, constraint: [String: JSONValue] = [:], auth: Auth, _ scope: FieldScope) async throws
        -> ConnectionValue
    {
        var find = FindOptions()
        var whereValue = constraint
        if case .object(let input)? = arguments["where"] {
            whereValue.merge(try GraphQLWhere.parse(input, shape, shapes)) { _, new in new }
        }
        if !whereValue.isEmpty { find.whereValue = .object(whereValue) }
        if case .array(let keys)? = arguments["order"] { find.order = keys.compactMap { $0.stringValue.flatMap(CommonInputTypes.orderKey) } }

        var skip = arguments["skip"]?.integerValue ?? 0
        guard skip >= 0 else { throw ParseError.invalidQuery("Skip should be a positive number") }
        if case .string(let cursor)? = arguments["after"] {
            guard let offset = GraphQLNames.offset(fromCursor: cursor) else { throw ParseError.invalidQuery("After is not a valid cursor") }
            skip += offset + 1
        }
        var limit: Int?
        if let first = arguments["first"]?.integerValue {
            guard first >= 0 else { throw ParseError.invalidQuery("First should be a positive number") }
            limit = first
        }
        if case .string(let cursor)? = arguments["before"] {
            guard let before = GraphQLNames.offset(fromCursor: cursor) else { throw ParseError.invalidQuery("Before is not a valid cursor") }
            if skip >= before {
                limit = 0
            } else if limit == nil || skip + (limit ?? 0) > before {
                limit = before - skip
            }
        }
        var preCount = false
        if var last = arguments["last"]?.integerValue {
            guard last >= 0 else { throw ParseError.invalidQuery("Last should be a positive number") }
            if let maxLimit = services.maxLimit { last = min(last, maxLimit) }
            if last == 0 {
                limit = 0
            } else if let current = limit {
                if last < current {
                    skip += current - last
                    limit = last
                }
            } else {
                limit = last
                preCount = true
            }
        }
        let selected = scope.names()
        let pageInfo = scope.names(under: "pageInfo")
        var count: Int?
        if preCount, let wanted = limit {
            var counting = find
            counting.limit = 0
            counting.count = true
            count = try await services.queries.find(shape.className, counting, auth: auth, triggers: true).count
            if let total = count, skip + wanted < total { skip = total - wanted }
        }
        var pageSize = limit ?? (selected.contains("edges") || selected.contains("pageInfo") ? 100 : 0)
        if let maxLimit = services.maxLimit { pageSize = min(pageSize, maxLimit) }
        find.skip = skip
        find.limit = pageSize
        if pageSize > 0 {
            // The keys `edges.node` selects, and its pointers included: the page and what it points to in one read.
            let plan = planner.plan(scope.sets(under: ["edges", "node"]), shape, scope.fragments)
            find.keys = plan.keys
            find.include = plan.include
        }
        find.count = count == nil && (selected.contains("count") || pageInfo.contains("hasNextPage") || pageInfo.contains("hasPreviousPage"))
        let page = try await services.queries.find(shape.className, find, auth: auth, triggers: true)
        return ConnectionValue(
            objects: page.results.map { ParseObjectValue(className: shape.className, fields: $0) }, count: count ?? page.count, skip: skip)
    }
}
