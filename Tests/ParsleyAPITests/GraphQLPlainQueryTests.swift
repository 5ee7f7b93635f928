import Foundation
import ParsleyCore
import ParsleyDomain
import ParsleyGraphQL
import ParsleyHTTP
import Testing

/// Plain reads (class gets and finds, their connections, scalar fields and pointers) are answered without the GraphQL
/// library's executor (issue 32's speed); they must answer exactly what the library answers. A directive anywhere in
/// the operation (`@include(if: true)`, which changes nothing) sends a document to the library, so each query here is
/// asked both ways and the answers compared.
@Suite("GraphQL plain reads")
struct GraphQLPlainQueryTests {
    static let options = GraphQLTests.options

    /// `query` with `%D` removed (a plain read) and with `%D` as `@include(if: true)` (the library's executor).
    static func both(_ query: String) -> (plain: String, library: String) {
        (query.replacingOccurrences(of: "%D", with: ""), query.replacingOccurrences(of: "%D", with: "@include(if: true)"))
    }

    @Test("finds, gets, fragments, aliases, variables, cursors and pointers answer as the library does", arguments: Backend.all)
    func sameAnswers(_ backend: Backend) async throws {
        try await TestServer.withAPI(backend: backend, Self.options) { api, _, p in
            let graphQL = try #require(api.graphQL)
            let user = try await p.newUser("reader")
            let (items, _) = try await GraphQLSelectionTests.seed(p)
            let firstId = GraphQLTests.globalId("Item", items[0])
            // Leaves of every scalar type the plain writer writes itself, and nulls.
            _ = try await p.createId(
                "Item",
                [
                    "name": "typed", "score": 2.5, "ratio": 1e21, "done": true, "when": ["__type": "Date", "iso": "2026-01-02T03:04:05.678Z"],
                    "meta": ["a": 1, "b": ["x"]], "big": 9_007_199_254_740_993,
                ])
            let cases: [(String, JSONValue?)] = [
                ("{ items(order: [name_DESC]) %D { edges { node { name score ratio done when meta big } } } }", nil),
                (
                    """
                    { items(order: [name_ASC]) %D { count __typename edges { cursor __typename node { id objectId name score createdAt
                      updatedAt __typename owner { id name team { name } } } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }
                    """, nil
                ),
                (
                    """
                    query Top($w: ItemWhereInput, $n: Int) { items(where: $w, first: $n, order: [score_DESC]) %D { edges { node { name score } } count } }
                    """, ["w": ["score": ["greaterThan": 5]], "n": 2]
                ),
                (
                    """
                    fragment F on Item { name owner { ...O } }
                    fragment O on Owner { name }
                    query { a: items(first: 1, order: [name_ASC]) %D { edges { node { ...F } } }
                      b: items(skip: 1, first: 2, order: [name_ASC]) { edges { node { ... on Item { objectId } ... on Node { id } } } } __typename }
                    """, nil
                ),
                ("{ item(id: \"\(firstId)\") %D { name score owner { name } } }", nil),
                ("query Get($id: ID!) { item(id: $id) %D { id name } }", ["id": .string(items[1])]),
                ("{ items(last: 2, order: [name_ASC]) %D { edges { cursor node { name } } pageInfo { hasNextPage hasPreviousPage } } }", nil),
                (
                    "{ items(where: {name: {in: [\"i0\", \"i1\", \"i3\"]}, score: {lessThan: 25}}, order: [name_DESC]) %D { count edges { node { name } } } }",
                    nil
                ),
            ]
            for (query, variables) in cases {
                let (plain, library) = Self.both(query)
                let before = graphQL.plainAnswers
                let fast = try await p.graphQL(plain, variables, token: user.token)
                #expect(graphQL.plainAnswers == before + 1, "not answered as a plain read: \(plain) \(fast.json)")
                let slow = try await p.graphQL(library, variables, token: user.token)
                #expect(graphQL.plainAnswers == before + 1, "\(library)")
                #expect(fast.status == 200 && fast.json["errors"] == nil, "\(fast.json)")
                #expect(fast.json == slow.json, "\(plain)\n\(fast.json)\n\(slow.json)")
            }
        }
    }

    @Test("what a plain read cannot answer goes to the library: errors, bad variables, arrays and relations", arguments: Backend.all)
    func fallsBack(_ backend: Backend) async throws {
        try await TestServer.withAPI(backend: backend, Self.options) { api, _, p in
            let graphQL = try #require(api.graphQL)
            let user = try await p.newUser("reader")
            _ = try await GraphQLSelectionTests.seed(p)
            let before = graphQL.plainAnswers
            let missing = try await p.graphQL("{ item(id: \"nope\") { name } }", token: user.token)
            #expect(missing.graphQLError.code == 101, "\(missing.json)")
            #expect(missing.json["data"] == .null, "\(missing.json)")
            let badVariable = try await p.graphQL("query($n: Int) { items(first: $n) { count } }", ["n": "x"], token: user.token)
            #expect(badVariable.status == 400, "\(badVariable.json)")
            let arrays = try await p.graphQL(
                "{ items(order: [name_ASC], first: 1) { edges { node { tags { ... on Element { value } } } } } }", token: user.token)
            #expect(arrays.data("items", "edges") == [["node": ["tags": [["value": "t0"]]]]], "\(arrays.json)")
            #expect(graphQL.plainAnswers == before)
        }
    }
}
