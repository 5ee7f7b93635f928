import Foundation
import HTTPTypes
import NIOCore
import ParsleyCore
import ParsleyDomain
import Testing

/// Random and mutated requests against a real server on both backends: bodies, `where` clauses, parameters,
/// headers, paths and batches, as anonymous clients, as users, and with the master key on the fuzzer's own classes
/// only. No answer may be a 5xx, every error must have Parse's shape, the server must still answer `/health`,
/// and the fixture (objects, schemas and class-level permissions the fuzzer may read but not write) must come out
/// unchanged. Seeded: `PARSLEY_FUZZ_SEED` and `PARSLEY_FUZZ_ITERATIONS` repeat or lengthen a run.
@Suite("HTTP fuzz")
struct HTTPFuzzTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["PARSLEY_FUZZ_SEED"] ?? "") ?? 0x5EED_2026
    static let iterations = Int(ProcessInfo.processInfo.environment["PARSLEY_FUZZ_ITERATIONS"] ?? "") ?? 1_500
    static let fixtureClasses = ["FixtureA", "FixtureB"]
    /// Clients may read the fixture classes but never write them or add fields.
    static let readOnly: JSONValue = [
        "find": ["*": true], "get": ["*": true], "count": ["*": true], "create": [:], "update": [:], "delete": [:], "addField": [:],
    ]

    /// Objects of every type, in classes clients may only read, and two users.
    func makeFixture(_ p: ParseClient) async throws -> (ids: [String], tokens: [String]) {
        let alice = try await p.signUp("fx-alice")
        let bob = try await p.signUp("fx-bob")
        var ids: [String] = []
        let b = try await p.createId("FixtureB", ["name": "target", "n": 2])
        ids.append(b)
        for i in 0..<5 {
            let id = try await p.createId(
                "FixtureA",
                [
                    "name": .string("object \(i)"), "n": .int(Int64(i)), "x": .double(Double(i) / 3), "ok": .bool(i % 2 == 0),
                    "tags": ["a", .int(Int64(i)), ["k": "v"]], "obj": ["sub": ["deep": .int(Int64(i))], "s": "t"],
                    "when": ["__type": "Date", "iso": .string("2024-05-0\(i + 1)T10:00:00.000Z")],
                    "ptr": ["__type": "Pointer", "className": "FixtureB", "objectId": .string(b)],
                    "geo": ["__type": "GeoPoint", "latitude": .double(10 + Double(i)), "longitude": 20],
                    "owner": p.userPointer(alice.id),
                    "rel": ["__op": "AddRelation", "objects": [["__type": "Pointer", "className": "FixtureB", "objectId": .string(b)]]],
                    "ACL": i == 4 ? .object([alice.id: ["read": true]]) : ["*": ["read": true]],
                ])
            ids.append(id)
        }
        for className in Self.fixtureClasses {
            let r = try await p.request(.put, "/schemas/\(className)", ["className": .string(className), "classLevelPermissions": Self.readOnly])
            guard r.status == 200 else { throw Failure("CLP of \(className): \(r.json)") }
        }
        _ = try await p.createRole("FixtureRole", users: [alice.id], acl: ["*": ["read": true]])
        return (ids, [alice.token, bob.token])
    }

    /// Everything the fuzzer must not change: the fixture's objects and schemas, and the fixture role.
    func snapshot(_ p: ParseClient) async throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for className in Self.fixtureClasses {
            out[className] = try await p.find(className, ["order": "objectId", "limit": "1000"]).json
            out["schema:" + className] = try await p.request(.get, "/schemas/\(className)").json
        }
        out["roles"] = try await p.request(.get, "/roles?where=" + ParseClient.encode(#"{"name":"FixtureRole"}"#)).json
        return out
    }

    @Test(
        "random and mutated requests: never a 5xx, always Parse's error shape, /health still answers, the fixture unchanged", arguments: Backend.all)
    func fuzz(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let (ids, tokens) = try await makeFixture(p)
            let before = try await snapshot(p)
            var generator = FuzzGenerator(
                rng: SplitMix64(seed: Self.seed), appId: p.options.applicationId, masterKey: p.options.masterKey, tokens: tokens,
                fixtureClasses: Self.fixtureClasses, fixtureIds: ids)
            var statuses: [Int: Int] = [:]
            for i in 0..<Self.iterations {
                let request = generator.next()
                var headers = HTTPFields()
                for (name, value) in request.headers { headers[HTTPField.Name(name)!] = value }
                let status: Int, body: ByteBuffer
                do {
                    (status, _, body) = try await p.send(request.path, request.method, headers, request.body.map { ByteBuffer(bytes: $0) })
                } catch {
                    Issue.record("request \(i) (seed \(Self.seed)) got no answer (\(error)): \(request)")
                    break
                }
                statuses[status, default: 0] += 1
                if status == 201, request.path.hasPrefix("/parse/classes/\(FuzzGenerator.typedClass)"),
                    let id = (try? JSONParser.parse(String(buffer: body)))?["objectId"]?.stringValue
                {
                    generator.createdIds.append(id)
                }
                #expect(status < 500, "request \(i) (seed \(Self.seed)) answered \(status): \(request) -> \(String(buffer: body).prefix(400))")
                if status >= 400, request.method != .head {
                    // Parse's error shape: {"code": N, "error": "..."}; 403 is {"error": "unauthorized..."}.
                    let json = try? JSONParser.parse(String(buffer: body))
                    let shaped = json?["error"]?.stringValue != nil && (status == 403 || json?["code"]?.integerValue != nil)
                    #expect(
                        shaped,
                        "request \(i) (seed \(Self.seed)): \(status) without Parse's error shape: \(request) -> \(String(buffer: body).prefix(400))")
                }
            }
            print("HTTP fuzz on \(backend): seed \(Self.seed), \(Self.iterations) requests, statuses \(statuses.sorted { $0.key < $1.key })")
            let health = try await p.request(.get, "/health", master: false)
            #expect(health.status == 200)
            let after = try await snapshot(p)
            for key in before.keys.sorted() {
                #expect(
                    before[key] == after[key],
                    "\(key) changed:\nbefore \(before[key].map(JSONWriter.string) ?? "-")\nafter  \(after[key].map(JSONWriter.string) ?? "-")")
            }
        }
    }
}
