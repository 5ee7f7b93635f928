import Foundation
import ParsleyCore
import Testing

/// Reads made while writes add fields: each sees a write whole or not at all. (A read takes the class's schema before
/// its rows; a write that adds a field publishes the schema before its transaction. Found by the jobs test in CI: a
/// `_JobStatus` read as `succeeded` with its message but without the `finishedAt` the same update wrote.)
@Suite("Reads beside writes that add fields")
struct ReadSkewTests {
    @Test(
        "a get, a find or an aggregate beside updates that each add a field: the object never shows an update without its field",
        arguments: Backend.all)
    func writesAreNotTornFromTheirNewFields(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let id = try await p.createId("Skew", ["n": 0])
            let rounds = 50
            let torn = try await withThrowingTaskGroup(of: [String].self) { group in
                group.addTask {
                    for i in 1...rounds {
                        let r = try await p.update("Skew", id, ["n": .int(Int64(i)), "f\(i)": .int(Int64(i))])
                        #expect(r.status == 200, "\(r.json)")
                    }
                    return []
                }
                for reader in 0..<4 {
                    group.addTask {
                        var torn: [String] = []
                        var seen = 0
                        while seen < rounds {
                            let object: JSONValue?
                            if reader == 0 {
                                object = try await p.find("Skew", where: ["objectId": .string(id)]).results.first
                            } else if reader == 3 {
                                // A pipeline without $group runs as a find of the master key.
                                object = try await AggregateHardeningTests.pipeline(p, "Skew", #"[{"$sort":{"n":-1}},{"$limit":1}]"#).results.first
                            } else {
                                object = try await p.get("Skew", id).json
                            }
                            seen = object?["n"]?.integerValue ?? 0
                            if seen > 0, object?["f\(seen)"] == nil { torn.append("n = \(seen) without f\(seen)") }
                        }
                        return torn
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(torn.isEmpty, "\(torn)")
        }
    }
}
