import Foundation
import HummingbirdTesting
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPostgres
import ParsleyStorage
import Testing

/// `include` in LiveQuery subscriptions (Parsley's extension, as parse-server PR 9827 and Parse-SDK-JS PR 2694 send
/// it): events carry the objects their pointers name, resolved with the subscriber's rights at the time of the event,
/// exactly as a REST find with the same `include` answers that subscriber (the conformance this suite checks).
@Suite("LiveQuery include")
struct LiveQueryIncludeTests {
    typealias T = LiveQueryTests

    /// A league, a team in it with a protected `secret`, a hidden team (readable by nobody but the master key), and a
    /// player of the first team.
    static func seed(_ p: ParseClient) async throws -> (red: String, hidden: String, first: String) {
        let league = try await p.createId("League", ["name": "north"])
        let red = try await p.createId("Team", ["name": "red", "secret": "s1", "league": p.pointer("League", league)])
        let hidden = try await p.createId("Team", ["name": "ghost", "secret": "s2", "ACL": .object([:])])
        try await p.setCLP("Team", ["find": ["*": true], "get": ["*": true], "protectedFields": ["*": ["secret"]]])
        let first = try await p.createId("Player", ["name": "p0", "team": p.pointer("Team", red)])
        return (red, hidden, first)
    }

    @Test("events carry included objects as a REST find with the same include answers each subscriber", arguments: Backend.all)
    func conformance(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (_, annToken) = try await p.newUser("ann")
            let (red, hidden, first) = try await Self.seed(p)
            let ann = try await T.client(p, token: annToken)
            let master = try await T.client(p, master: true)
            try await T.warmUp(p, master)
            // Arrays of pointers, nested paths, and a comma string as REST's `include=` takes it.
            #expect(try await ann.subscribe(1, "Player", include: ["team.league", "mates"])["op"] == "subscribed")
            #expect(try await master.subscribe(1, "Player", include: "team.league, mates")["op"] == "subscribed")

            let id = try await p.createId(
                "Player", ["name": "p1", "team": p.pointer("Team", red), "mates": [p.pointer("Player", first), p.pointer("Team", hidden)]])
            let annEvent = try await ann.expect("create")["object"]
            let masterEvent = try await master.expect("create")["object"]
            let annFind = try #require(
                try await p.findAs(annToken, "Player", where: ["name": "p1"], ["include": "team.league,mates"]).results.first)
            let masterFind = try #require(try await p.find("Player", where: ["name": "p1"], ["include": "team.league,mates"]).results.first)
            for field in ["team", "mates"] {
                #expect(annEvent?[field] == annFind[field], "\(field): \(String(describing: annEvent)) vs \(annFind)")
                #expect(masterEvent?[field] == masterFind[field], "\(field): \(String(describing: masterEvent)) vs \(masterFind)")
            }
            // What that means: the team is an object without its protected field for ann, with it for the master;
            // the nested league is included; the hidden team is not there for ann.
            #expect(annEvent?["team"]?["__type"] == "Object" && annEvent?["team"]?["name"] == "red")
            #expect(annEvent?["team"]?["secret"] == nil && masterEvent?["team"]?["secret"] == "s1")
            #expect(annEvent?["team"]?["league"]?["name"] == "north")
            #expect(annEvent?["mates"]?.arrayValue?.count == 1 && masterEvent?["mates"]?.arrayValue?.count == 2)

            // Rights at the time of the event: the hidden team opened to everyone shows up in the next event.
            _ = try await p.update("Team", hidden, ["ACL": ["*": ["read": true]]])
            _ = try await p.update("Player", id, ["name": "p1b"])
            let updated = try await ann.expect("update")
            #expect(updated["object"]?["mates"]?.arrayValue?.map { $0["name"] ?? .null } == ["p0", "ghost"], "\(updated)")
            #expect(updated["original"]?["team"]?["name"] == "red", "\(updated)")
            try await master.expect("update")
            // A change to an included object alone is no event of the subscribed class.
            _ = try await p.update("Team", red, ["name": "crimson"])
            try await ann.nothing()
            for lq in [ann, master] { await lq.close() }
        }
    }

    @Test("include with keys cuts included objects to the dotted keys; bad include values are error 1", arguments: Backend.all)
    func keysAndErrors(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.liveOptions(T.live)) { p in
            let (red, _, _) = try await Self.seed(p)
            let lq = try await T.client(p, master: true)
            try await T.warmUp(p, lq)
            #expect(try await lq.subscribe(1, "Player", keys: ["name", "team.name"], include: ["team"])["op"] == "subscribed")
            _ = try await p.createId("Player", ["name": "p2", "team": p.pointer("Team", red), "number": 7])
            let object = try await lq.expect("create")["object"]
            #expect(object?["number"] == nil && object?["name"] == "p2", "\(String(describing: object))")
            #expect(object?["team"]?["name"] == "red" && object?["team"]?["secret"] == nil && object?["team"]?["league"] == nil)
            for bad: JSONValue in [7, [], "", [1]] {
                let refused = try await lq.subscribe(2, "Player", include: bad)
                #expect(refused["op"] == "error" && refused["code"] == 1, "\(bad): \(refused)")
            }
            await lq.close()
        }
    }
}

extension LiveQueryIncludeTests {
    @Test("PostgreSQL: a subscriber on node B gets node A's write with its includes, read with its rights on node B")
    func includeAcrossNodes() async throws {
        guard Backend.all.contains(.postgres) else { return }
        let options = TestServer.liveOptions(T.live)
        try await TestServer.withAPI(backend: .postgres, options) { _, db, p in
            let (_, annToken) = try await p.newUser("ann")
            let (red, hidden, first) = try await Self.seed(p)
            let other = try await PostgresDatabase.open(url: try #require(db.url), poolSize: 2, logger: TestDatabase.logger)
            try await other.serving {
                let node2 = ParseAPI(services: try await ParseServices.open(options: options, database: other, adapters: .standard))
                let app2 = ParsleyApplication.application(api: node2, host: "127.0.0.1", port: 0, logger: TestDatabase.logger)
                try await app2.test(.live) { client2 in
                    let ann = try await LiveQueryClient.open(port: try #require(client2.port))
                    #expect(try await ann.connect(sessionToken: annToken)["op"] == "connected")
                    try await T.warmUp(p, ann)
                    #expect(try await ann.subscribe(1, "Player", include: ["team.league", "mates"])["op"] == "subscribed")
                    let id = try await p.createId(
                        "Player", ["name": "p1", "team": p.pointer("Team", red), "mates": [p.pointer("Player", first), p.pointer("Team", hidden)]])
                    // (Generous wait: a full suite on two cores can hold node B's listener back for many seconds.)
                    let event = try await ann.expect("create", timeout: .seconds(45))["object"]
                    let rest = try #require(
                        try await p.findAs(annToken, "Player", where: ["name": "p1"], ["include": "team.league,mates"]).results.first)
                    #expect(event?["objectId"] == .string(id))
                    for field in ["team", "mates"] { #expect(event?[field] == rest[field], "\(field): \(String(describing: event)) vs \(rest)") }
                    #expect(event?["team"]?["league"]?["name"] == "north" && event?["team"]?["secret"] == nil)
                    #expect(event?["mates"]?.arrayValue?.count == 1)
                    await ann.close()
                }
            }
        }
    }
}
