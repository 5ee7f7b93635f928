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
}
