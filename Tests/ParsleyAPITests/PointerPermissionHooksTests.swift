import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Synchronization
import Testing

/// A class's pointer permissions on update and delete come before its before-triggers: a trigger never sees a write
/// by a caller the permissions keep out (without triggers, the UPDATE or DELETE statement carries them itself).
@Suite("Pointer permissions before triggers")
struct PointerPermissionHooksTests {
    final class Seen: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    static func cloud(_ seen: Seen) -> CloudCode {
        var cloud = CloudCode()
        cloud.beforeSave("Owned") { req in seen.add("save \(req.object["title", as: String.self] ?? "?")") }
        cloud.beforeDelete("Owned") { req in seen.add("delete \(req.object["title", as: String.self] ?? "?")") }
        return cloud
    }

    @Test("another user's update and delete are 101 before any trigger runs; the owner's run the triggers", arguments: Backend.all)
    func keptOutBeforeTriggers(_ backend: Backend) async throws {
        let seen = Seen()
        try await TestServer.with(backend: backend, cloud: Self.cloud(seen)) { p in
            let alice = try await p.newUser("alice")
            let bob = try await p.newUser("bob")
            let id = try await p.createId("Owned", ["title": "mine", "owner": p.userPointer(alice.id)])
            let plain = try await p.createId("Unhooked", ["title": "mine", "owner": p.userPointer(alice.id)])
            for className in ["Owned", "Unhooked"] {
                try await p.setCLP(
                    className,
                    [
                        "get": ["*": true], "find": ["*": true], "create": ["*": true], "addField": ["*": true],
                        "update": ["pointerFields": ["owner"]], "delete": ["pointerFields": ["owner"]],
                    ])
            }
            #expect(seen.all == ["save mine"])
            for (className, objectId) in [("Owned", id), ("Unhooked", plain)] {
                let update = try await p.call(bob.token, .put, "/classes/\(className)/\(objectId)", ["title": "bob's"])
                #expect(update.status == 404, "\(className)")
                #expect(update.code == 101, "\(className)")
                let delete = try await p.call(bob.token, .delete, "/classes/\(className)/\(objectId)")
                #expect(delete.status == 404, "\(className)")
                #expect(delete.code == 101, "\(className)")
                #expect(try await p.get(className, objectId)["title"] == "mine", "\(className)")
            }
            #expect(seen.all == ["save mine"], "no trigger saw bob's writes")
            for (className, objectId) in [("Owned", id), ("Unhooked", plain)] {
                #expect(try await p.call(alice.token, .put, "/classes/\(className)/\(objectId)", ["title": "still mine"]).status == 200)
                #expect(try await p.call(alice.token, .delete, "/classes/\(className)/\(objectId)").status == 200)
                #expect(try await p.get(className, objectId).code == 101)
            }
            #expect(seen.all == ["save mine", "save still mine", "delete still mine"])
        }
    }
}
