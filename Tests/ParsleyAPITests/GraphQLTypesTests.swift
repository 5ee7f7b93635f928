import Foundation
import HTTPTypes
import ParsleyCore
import Testing

/// Every Parse field type through GraphQL (docs/graphql-contract.md §3, §4): shaped outputs, typed inputs, pointers
/// and relations, the `node` query, `last`/`before` and the `where` operators, each compared with REST.
@Suite("GraphQL types")
struct GraphQLTypesTests {
    static let options = GraphQLTests.options

    static func globalId(_ className: String, _ id: String) -> String { GraphQLTests.globalId(className, id) }

    /// `Thing` with a field of every type, `Other` its pointer and relation target (made through REST, as master).
    static func seed(_ p: ParseClient) async throws -> (thing: String, other: String) {
        let other = try await p.createId("Other", ["name": "o0", "rank": 0])
        let thing = try await p.createId(
            "Thing",
            [
                "name": "seed", "count": 1, "flag": true, "when": ["__type": "Date", "iso": "2024-01-02T03:04:05.678Z"],
                "file": ["__type": "File", "name": "seed.txt"], "spot": ["__type": "GeoPoint", "latitude": 1, "longitude": 2],
                "area": ["__type": "Polygon", "coordinates": [[0, 0], [0, 1], [1, 1]]], "blob": ["__type": "Bytes", "base64": "c2VlZA=="],
                "list": [1, "a"], "meta": ["a": ["b": 1]], "other": p.pointer("Other", other),
                "others": ["__op": "AddRelation", "objects": [p.pointer("Other", other)]],
            ])
        return (thing, other)
    }

    static let everyField = """
        id objectId name count flag when file { name url } spot { latitude longitude } area { latitude longitude } blob
        list { __typename ... on Element { value } } meta other { objectId name }
        others(order: [rank_ASC]) { count edges { node { name rank } } }
        ACL { public { read write } users { userId read write } roles { roleName read write } }
        """

    @Test("each field type round-trips: created with its input, read with its output type, stored as REST has it", arguments: Backend.all)
    func roundTrip(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let (_, o0) = try await Self.seed(p)
            let ann = try await p.newUser("ann")
            let created = try await p.graphQL(
                "mutation ($input: CreateThingInput!) { createThing(input: $input) { thing { \(Self.everyField) } } }",
                [
                    "input": [
                        "fields": [
                            "name": "made", "count": 2, "flag": false, "when": "2025-05-06T07:08:09.010Z", "file": ["file": "made.txt"],
                            "spot": ["latitude": 10.5, "longitude": -20],
                            "area": [["latitude": 0, "longitude": 0], ["latitude": 0, "longitude": 2], ["latitude": 2, "longitude": 2]],
                            "blob": "bWFkZQ==", "list": [1, "b", ["x": 1]], "meta": ["k": "v"],
                            "other": ["link": .string(Self.globalId("Other", o0))],
                            "others": ["add": .array([.string(o0)]), "createAndAdd": [["name": "o1", "rank": 1]]],
                            "ACL": [
                                "public": ["read": true, "write": false],
                                "users": [["userId": .string(Self.globalId("_User", ann.id)), "read": true, "write": true]],
                            ],
                        ]
                    ]
                ], master: true)
            let thing = try #require(created.data("createThing", "thing"), "\(created.json)")
            let id = try #require(thing["objectId"]?.stringValue)
            #expect(thing["id"] == .string(Self.globalId("Thing", id)))
            #expect(thing["count"] == 2 && thing["flag"] == false && thing["when"] == "2025-05-06T07:08:09.010Z", "\(thing)")
            #expect(thing["spot"] == ["latitude": 10.5, "longitude": -20])
            // Parse closes a polygon: its first point again at the end.
            #expect(
                thing["area"] == [
                    ["latitude": 0, "longitude": 0], ["latitude": 0, "longitude": 2], ["latitude": 2, "longitude": 2],
                    ["latitude": 0, "longitude": 0],
                ])
            #expect(thing["blob"] == "bWFkZQ==")
            #expect(
                thing["list"] == [
                    ["__typename": "Element", "value": 1], ["__typename": "Element", "value": "b"], ["__typename": "Element", "value": ["x": 1]],
                ])
            #expect(thing["meta"] == ["k": "v"])
            #expect(thing["other"] == ["objectId": .string(o0), "name": "o0"])
            #expect(thing["others"]?["count"] == 2)
            #expect(thing["others"]?["edges"] == [["node": ["name": "o0", "rank": 0]], ["node": ["name": "o1", "rank": 1]]], "\(thing)")
            #expect(
                thing["ACL"] == [
                    "public": ["read": true, "write": false], "roles": .null,
                    "users": [["userId": .string(Self.globalId("_User", ann.id)), "read": true, "write": true]],
                ])

            // REST has stored the same values, as Parse's typed JSON.
            let rest = try await p.get("Thing", id)
            #expect(rest["spot"] == ["__type": "GeoPoint", "latitude": 10.5, "longitude": -20], "\(rest.json)")
            #expect(rest["area"]?["coordinates"] == [[0, 0], [0, 2], [2, 2], [0, 0]])
            #expect(rest["blob"] == ["__type": "Bytes", "base64": "bWFkZQ=="])
            #expect(rest["when"] == ["__type": "Date", "iso": "2025-05-06T07:08:09.010Z"])
            #expect(rest["file"]?["name"] == "made.txt" && thing["file"]?["name"] == "made.txt")
            #expect(thing["file"]?["url"] == rest["file"]?["url"], "\(thing) \(rest.json)")
            #expect(rest["other"] == p.pointer("Other", o0))
            #expect(rest["ACL"] == .object([ann.id: ["read": true, "write": true], "*": ["read": true]]))
            let related = try await p.find("Other", where: ["$relatedTo": ["object": p.pointer("Thing", id), "key": "others"]])
            #expect(related.results.compactMap { $0["name"]?.stringValue }.sorted() == ["o0", "o1"])

            // A REST-made object reads the same through GraphQL; no ACL at all is public read and write.
            let seed = try await p.graphQL("{ things(where: {name: {equalTo: \"seed\"}}) { edges { node { \(Self.everyField) } } } }")
            let node = try #require(seed.data("things", "edges")?.arrayValue?.first?["node"], "\(seed.json)")
            #expect(
                node["area"] == [
                    ["latitude": 0, "longitude": 0], ["latitude": 0, "longitude": 1], ["latitude": 1, "longitude": 1],
                    ["latitude": 0, "longitude": 0],
                ])
            #expect(node["blob"] == "c2VlZA==" && node["meta"] == ["a": ["b": 1]] && node["when"] == "2024-01-02T03:04:05.678Z")
            #expect(node["ACL"] == ["public": ["read": true, "write": true], "users": .null, "roles": .null], "\(node)")

            // null unsets a field on update.
            let unset = try await p.graphQL(
                "mutation { updateThing(input: {id: \"\(id)\", fields: {spot: null, blob: null}}) { thing { spot { latitude } blob name } } }",
                master: true)
            #expect(unset.data("updateThing", "thing") == ["spot": .null, "blob": .null, "name": "made"], "\(unset.json)")
            #expect(try await p.get("Thing", id)["spot"] == nil)
        }
    }

    @Test(
        "pointers link or createAndLink, relations add, remove and createAndAdd; the related objects are read as the caller", arguments: Backend.all)
    func pointersAndRelations(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let (thing, o0) = try await Self.seed(p)
            let ann = try await p.newUser("ann")
            let secret = try await p.createId("Other", ["name": "secret", "rank": 9, "ACL": .object([:])])

            let linked = try await p.graphQL(
                "mutation { updateThing(input: {id: \"\(Self.globalId("Thing", thing))\", fields: {other: {createAndLink: {name: \"fresh\", rank: 5}}, others: {add: [\"\(Self.globalId("Other", secret))\"], remove: [\"\(o0)\"]}}}) { thing { other { name rank } } } }"
            )
            #expect(linked.data("updateThing", "thing", "other") == ["name": "fresh", "rank": 5], "\(linked.json)")
            let stored = try await p.get("Thing", thing)
            let fresh = try #require(stored["other"]?["objectId"]?.stringValue)
            #expect(try await p.get("Other", fresh)["name"] == "fresh")
            let related = try await p.ids("Other", where: ["$relatedTo": ["object": p.pointer("Thing", thing), "key": "others"]])
            #expect(related == [secret])

            // The related secret is hidden to a user, as a REST `$relatedTo` find is; the master sees it.
            let query = "{ thing(id: \"\(thing)\") { others { count edges { node { name } } } } }"
            let asAnn = try await p.graphQL(query, token: ann.token)
            #expect(asAnn.data("thing", "others") == ["count": 0, "edges": []], "\(asAnn.json)")
            let asMaster = try await p.graphQL(query, master: true)
            #expect(asMaster.data("thing", "others") == ["count": 1, "edges": [["node": ["name": "secret"]]]], "\(asMaster.json)")

            let both = try await p.graphQL(
                "mutation { updateThing(input: {id: \"\(thing)\", fields: {other: {link: \"\(o0)\", createAndLink: {name: \"x\"}}}}) { thing { objectId } } }"
            )
            #expect(both.graphQLError.code == 106, "\(both.json)")
            #expect(both.graphQLError.message == "You need to provide link OR createLink on the pointer mutation of field other")
            let empty = try await p.graphQL("mutation { updateThing(input: {id: \"\(thing)\", fields: {others: {}}}) { thing { objectId } } }")
            #expect(empty.graphQLError.code == 106, "\(empty.json)")
            #expect(try await p.get("Thing", thing)["other"]?["objectId"] == .string(fresh))
        }
    }

    @Test("node(id:) reads any class by global id as the caller; ids are global everywhere", arguments: Backend.all)
    func node(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let (thing, o0) = try await Self.seed(p)
            let hidden = try await p.createId("Other", ["name": "hidden", "ACL": .object([:])])
            let read = try await p.graphQL(
                "query ($id: ID!) { node(id: $id) { id __typename ... on Thing { name other { id } } ... on ParseObject { objectId } } }",
                ["id": .string(Self.globalId("Thing", thing))])
            #expect(
                read.data("node") == [
                    "id": .string(Self.globalId("Thing", thing)), "__typename": "Thing", "name": "seed",
                    "other": ["id": .string(Self.globalId("Other", o0))], "objectId": .string(thing),
                ], "\(read.json)")
            let other = try await p.graphQL("{ node(id: \"\(Self.globalId("Other", o0))\") { ... on Other { name } } }")
            #expect(other.data("node") == ["name": "o0"], "\(other.json)")
            let denied = try await p.graphQL("{ node(id: \"\(Self.globalId("Other", hidden))\") { id } }")
            #expect(denied.graphQLError.code == 101, "\(denied.json)")
            #expect(try await p.graphQL("{ node(id: \"\(Self.globalId("Other", hidden))\") { id } }", master: true).data("node", "id") != nil)
            #expect(try await p.graphQL("{ node(id: \"\(o0)\") { id } }").graphQLError.code == 101)
        }
    }

    @Test("last and before page from the end, as Parse Server counts them", arguments: Backend.all)
    func lastAndBefore(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            for n in 0..<12 { _ = try await p.createId("Item", ["n": .int(Int64(n))]) }
            func page(_ args: String) async throws -> (ns: [Int64], info: JSONValue?, reply: Reply) {
                let reply = try await p.graphQL(
                    "{ items(order: [n_ASC], \(args)) { edges { cursor node { n } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }"
                )
                let ns = (reply.data("items", "edges")?.arrayValue ?? []).compactMap { $0["node"]?["n"]?.integerValue }.map { Int64($0) }
                return (ns, reply.data("items", "pageInfo"), reply)
            }
            let last = try await page("last: 3")
            #expect(last.ns == [9, 10, 11], "\(last.reply.json)")
            #expect(last.info?["hasNextPage"] == false && last.info?["hasPreviousPage"] == true)
            let start = try #require(last.info?["startCursor"]?.stringValue)
            let before = try await page("last: 3, before: \"\(start)\"")
            #expect(before.ns == [6, 7, 8], "\(before.reply.json)")
            #expect(try await page("first: 5, last: 2").ns == [3, 4])
            #expect(try await page("before: \"\(start)\", skip: 7").ns == [7, 8])
            #expect(try await page("last: 0").ns == [])
            #expect(try await page("first: 2, options: {readPreference: PRIMARY}").ns == [0, 1])
            let bad = try await page("before: \"nope\"")
            #expect(bad.reply.graphQLError.code == 102 && bad.reply.graphQLError.message == "Before is not a valid cursor", "\(bad.reply.json)")
            #expect(try await page("last: -1").reply.graphQLError.message == "Last should be a positive number")
        }
    }

    @Test("where takes each type's operators and AND, OR, NOR, as REST's where", arguments: Backend.all)
    func whereOperators(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let (seed, o0) = try await Self.seed(p)
            let o1 = try await p.createId("Other", ["name": "o1", "rank": 1])
            let far = try await p.createId(
                "Thing",
                [
                    "name": "Far", "count": 5, "list": [2, "b"], "meta": ["a": ["b": 7]], "other": p.pointer("Other", o1),
                    "spot": ["__type": "GeoPoint", "latitude": 40, "longitude": 40],
                ])
            let bare = try await p.createId("Thing", ["name": "bare", "count": 9])
            func names(_ whereText: String) async throws -> [String] {
                let reply = try await p.graphQL("{ things(where: \(whereText), order: [name_ASC]) { edges { node { name } } } }")
                guard reply.json["errors"] == nil else { throw Failure("\(whereText): \(reply.json)") }
                return (reply.data("things", "edges")?.arrayValue ?? []).compactMap { $0["node"]?["name"]?.stringValue }
            }
            #expect(try await names(#"{name: {matchesRegex: "^f", options: "i"}}"#) == ["Far"])
            let byDate = try await p.graphQL("{ things(order: [when_DESC, name_ASC]) { edges { node { name } } } }")
            #expect(byDate.data("things", "edges")?.arrayValue?.first?["node"]?["name"] != nil, "\(byDate.json)")
            #expect(try await names(#"{when: {lessThan: "2024-06-01T00:00:00.000Z"}, blob: {equalTo: "c2VlZA=="}}"#) == ["seed"])
            #expect(try await names(#"{file: {equalTo: "seed.txt"}}"#) == ["seed"])
            #expect(try await names("{count: {in: [1, 9]}}") == ["bare", "seed"])
            #expect(try await names("{count: {notIn: [1, 9], greaterThanOrEqualTo: 2}}") == ["Far"])
            #expect(try await names(#"{list: {contains: [2, "b"]}}"#) == ["Far"])
            // As REST's `$containedBy` (an object without the array matches too, as on MongoDB).
            let containedBy = try await p.find("Thing", where: ["list": ["$containedBy": [1, "a", 3]]], ["order": "name"])
            let restNames = containedBy.results.compactMap { $0["name"]?.stringValue }
            #expect(restNames.contains("seed") && !restNames.contains("Far"))
            #expect(try await names(#"{list: {containedBy: [1, "a", 3]}}"#) == restNames)
            #expect(try await names(#"{meta: {equalTo: {key: "a.b", value: 7}}}"#) == ["Far"])
            #expect(try await names(#"{other: {have: {name: {equalTo: "o1"}}}}"#) == ["Far"])
            #expect(try await names(#"{other: {haveNot: {name: {equalTo: "o1"}}}, name: {notEqualTo: "bare"}}"#) == ["seed"])
            #expect(try await names("{other: {exists: false}}") == ["bare"])
            #expect(try await names("{others: {exists: true}}") == ["seed"])
            #expect(try await names(#"{others: {have: {id: {equalTo: "\#(Self.globalId("Other", o0))"}}}}"#) == ["seed"])
            #expect(try await names("{spot: {nearSphere: {latitude: 1, longitude: 2}, maxDistanceInKilometers: 100}}") == ["seed"])
            #expect(
                try await names("{spot: {within: {box: {bottomLeft: {latitude: 30, longitude: 30}, upperRight: {latitude: 50, longitude: 50}}}}}")
                    == ["Far"])
            #expect(try await names("{spot: {geoWithin: {centerSphere: {center: {latitude: 40, longitude: 40}, distance: 0.1}}}}") == ["Far"])
            #expect(
                try await names(
                    "{spot: {geoWithin: {polygon: [{latitude: 0, longitude: 0}, {latitude: 0, longitude: 5}, {latitude: 5, longitude: 5}, {latitude: 5, longitude: 0}]}}}"
                ) == ["seed"])
            #expect(try await names("{area: {geoIntersects: {point: {latitude: 0.2, longitude: 0.6}}}}") == ["seed"])
            #expect(try await names("{area: {geoIntersects: {point: {latitude: 0.9, longitude: 0.1}}}}") == [])
            #expect(try await names("{area: {exists: false}, spot: {exists: true}}") == ["Far"])
            #expect(try await names(#"{name: {text: {search: {term: "seed"}}}}"#) == ["seed"])
            #expect(try await names(#"{id: {in: ["\#(Self.globalId("Thing", far))", "\#(bare)"]}}"#) == ["Far", "bare"])
            #expect(try await names(#"{OR: [{name: {equalTo: "seed"}}, {count: {greaterThan: 6}}]}"#) == ["bare", "seed"])
            #expect(try await names(#"{NOR: [{name: {equalTo: "seed"}}], AND: [{count: {lessThan: 9}}]}"#) == ["Far"])
            #expect(
                try await names(#"{name: {inQueryKey: {key: "name", query: {className: "Other", where: {rank: {equalTo: 0}}}}}}"#) == []
            )
            _ = try await p.update("Other", o1, ["name": "Far"])
            #expect(try await names(#"{name: {inQueryKey: {key: "name", query: {className: "Other", where: {rank: {equalTo: 1}}}}}}"#) == ["Far"])
            #expect(try await names(#"{name: {notInQueryKey: {key: "name", query: {className: "Other", where: {}}}}}"#) == ["bare", "seed"])
            _ = seed
            let invalid = try await p.graphQL(
                #"{ things(where: {name: {inQueryKey: {key: "name", query: {className: "Other", where: {rank: {nope: 1}}}}}}) { count } }"#)
            #expect(invalid.status == 200 && invalid.graphQLError.code == 102, "\(invalid.json)")
            #expect(invalid.graphQLError.message == "Invalid constraint nope")
            #expect(try await names(#"{name: {inQueryKey: {key: "name", query: {className: "Other", where: {rank: 1}}}}}"#) == ["Far"])
        }
    }

    @Test("a required field is non-null on the class type and its create input", arguments: [Backend.sqlite])
    func required(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let schema = try await p.request(
                .post, "/schemas/Req", ["className": "Req", "fields": ["title": ["type": "String", "required": true], "note": ["type": "String"]]])
            #expect(schema.status == 200, "\(schema.json)")
            let types = try await p.graphQL(
                #"{ t: __type(name: "Req") { fields { name type { kind } } } i: __type(name: "CreateReqFieldsInput") { inputFields { name type { kind } } } }"#,
                master: true)
            let kinds = Dictionary(
                uniqueKeysWithValues: (types.data("t", "fields")?.arrayValue ?? []).compactMap { f in
                    f["name"]?.stringValue.map { ($0, f["type"]?["kind"]?.stringValue ?? "") }
                })
            #expect(kinds["title"] == "NON_NULL" && kinds["note"] == "SCALAR" && kinds["ACL"] == "NON_NULL", "\(types.json)")
            let input = (types.data("i", "inputFields")?.arrayValue ?? []).first { $0["name"] == "title" }
            #expect(input?["type"]?["kind"] == "NON_NULL")
            let missing = try await p.graphQL("mutation { createReq(input: {fields: {note: \"n\"}}) { req { objectId } } }")
            #expect(missing.status == 400, "\(missing.json)")
            let made = try await p.graphQL("mutation { createReq(input: {fields: {title: \"t\"}}) { req { title note } } }")
            #expect(made.data("createReq", "req") == ["title": "t", "note": .null], "\(made.json)")

            // Classes whose names the shared types hold (`GeoPoint`, `Number` → `NumberWhereInput`) are not shown,
            // and the rest of the schema still builds.
            _ = try await p.createId("GeoPoint", ["x": 1])
            _ = try await p.createId("Number", ["x": 1])
            #expect(try await p.graphQL("{ reqs { count } }").data("reqs", "count") == 1)
            #expect(try await p.graphQL("{ numbers { count } }").status == 400)
        }
    }
}
