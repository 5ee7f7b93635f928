import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// A GraphQL selection read as Parse Server reads it (docs/graphql-contract.md §4.1, `extractKeysAndInclude`): the
/// selected fields become the REST `keys`, the selected pointers its `include`, so a find and the objects it points
/// to are one read through the query service, with every ACL, CLP and protected field applied as on REST.
@Suite("GraphQL selections")
struct GraphQLSelectionTests {
    static let options = GraphQLTests.options

    /// Logs each `Item` find's keys and include, and every read of `Owner` or `Team` of its own (a get per pointer).
    static func cloud(_ log: CloudCodeTests.AfterLog) -> CloudCode {
        var cloud = CloudCode()
        cloud.beforeFind("Item") { req in
            log.add(
                "Item keys=\((req.query.keys ?? ["*"]).sorted().joined(separator: ",")) include=\(req.query.include.sorted().joined(separator: ","))")
        }
        cloud.beforeFind("Owner") { _ in log.add("Owner") }
        cloud.beforeFind("Team") { _ in log.add("Team") }
        return cloud
    }

    /// Two teams, three owners (one only its creator may read), four items (one with no owner).
    static func seed(_ p: ParseClient) async throws -> (items: [String], owners: [String]) {
        let red = try await p.createId("Team", ["name": "red"])
        let blue = try await p.createId("Team", ["name": "blue"])
        let ann = try await p.createId("Owner", ["name": "ann", "secret": "a1", "team": p.pointer("Team", red)])
        let bob = try await p.createId("Owner", ["name": "bob", "secret": "b2", "team": p.pointer("Team", blue)])
        let eve = try await p.createId("Owner", ["name": "eve", "secret": "e3", "team": p.pointer("Team", red), "ACL": .object([:])])
        var items: [String] = []
        for (i, owner) in [ann, bob, eve, nil].enumerated() {
            var body: [String: JSONValue] = ["name": .string("i\(i)"), "score": .int(Int64(i * 10)), "tags": [.string("t\(i)")]]
            if let owner { body["owner"] = p.pointer("Owner", owner) }
            if i == 0 { body["crew"] = [p.pointer("Owner", bob), "plain"] }
            items.append(try await p.createId("Item", .object(body)))
        }
        return (items, [ann, bob, eve])
    }

    @Test("a find's pointers, nested, come from one read with keys and include, not a get per object", arguments: Backend.all)
    func nestedPointers(_ backend: Backend) async throws {
        let log = CloudCodeTests.AfterLog()
        try await TestServer.with(backend: backend, Self.options, cloud: Self.cloud(log)) { p in
            let user = try await p.newUser("reader")
            _ = try await Self.seed(p)
            let query = "{ items(order: [name_ASC]) { edges { node { name owner { id name team { name } } } } } }"
            let before = log.all.count
            let r = try await p.graphQL(query, token: user.token)
            let names = r.data("items", "edges")?.arrayValue?.map { $0["node"]?["owner"]?["name"] ?? .null }
            let teams = r.data("items", "edges")?.arrayValue?.map { $0["node"]?["owner"]?["team"]?["name"] ?? .null }
            #expect(names == ["ann", "bob", .null, .null], "\(r.json)")
            #expect(teams == ["red", "blue", .null, .null], "\(r.json)")
            let ownerId = r.data("items", "edges")?.arrayValue?.first?["node"]?["owner"]?["id"]?.stringValue
            #expect(ownerId.flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("Owner:") == true)
            // One find of Item, asking only for what is selected, its pointers included; no get of an Owner or a Team.
            let lines = Array(log.all.dropFirst(before))
            #expect(
                lines == ["Item keys=name,owner,owner.name,owner.objectId,owner.team,owner.team.name,owner.team.objectId include=owner,owner.team"],
                "\(lines)")
            // The same objects REST answers with include.
            let rest = try await p.findAs(user.token, "Item", ["order": "name", "include": "owner.team"])
            #expect(rest.results.map { $0["owner"]?["team"]?["name"] ?? .null } == teams)
        }
    }

    @Test("a pointer the caller may not read is null, in a find, a get and the master key still sees it", arguments: Backend.all)
    func hiddenPointer(_ backend: Backend) async throws {
        let log = CloudCodeTests.AfterLog()
        try await TestServer.with(backend: backend, Self.options, cloud: Self.cloud(log)) { p in
            let user = try await p.newUser("reader")
            // Eve's Owner is readable by nobody but the master key.
            let (items, _) = try await Self.seed(p)
            let find = try await p.graphQL(
                "{ items(where: {name: {equalTo: \"i2\"}}) { edges { node { name owner { name } } } } }", token: user.token)
            #expect(find.data("items", "edges") == [["node": ["name": "i2", "owner": .null]]], "\(find.json)")
            let get = try await p.graphQL("{ item(id: \"\(items[2])\") { name owner { name team { name } } } }", token: user.token)
            #expect(get.data("item") == ["name": "i2", "owner": .null], "\(get.json)")
            let master = try await p.graphQL("{ item(id: \"\(items[2])\") { owner { name team { name } } } }", master: true)
            #expect(master.data("item", "owner") == ["name": "eve", "team": ["name": "red"]], "\(master.json)")
            // A pointer to an object that is gone is null too.
            let gone = try await p.createId("Owner", ["name": "gone"])
            let orphan = try await p.createId("Item", ["name": "orphan", "owner": p.pointer("Owner", gone)])
            #expect(try await p.request(.delete, "/classes/Owner/\(gone)").status == 200)
            let r = try await p.graphQL("{ item(id: \"\(orphan)\") { name owner { name } } }", token: user.token)
            #expect(r.data("item") == ["name": "orphan", "owner": .null], "\(r.json)")
        }
    }

    @Test("protected fields stay hidden whatever is selected, also through included pointers and userField rules", arguments: Backend.all)
    func protectedFields(_ backend: Backend) async throws {
        let log = CloudCodeTests.AfterLog()
        try await TestServer.with(backend: backend, Self.options, cloud: Self.cloud(log)) { p in
            let user = try await p.newUser("reader")
            let other = try await p.newUser("other")
            _ = try await Self.seed(p)
            try await p.setCLP("Owner", ["find": ["*": true], "get": ["*": true], "protectedFields": ["*": ["secret"]]])
            let r = try await p.graphQL("{ items(order: [name_ASC], first: 1) { edges { node { owner { name secret } } } } }", token: user.token)
            #expect(r.data("items", "edges") == [["node": ["owner": ["name": "ann", "secret": .null]]]], "\(r.json)")
            let master = try await p.graphQL("{ items(order: [name_ASC], first: 1) { edges { node { owner { secret } } } } }", master: true)
            #expect(master.data("items", "edges") == [["node": ["owner": ["secret": "a1"]]]], "\(master.json)")

            // `userField:` rules need a field the selection does not name: it is read for the rule, not answered.
            let mine = try await p.createId("Note", ["text": "t", "pin": "9", "author": p.pointer("_User", user.id)])
            try await p.setCLP(
                "Note", ["find": ["*": true], "get": ["*": true], "protectedFields": ["*": ["pin"], "userField:author": []]])
            let own = try await p.graphQL("{ note(id: \"\(mine)\") { text pin } }", token: user.token)
            #expect(own.data("note") == ["text": "t", "pin": "9"], "\(own.json)")
            let foreign = try await p.graphQL("{ notes { edges { node { text pin } } } }", token: other.token)
            #expect(foreign.data("notes", "edges") == [["node": ["text": "t", "pin": .null]]], "\(foreign.json)")
        }
    }

    @Test("fragments, inline fragments, node, arrays of pointers and relations are read with the keys they select", arguments: Backend.all)
    func fragments(_ backend: Backend) async throws {
        let log = CloudCodeTests.AfterLog()
        try await TestServer.with(backend: backend, Self.options, cloud: Self.cloud(log)) { p in
            let user = try await p.newUser("reader")
            let (items, owners) = try await Self.seed(p)
            _ = try await p.request(
                .put, "/classes/Item/\(items[0])", ["members": ["__op": "AddRelation", "objects": [p.pointer("Owner", owners[1])]]])
            let query = """
                query { items(where: {name: {equalTo: "i0"}}) { edges { node { ...ItemFields ... on Item { owner { ... on Owner { team { name } } } } } } } }
                fragment ItemFields on Item { objectId owner { ...OwnerFields } crew { ... on Element { value } ... on Owner { name } } }
                fragment OwnerFields on Owner { name }
                """
            let before = log.all.count
            let r = try await p.graphQL(query, token: user.token)
            let node = r.data("items", "edges")?.arrayValue?.first?["node"]
            #expect(node?["objectId"] == .string(items[0]), "\(r.json)")
            #expect(node?["owner"] == ["name": "ann", "team": ["name": "red"]], "\(r.json)")
            // An array's pointers selected on their class type are included; other items stay elements.
            #expect(node?["crew"] == [["name": "bob"], ["value": "plain"]], "\(r.json)")
            let lines = Array(log.all.dropFirst(before))
            #expect(
                lines == [
                    "Item keys=crew,crew.name,objectId,owner,owner.name,owner.objectId,owner.team,owner.team.name,owner.team.objectId include=crew,owner,owner.team"
                ], "\(lines)")

            // node reads the fields of the fragment on the id's class.
            let byNode = try await p.graphQL(
                "{ node(id: \"\(GraphQLTests.globalId("Item", items[1]))\") { ... on Item { score owner { name } } ... on Owner { secret } } }",
                token: user.token)
            #expect(byNode.data("node") == ["score": 10, "owner": ["name": "bob"]], "\(byNode.json)")
            #expect(log.all.dropFirst(before + 1) == ["Item keys=owner,owner.name,owner.objectId,score include=owner"], "\(log.all)")

            // A relation's connection includes the pointers of its nodes too.
            let related = try await p.graphQL(
                "{ item(id: \"\(items[0])\") { members { edges { node { name team { name } } } } } }", token: user.token)
            #expect(related.data("item", "members", "edges") == [["node": ["name": "bob", "team": ["name": "blue"]]]], "\(related.json)")
            #expect(!log.all.contains("Team"), "\(log.all)")
        }
    }
}
