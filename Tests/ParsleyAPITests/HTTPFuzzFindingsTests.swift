import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// Requests the HTTP fuzzer (HTTPFuzzTests) once answered with a 500, each reduced to its cause; the seed that
/// found it is named. Both backends answer them with Parse's error or success, as Parse Server 7 does.
@Suite("HTTP fuzz findings")
struct HTTPFuzzFindingsTests {
    @Test("a batch sub-request no route takes is 107 'cannot route', alone or in a transaction (seed 3)", arguments: Backend.all)
    func unroutableBatchRequest(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let sub: JSONValue = ["method": "DELETE", "path": "/parse/classes/Thing"]
            var r = try await p.request(.post, "/batch", ["requests": [sub]], master: false)
            #expect(r.status == 200)
            #expect(r.json == [["error": ["code": 107, "error": "cannot route DELETE /classes/Thing"]]])
            r = try await p.request(.post, "/batch", ["requests": [sub], "transaction": true], master: false)
            #expect(r.status == 400)
            #expect(r.json == ["code": 107, "error": "cannot route DELETE /classes/Thing"])
        }
    }

    @Test("unsetting a field the class does not have changes nothing; a missing object is still 101 (seed 3)", arguments: Backend.all)
    func unsetUnknownField(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.allowClientClassCreation = true }) { p in
            let id = try await p.createId("Thing", ["a": 1])
            var r = try await p.request(.put, "/classes/Thing/\(id)", ["never": .null, "nested.x": ["__op": "Delete"], "a": 2], master: false)
            #expect(r.status == 200, "\(r.json)")
            r = try await p.request(.get, "/classes/Thing/\(id)", master: false)
            #expect(r.json["a"] == 2)
            #expect(r.json["never"] == nil)
            r = try await p.request(.put, "/classes/Thing/missing1", ["never": ["__op": "Delete"]], master: false)
            #expect(r.status == 404)
            #expect(r.json["code"] == 101)
            // A new object with an unset field it never had.
            r = try await p.request(.post, "/classes/Thing", ["other": ["__op": "Delete"], "third": .null], master: false)
            #expect(r.status == 201, "\(r.json)")
        }
    }
}

extension HTTPFuzzFindingsTests {
    @Test("a field set whole and changed by a dotted key in one update: the whole value, then the change (seed 0x5EED2026)", arguments: Backend.all)
    func wholeAndNestedInOneUpdate(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.allowClientClassCreation = true }) { p in
            let id = try await p.createId("Thing", ["obj": ["sub": 1, "s": "t"], "n": 1])
            var r = try await p.request(
                .put, "/classes/Thing/\(id)",
                ["obj": ["sub": 2, "deep": ["k": false]], "obj.sub": ["__op": "Increment", "amount": 3], "obj.deep.k": true], master: false)
            #expect(r.status == 200, "\(r.json)")
            r = try await p.request(.get, "/classes/Thing/\(id)", master: false)
            #expect(r.json["obj"] == ["sub": 5, "deep": ["k": true]])
            r = try await p.request(.put, "/classes/Thing/\(id)", ["obj": ["__op": "Delete"], "obj.deep.k": 1], master: false)
            #expect(r.status == 200, "\(r.json)")
            r = try await p.request(.get, "/classes/Thing/\(id)", master: false)
            #expect(r.json["obj"] == ["deep": ["k": 1]])
            // An operation on the field itself cannot be combined with a nested key: the types disagree.
            r = try await p.request(.put, "/classes/Thing/\(id)", ["obj": ["__op": "Increment", "amount": 1], "obj.x": 1], master: false)
            #expect(r.status == 400)
            #expect(r.json["code"] == 111)
        }
    }
}
