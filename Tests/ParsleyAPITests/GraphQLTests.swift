import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

extension ParseClient {
    /// `POST /graphql` with `{query, variables}`: anonymous by default, as `token`'s user, or with the master key.
    func graphQL(_ query: String, _ variables: JSONValue? = nil, token: String? = nil, master: Bool = false, appId: Bool = true) async throws
        -> Reply
    {
        var body: [String: JSONValue] = ["query": .string(query)]
        if let variables { body["variables"] = variables }
        var fields = headers(master: master, extra: token.map { ["X-Parse-Session-Token": $0] } ?? [:])
        if !appId { fields[HTTPField.Name("X-Parse-Application-Id")!] = nil }
        return try await raw(.post, "/graphql", body: JSONWriter.string(.object(body)), headers: fields)
    }
}

extension Reply {
    /// `data.<path...>`.
    func data(_ path: String...) -> JSONValue? {
        var value = json["data"]
        for key in path { value = value?[key] }
        return value
    }

    /// The first GraphQL error's message and `extensions.code`.
    var graphQLError: (message: String?, code: JSONValue?) {
        let first = json["errors"]?.arrayValue?.first
        return (first?["message"]?.stringValue, first?["extensions"]?["code"])
    }
}

@Suite("GraphQL API")
struct GraphQLTests {
    static let options = TestServer.options { $0.mountGraphQL = true }

    static func globalId(_ className: String, _ id: String) -> String { Data("\(className):\(id)".utf8).base64EncodedString() }

    @Test("create, get, find (where, order, first, count, cursors), update and delete run as REST does", arguments: Backend.all)
    func crud(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            _ = try await p.createId("GameScore", ["score": 10, "playerName": "ann", "cheat": false])
            let bob = try await p.createId("GameScore", ["score": 20, "playerName": "bob", "cheat": true])

            let created = try await p.graphQL(
                """
                mutation Create($input: CreateGameScoreInput!) {
                  createGameScore(input: $input) { clientMutationId gameScore { id objectId score playerName cheat } }
                }
                """, ["input": ["clientMutationId": "c1", "fields": ["score": 30, "playerName": "cy"]]])
            #expect(created.status == 200, "\(created.json)")
            #expect(created.data("createGameScore", "clientMutationId") == "c1")
            let cy = try #require(created.data("createGameScore", "gameScore", "objectId")?.stringValue, "\(created.json)")
            #expect(created.data("createGameScore", "gameScore", "id") == .string(Self.globalId("GameScore", cy)))
            #expect(created.data("createGameScore", "gameScore", "score") == 30)
            #expect(created.data("createGameScore", "gameScore", "cheat") == .null)
            #expect(try await p.get("GameScore", cy)["playerName"] == "cy")

            let byGlobalId = try await p.graphQL(
                "query Get($id: ID!) { gameScore(id: $id) { objectId playerName score createdAt } }", ["id": .string(Self.globalId("GameScore", cy))])
            #expect(byGlobalId.data("gameScore", "playerName") == "cy", "\(byGlobalId.json)")
            #expect(byGlobalId.data("gameScore", "createdAt")?.stringValue?.hasSuffix("Z") == true)
            let byObjectId = try await p.graphQL("{ gameScore(id: \"\(bob)\") { playerName cheat } }")
            #expect(byObjectId.data("gameScore") == ["playerName": "bob", "cheat": true], "\(byObjectId.json)")

            let found = try await p.graphQL(
                """
                { gameScores(where: {score: {greaterThan: 15}}, order: [score_DESC]) {
                    count edges { cursor node { playerName score } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }
                """)
            #expect(found.data("gameScores", "count") == 2, "\(found.json)")
            let names = found.data("gameScores", "edges")?.arrayValue?.compactMap { $0["node"]?["playerName"]?.stringValue }
            #expect(names == ["cy", "bob"])
            #expect(
                found.data("gameScores", "pageInfo") == [
                    "hasNextPage": false, "hasPreviousPage": false, "startCursor": "YXJyYXljb25uZWN0aW9uOjA=",
                    "endCursor": "YXJyYXljb25uZWN0aW9uOjE=",
                ])
            let inList = try await p.graphQL(
                #"{ gameScores(where: {playerName: {in: ["ann", "cy"]}, cheat: {notEqualTo: true}}, order: [playerName_ASC]) { edges { node { playerName } } } }"#
            )
            #expect(inList.data("gameScores", "edges") == [["node": ["playerName": "ann"]], ["node": ["playerName": "cy"]]], "\(inList.json)")
            let page = try await p.graphQL(
                "{ gameScores(order: [score_ASC], first: 1, after: \"YXJyYXljb25uZWN0aW9uOjA=\") { edges { node { score } } pageInfo { hasNextPage hasPreviousPage } } }"
            )
            #expect(page.data("gameScores", "edges") == [["node": ["score": 20]]], "\(page.json)")
            #expect(page.data("gameScores", "pageInfo") == ["hasNextPage": true, "hasPreviousPage": true])
            let none = try await p.graphQL("{ gameScores(where: {cheat: {exists: false}}) { count } }")
            #expect(none.data("gameScores", "count") == 1, "\(none.json)")

            let updated = try await p.graphQL(
                "mutation { updateGameScore(input: {id: \"\(cy)\", fields: {score: 31, playerName: null}}) { gameScore { objectId score playerName } } }"
            )
            #expect(updated.data("updateGameScore", "gameScore") == ["objectId": .string(cy), "score": 31, "playerName": .null], "\(updated.json)")
            let stored = try await p.get("GameScore", cy)
            #expect(stored["score"] == 31 && stored["playerName"] == nil, "\(stored.json)")

            let deleted = try await p.graphQL(
                "mutation { deleteGameScore(input: {id: \"\(Self.globalId("GameScore", cy))\"}) { gameScore { objectId score } } }")
            #expect(deleted.data("deleteGameScore", "gameScore") == ["objectId": .string(cy), "score": 31], "\(deleted.json)")
            #expect(try await p.get("GameScore", cy).code == 101)

            // A field added after the schema was built is there on the next request; a pointer is read as the caller.
            let owner = try await p.newUser("owner")
            _ = try await p.update("GameScore", bob, ["level": 3, "owner": p.userPointer(owner.id)])
            let query = "{ gameScore(id: \"\(bob)\") { level owner { objectId username } } }"
            let asMaster = try await p.graphQL(query, master: true)
            #expect(asMaster.data("gameScore") == ["level": 3, "owner": ["objectId": .string(owner.id), "username": "owner"]], "\(asMaster.json)")
            // Users are private to themselves (enforcePrivateUsers): an anonymous caller gets no owner.
            let anonymous = try await p.graphQL(query)
            #expect(anonymous.data("gameScore") == ["level": 3, "owner": .null], "\(anonymous.json)")
            let asOwner = try await p.graphQL(query, token: owner.token)
            #expect(asOwner.data("gameScore", "owner", "username") == "owner", "\(asOwner.json)")
        }
    }

    @Test("ACLs, CLPs and sessions hold as on REST; errors are Parse codes in 200s, header failures REST-shaped", arguments: Backend.all)
    func security(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let ann = try await p.newUser("ann")
            let hidden = try await p.createId("Secret", ["title": "hidden", "ACL": .object([ann.id: ["read": true]])])
            _ = try await p.createId("Secret", ["title": "public"])

            let titles: @Sendable (Reply) -> [String] = { reply in
                (reply.data("secrets", "edges")?.arrayValue ?? []).compactMap { $0["node"]?["title"]?.stringValue }.sorted()
            }
            let anonymous = try await p.graphQL("{ secrets { edges { node { title } } } }")
            #expect(titles(anonymous) == ["public"], "\(anonymous.json)")
            let rest = try await p.findAs(nil, "Secret")
            #expect(rest.results.compactMap { $0["title"]?.stringValue } == ["public"])
            let asAnn = try await p.graphQL("{ secrets { edges { node { title } } } }", token: ann.token)
            #expect(titles(asAnn) == ["hidden", "public"], "\(asAnn.json)")

            let denied = try await p.graphQL("{ secret(id: \"\(hidden)\") { title } }")
            #expect(denied.status == 200)
            #expect(denied.graphQLError.message == "Object not found.", "\(denied.json)")
            #expect(denied.graphQLError.code == 101)
            #expect(denied.json["data"] == .null)
            let byAnn = try await p.graphQL("{ secret(id: \"\(hidden)\") { title } }", token: ann.token)
            #expect(byAnn.data("secret", "title") == "hidden")

            // An ACL set through GraphQL is stored as Parse's ACL map.
            let created = try await p.graphQL(
                "mutation { createSecret(input: {fields: {title: \"mine\", ACL: {users: [{userId: \"\(Self.globalId("_User", ann.id))\", read: true, write: true}], public: {read: true, write: false}}}}) { secret { objectId } } }"
            )
            let mine = try #require(created.data("createSecret", "secret", "objectId")?.stringValue, "\(created.json)")
            #expect(try await p.get("Secret", mine)["ACL"] == .object([ann.id: ["read": true, "write": true], "*": ["read": true]]))
            let update = try await p.graphQL("mutation { updateSecret(input: {id: \"\(mine)\", fields: {title: \"x\"}}) { secret { objectId } } }")
            #expect(update.graphQLError.code == 101, "\(update.json)")

            _ = try await p.createId("Locked", ["n": 1])
            try await p.setCLP("Locked", ["get": ["*": true], "create": ["*": true]])
            let find = try await p.graphQL("{ lockeds { edges { node { objectId } } } }")
            #expect(find.status == 200)
            // Sanitized as REST answers it (`enableSanitizedErrorResponse`, Parse Server 9's default).
            #expect(find.graphQLError.message == "Permission denied", "\(find.json)")
            #expect(find.graphQLError.code == 119)
            // Only a count is a count, as `?count=1&limit=0` is on REST.
            #expect(try await p.graphQL("{ lockeds { count } }").graphQLError.code == 119)
            #expect(try await p.graphQL("{ lockeds { count } }", master: true).data("lockeds", "count") == 1)

            let noAppId = try await p.graphQL("{ health }", appId: false)
            #expect(noAppId.status == 403 && noAppId.json == ["error": "unauthorized"], "\(noAppId.json)")
            let badToken = try await p.graphQL("{ health }", token: "not-a-session")
            #expect(badToken.status == 400 && badToken.json == ["code": 209, "error": "Invalid session token"], "\(badToken.json)")
            #expect(try await p.graphQL("{ health }", token: "").data("health") == true)
            let syntax = try await p.graphQL("{ secrets { ")
            #expect(syntax.status == 400 && syntax.graphQLError.code == "GRAPHQL_PARSE_FAILED", "\(syntax.json)")
            let unknown = try await p.graphQL("{ secrets { edges { node { nope } } } }")
            #expect(unknown.status == 400 && unknown.graphQLError.code == "GRAPHQL_VALIDATION_FAILED", "\(unknown.json)")
            let introspection = try await p.graphQL("{ __schema { types { name } } }")
            #expect(introspection.status == 403, "\(introspection.json)")
            #expect(try await p.graphQL("{ __schema { queryType { name } } }", master: true).data("__schema", "queryType", "name") == "Query")
        }
    }

    @Test("the API answers only when mounted, at graphQLPath", arguments: [Backend.sqlite])
    func mounting(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let status = try await p.graphQL("{ health }").status
            #expect(status == 404)
        }
        try await TestServer.with(
            backend: backend,
            TestServer.options {
                $0.mountGraphQL = true; $0.graphQLPath = "/api/gql/"
            }
        ) { p in
            let reply = try await p.raw(.post, "/api/gql", body: #"{"query":"{ health }"}"#, headers: p.headers(master: false))
            #expect(reply.status == 200 && reply.json == ["data": ["health": true]], "\(reply.json)")
        }
    }
}
