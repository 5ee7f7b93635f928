import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import Testing

/// What a GraphQL caller without the master key may not do (docs/graphql-contract.md §1.2, §1.5, §10): introspect
/// the schema, learn its names from "did you mean" hints, send deep or wide operations; and how GET and batches
/// are answered.
@Suite("GraphQL limits and transport")
struct GraphQLLimitsTests {
    static func options(_ change: (inout ParseServerOptions) -> Void = { _ in }) -> ParseServerOptions {
        TestServer.options {
            $0.mountGraphQL = true
            change(&$0)
        }
    }

    static let introspections = [
        "{ __schema { queryType { name } } }",
        #"{ __type(name: "GameScore") { name fields { name } } }"#,
        #"{ ... on Query { __type(name: "GameScore") { name } } }"#,
        #"query { ...Peek } fragment Peek on Query { __schema { types { name } } }"#,
    ]

    @Test("introspection is the master's and the maintenance key's (403 for others) unless graphQLPublicIntrospection", arguments: Backend.all)
    func introspection(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            _ = try await p.createId("GameScore", ["score": 1])
            for query in Self.introspections {
                let anonymous = try await p.graphQL(query)
                #expect(anonymous.status == 403, "\(query): \(anonymous.json)")
                #expect(anonymous.graphQLError.message == "Introspection is not allowed")
                #expect(anonymous.json["data"] == nil)
                let master = try await p.graphQL(query, master: true)
                #expect(master.status == 200, "\(query): \(master.json)")
                #expect(master.json["errors"] == nil)
            }
            // `__typename` is always allowed (Apollo Client adds it everywhere).
            let typename = try await p.graphQL("{ __typename health }")
            #expect(typename.status == 200)
            #expect(typename.data("__typename") == "Query")
        }
        try await TestServer.with(backend: backend, Self.options { $0.graphQLLimits.publicIntrospection = true }) { p in
            let open = try await p.graphQL("{ __schema { queryType { name } } }")
            #expect(open.status == 200)
            #expect(open.data("__schema", "queryType", "name") == "Query")
        }
    }

    @Test("\"did you mean\" hints and unwritten type names are left out for callers without the master key", arguments: Backend.all)
    func hints(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            _ = try await p.createId("GameScore", ["score": 1])
            let query = "{ gameScores { edges { node { scor } } } }"
            let anonymous = try await p.graphQL(query)
            #expect(anonymous.status == 400)
            let message = try #require(anonymous.graphQLError.message)
            #expect(message == #"Cannot query field "scor"."#, "\(message)")
            #expect(anonymous.graphQLError.code == "GRAPHQL_VALIDATION_FAILED")
            let master = try await p.graphQL(query, master: true)
            #expect(master.status == 400)
            let full = try #require(master.graphQLError.message)
            #expect(full.contains("Did you mean") && full.contains("GameScore"), "\(full)")
            // A required argument's type is not named either.
            let missing = try await p.graphQL("mutation { createGameScore { gameScore { id } } }")
            #expect(missing.status == 400)
            #expect(!(missing.graphQLError.message ?? "").contains("CreateGameScoreInput"), "\(missing.json)")
        }
    }

    @Test("requestComplexity.graphQLDepth and graphQLFields: 400 with code 102 for others, the master key passes", arguments: Backend.all)
    func complexity(_ backend: Backend) async throws {
        let options = Self.options {
            $0.graphQLLimits.maxDepth = 3
            $0.graphQLLimits.maxFields = 6
        }
        try await TestServer.with(backend: backend, options) { p in
            _ = try await p.createId("GameScore", ["score": 1])
            let deep = "{ gameScores { edges { node { score } } } }"
            let refused = try await p.graphQL(deep)
            #expect(refused.status == 400)
            #expect(refused.graphQLError.message == "GraphQL query depth of 4 exceeds maximum allowed depth of 3")
            #expect(refused.graphQLError.code == 102)
            // Fragments add no depth but their fields count.
            let viaFragment = try await p.graphQL("{ gameScores { ...E } } fragment E on GameScoreConnection { edges { node { score } } }")
            #expect(viaFragment.graphQLError.message == "GraphQL query depth of 4 exceeds maximum allowed depth of 3")
            let shallow = try await p.graphQL("{ gameScores { count } }")
            #expect(shallow.status == 200)
            #expect(shallow.data("gameScores", "count") == 1)
            // Aliased repeats count as fields.
            let aliases = (1...7).map { "a\($0): health" }.joined(separator: " ")
            let wide = try await p.graphQL("{ \(aliases) }")
            #expect(wide.status == 400)
            #expect(wide.graphQLError.message == "Number of GraphQL fields (7) exceeds maximum allowed (6)")
            #expect(try await p.graphQL(deep, master: true).status == 200)
            #expect(try await p.graphQL("{ \(aliases) }", master: true).status == 200)
        }
    }

    @Test("rateLimit rules on the GraphQL path count GraphQL requests (429 past the count), the master key aside", arguments: Backend.all)
    func rateLimit(_ backend: Backend) async throws {
        let rules = try RateLimitRule.parse(JSONParser.parse(#"[{"requestPath":"/graphql","requestTimeWindow":60000,"requestCount":2}]"#))
        try await OperationsTests.with(backend: backend, options: Self.options(), rateLimits: rules) { p, _ in
            #expect(try await p.graphQL("{ health }").status == 200)
            #expect(try await p.graphQL("{ health }").status == 200)
            let refused = try await p.graphQL("{ health }")
            #expect(refused.status == 429, "\(refused.json)")
            #expect(refused.json["code"] == 100)
            #expect(try await p.graphQL("{ health }", master: true).status == 200)
        }
    }

    @Test("GET runs queries (405 for mutations); a JSON array (batching) and a body without a query are 400", arguments: Backend.all)
    func transport(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            _ = try await p.createId("GameScore", ["score": 5])
            let query = "query Q($s: Float) { gameScores(where: {score: {equalTo: $s}}) { count } }"
            let encoded = try #require(query.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let variables = try #require(#"{"s":5}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let get = try await p.raw(.get, "/graphql?query=\(encoded)&variables=\(variables)&operationName=Q", headers: p.headers(master: false))
            #expect(get.status == 200, "\(get.json)")
            #expect(get.data("gameScores", "count") == 1)
            let mutation = try #require(
                "mutation { deleteGameScore(input: {id: \"x\"}) { clientMutationId } }".addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let refused = try await p.raw(.get, "/graphql?query=\(mutation)", headers: p.headers(master: false))
            #expect(refused.status == 405)
            let batch = try await p.raw(.post, "/graphql", body: #"[{"query":"{ health }"}]"#, headers: p.headers(master: false))
            #expect(batch.status == 400)
            let empty = try await p.raw(.post, "/graphql", body: #"{"variables":{}}"#, headers: p.headers(master: false))
            #expect(empty.status == 400)
            let broken = try await p.raw(.post, "/graphql", body: "{not json", headers: p.headers(master: false))
            #expect(broken.status == 400)
            #expect(broken.json["code"] == 107)
        }
    }
}

/// `_GraphQLConfig` through `/graphql-config` (docs/graphql-contract.md §8): master key only, Parse Server's
/// validation texts, a key-by-key merge, and the schema rebuilt with the classes, queries and mutations it picks.
@Suite("GraphQL config")
struct GraphQLConfigTests {
    @Test("GET/PUT /graphql-config: master only, validated, merged; it picks classes, queries, mutations and their names", arguments: Backend.all)
    func config(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, GraphQLLimitsTests.options()) { p in
            _ = try await p.createId("GameScore", ["score": 1, "cheat": false])
            _ = try await p.createId("Secret", ["code": "x"])
            let empty = try await p.raw(.get, "/parse/graphql-config", headers: p.headers(master: true))
            #expect(empty.status == 200 && empty.json == [:], "\(empty.json)")
            let anonymous = try await p.raw(.get, "/parse/graphql-config", headers: p.headers(master: false))
            #expect(anonymous.status == 403)
            let refusedPut = try await p.raw(.put, "/parse/graphql-config", body: #"{"params":{}}"#, headers: p.headers(master: false))
            #expect(refusedPut.status == 403)
            // Parse Server's validation texts.
            let bad = try await p.raw(
                .put, "/parse/graphql-config",
                body: #"{"params":{"enabledForClasses":"GameScore","classConfigs":[{"className":"GameScore","query":{"find":"yes"}}],"x":1}}"#,
                headers: p.headers(master: true))
            #expect(bad.status == 400)
            #expect(
                bad.json["error"]
                    == "Invalid graphQLConfig: encountered invalid keys: [x]; \"enabledForClasses\" is not a valid array; classConfig:GameScore is invalid because \"query.find\" must be a boolean",
                "\(bad.json)")
            // Hide a class; rename GameScore's find, drop its get and its delete.
            let put = try await p.raw(
                .put, "/parse/graphql-config",
                body:
                    #"{"params":{"disabledForClasses":["Secret"],"classConfigs":[{"className":"GameScore","query":{"get":false,"findAlias":"scores"},"mutation":{"destroy":false}}]}}"#,
                headers: p.headers(master: true))
            #expect(put.status == 200 && put.json == ["response": ["result": true]], "\(put.json)")
            let merged = try await p.raw(
                .put, "/parse/graphql-config", body: #"{"params":{"enabledForClasses":["GameScore","Secret"]}}"#, headers: p.headers(master: true))
            #expect(merged.status == 200)
            let stored = try await p.raw(.get, "/parse/graphql-config", headers: p.headers(master: true))
            #expect(stored.json["disabledForClasses"] == ["Secret"] && stored.json["enabledForClasses"] == ["GameScore", "Secret"], "\(stored.json)")
            let found = try await p.graphQL("{ scores { count } }")
            #expect(found.data("scores", "count") == 1, "\(found.json)")
            #expect(try await p.graphQL("{ gameScores { count } }").status == 400)
            #expect(try await p.graphQL(#"{ gameScore(id: "x") { id } }"#).status == 400)
            #expect(try await p.graphQL("{ secrets { count } }").status == 400)
            #expect(try await p.graphQL(#"mutation { deleteGameScore(input: {id: "x"}) { clientMutationId } }"#).status == 400)
            let created = try await p.graphQL("mutation { createGameScore(input: {fields: {score: 2}}) { gameScore { objectId } } }")
            #expect(created.data("createGameScore", "gameScore", "objectId")?.stringValue != nil, "\(created.json)")
            // Field lists: what GameScore shows, takes on create, filters and sorts by.
            let lists = try await p.raw(
                .put, "/parse/graphql-config",
                body:
                    #"{"params":{"classConfigs":[{"className":"GameScore","query":{"findAlias":"scores"},"type":{"outputFields":["score"],"inputFields":{"create":["score"]},"constraintFields":["score"],"sortFields":[{"field":"score","asc":true,"desc":false}]}}]}}"#,
                headers: p.headers(master: true))
            #expect(lists.status == 200)
            #expect(try await p.graphQL("{ scores { edges { node { objectId score } } } }").status == 200)
            #expect(try await p.graphQL("{ scores { edges { node { cheat } } } }").status == 400)
            #expect(try await p.graphQL("mutation { createGameScore(input: {fields: {cheat: true}}) { clientMutationId } }").status == 400)
            #expect(try await p.graphQL("{ scores(where: {score: {greaterThan: 0}}, order: [score_ASC]) { count } }").data("scores", "count") == 2)
            #expect(try await p.graphQL("{ scores(where: {cheat: {equalTo: true}}) { count } }").status == 400)
            #expect(try await p.graphQL(#"{ scores(where: {objectId: {equalTo: "x"}}) { count } }"#).status == 400)
            #expect(try await p.graphQL("{ scores(order: [score_DESC]) { count } }").status == 400)
            #expect(try await p.graphQL("{ scores(order: [id_DESC]) { count } }").status == 200)
            // The config is internal: no class route reaches it.
            let viaClasses = try await p.raw(.get, "/parse/classes/_GraphQLConfig", headers: p.headers(master: false))
            #expect(viaClasses.status != 200)
        }
    }
}

/// Find queries are named by npm `pluralize` 8, as in Parse Server (docs/graphql-contract.md §2).
@Suite("GraphQL names")
struct GraphQLNamesTests {
    @Test("find queries take pluralize 8's plurals; a plural equal to its singular leaves only the get query", arguments: [Backend.sqlite])
    func plurals(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, GraphQLLimitsTests.options()) { p in
            let expected: [String: String] = [
                "Person": "people", "City": "cities", "Bus": "buses", "Matrix": "matrices", "Child": "children", "someClass": "someClasses",
                "graphQLClass": "graphQLClasses", "Leaf": "leaves", "Knife": "knives", "Quiz": "quizzes", "Analysis": "analyses",
                "Criterion": "criteria", "Virus": "viri", "Mouse": "mice", "GameScore": "gameScores", "Country": "countries",
            ]
            for className in expected.keys.sorted() + ["Sheep", "News"] { _ = try await p.createId(className, ["n": 1]) }
            let reply = try await p.graphQL("{ __schema { queryType { fields { name } } } }", master: true)
            let names = Set(reply.data("__schema", "queryType", "fields")?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
            for (className, plural) in expected { #expect(names.contains(plural), "\(className) → \(plural): \(names.sorted())") }
            #expect(names.contains("sheep") && names.contains("news"))
            let sheep = try await p.graphQL(#"{ sheep(id: "nope") { id } }"#)
            #expect(sheep.graphQLError.code == 101, "\(sheep.json)")
        }
    }
}
