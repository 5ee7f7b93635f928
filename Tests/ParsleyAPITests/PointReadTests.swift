import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// A get by id without keys or includes takes the short path (`QueryService.pointRead`) and a kept statement
/// (`PointStatements`): what it answers must be what the general find answers, for every id, caller and schema.
@Suite("Get by id: the point-read path")
struct PointReadTests {
    @Test("each id answers its own object, every caller their own rights, and a new column is seen", arguments: Backend.all)
    func sameAsFind(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let ann = try await p.signUp("ann")
            var ids: [String] = []
            for n in 0..<6 { ids.append(try await p.createId("Card", ["n": .int(Int64(n)), "tags": ["a", "b"]])) }
            let hidden = try await p.createId("Card", ["n": 99, "ACL": [ann.id: ["read": true, "write": true]]])
            // The same statement for many ids: each answers its own object, as the find by id does.
            for (n, id) in ids.enumerated().reversed() {
                let got = try await p.get("Card", id, master: false)
                #expect(got.status == 200)
                #expect(got["n"] == .int(Int64(n)))
                #expect(got["objectId"]?.stringValue == id)
                let found = try await p.find("Card", where: ["objectId": .string(id)], master: false)
                #expect(found.results.first == got.json)
            }
            // Callers with other read rights never share an answer.
            #expect(try await p.get("Card", hidden, master: false).code == 101)
            #expect(try await p.asUser(ann.token, .get, "/classes/Card/\(hidden)")["n"] == 99)
            #expect(try await p.get("Card", hidden, master: false).code == 101)
            #expect(try await p.get("Card", hidden)["n"] == 99)
            // A column added after the statement was kept is returned at once.
            #expect(try await p.update("Card", ids[0], ["colour": "red"]).status == 200)
            #expect(try await p.get("Card", ids[0], master: false)["colour"] == "red")
            // Ids the kept statement does not take (not plain letters and digits) answer the same way.
            #expect(try await p.get("Card", "no%20such%2Fid", master: false).code == 101)
            #expect(try await p.get("Card", "missing0001", master: false).code == 101)
            // keys and include go the general way and agree.
            let keyed = try await p.get("Card", ids[1], "?keys=n", master: false)
            #expect(keyed["n"] == 1 && keyed["tags"] == nil)
        }
    }

    @Test("a protected field stays hidden on the point-read path", arguments: Backend.all)
    func protectedFields(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("Secretive", ["open": 1, "secret": "s"])
            #expect(try await p.get("Secretive", id, master: false)["secret"] == "s")
            let clp = try await p.request(
                .put, "/schemas/Secretive",
                [
                    "classLevelPermissions": [
                        "get": ["*": true], "find": ["*": true], "create": ["*": true], "update": ["*": true], "delete": ["*": true],
                        "addField": ["*": true], "protectedFields": ["*": ["secret"]],
                    ]
                ])
            #expect(clp.status == 200, "\(clp.json)")
            let got = try await p.get("Secretive", id, master: false)
            #expect(got["open"] == 1)
            #expect(got["secret"] == nil)
            #expect(try await p.get("Secretive", id)["secret"] == "s")
        }
    }

    @Test("a get under a pointer permission or an ACL (objectId among plain conditions) answers as the find does", arguments: Backend.all)
    func pinnedByPermissions(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let ann = try await p.signUp("ann")
            let bob = try await p.signUp("bob")
            let pointer: JSONValue = ["__type": "Pointer", "className": "_User", "objectId": .string(ann.id)]
            let mine = try await p.createId("Diary", ["owner": pointer, "text": "mine"])
            let shared = try await p.createId("Diary", ["owner": pointer, "text": "shared", "ACL": [bob.id: ["read": true]]])
            try await p.setCLP("Diary", ["get": [:], "find": [:], "create": ["*": true], "readUserFields": ["owner"], "addField": ["*": true]])
            // The owner reads through the pointer permission; another user and nobody do not.
            #expect(try await p.asUser(ann.token, .get, "/classes/Diary/\(mine)")["text"] == "mine")
            #expect(try await p.asUser(bob.token, .get, "/classes/Diary/\(mine)").code == 101)
            #expect(try await p.get("Diary", mine, master: false).code == 101)
            // The ACL and the pointer permission both hold: bob is in the ACL but not the owner.
            #expect(try await p.asUser(bob.token, .get, "/classes/Diary/\(shared)").code == 101)
            #expect(try await p.asUser(ann.token, .get, "/classes/Diary/\(shared)").code == 101)
            // With the pointer permission gone, the ACL alone decides.
            try await p.setCLP("Diary", ["get": ["*": true], "find": ["*": true], "create": ["*": true], "addField": ["*": true]])
            #expect(try await p.asUser(bob.token, .get, "/classes/Diary/\(shared)")["text"] == "shared")
            #expect(try await p.get("Diary", shared, master: false).code == 101)
            // A find that pins an id next to plain conditions and to a sub-query answers the same as before.
            let pinned = try await p.request(
                .get, "/classes/Diary?where=" + ParseClient.encode(#"{"objectId":"\#(mine)","text":{"$in":["mine","x"]}}"#), master: false,
                extra: ["X-Parse-Session-Token": ann.token])
            #expect(pinned["results"]?.arrayValue?.count == 1)
            let sub = try await p.request(
                .get,
                "/classes/Diary?where="
                    + ParseClient.encode(#"{"objectId":"\#(mine)","owner":{"$inQuery":{"where":{"username":"ann"},"className":"_User"}}}"#),
                master: true)
            #expect(sub["results"]?.arrayValue?.count == 1)
        }
    }

    @Test("query parameters: percent escapes, + for a space, a piece without a value, an empty key")
    func queryParameters() async throws {
        try await TestServer.with(backend: .sqlite) { p in
            _ = try await p.createId("Note", ["title": "a b+c", "n": 1])
            _ = try await p.createId("Note", ["title": "other", "n": 2])
            // `+` is a space and `%2B` a plus; `&&` and an empty key (`=x`) are ignored, as before.
            let found = try await p.request(
                .get, "/classes/Note?&where=%7B%22title%22:%22a+b%2Bc%22%7D&&=x&keys=+title+,+n&limit=5", master: false)
            let results = try #require(found["results"]?.arrayValue, "\(found.json)")
            #expect(results.count == 1, "\(found.json)")
            #expect(results.first?["title"] == "a b+c")
            #expect(results.first?["n"] == 1)
            // A parameter without a value is still a parameter (an unknown one: 102).
            #expect(try await p.request(.get, "/classes/Note?flag&limit=1", master: false).code == 102)
            // A NUL anywhere in a parameter is refused.
            #expect(try await p.request(.get, "/classes/Note?where=%7B%22title%22:%22a%00%22%7D", master: false).code == 107)
        }
    }
}
