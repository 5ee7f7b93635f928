import ParsleyCore
import Testing

/// Which LiveQuery event a write is for a subscription, decided in memory.
@Suite("LiveQuery events")
struct LiveQueryEventTests {
    let matcher = QueryMatcher(schema: ClassSchema(className: "Game", fields: ["score": .number, "name": .string, "team": .pointer("Team")]))

    struct Subscription {
        var predicate: QueryNode
        var watch: [String]
    }

    /// What the hub decides for a subscription: an event, none, or "storage must decide" (the matcher cannot).
    enum Decision: Equatable {
        case send(LiveQueryEvent)
        case none
        case needsStorage
    }

    func subscription(_ whereValue: JSONValue, watch: [String] = []) throws -> Subscription {
        Subscription(predicate: try QueryParser(now: ParseDate(milliseconds: 0)).parse(whereValue), watch: watch)
    }

    /// The matcher on the object before and after (none: not a match), then `LiveQueryEvent.choose`, as the hub does.
    func decide(_ s: Subscription, _ op: String, _ before: [String: JSONValue]?, _ after: [String: JSONValue]?) -> Decision {
        let was = op == "create" ? false : before.map { matcher.matches(s.predicate, $0) } ?? false
        let now = op == "delete" ? false : after.map { matcher.matches(s.predicate, $0) } ?? false
        guard let was, let now else { return .needsStorage }
        return LiveQueryEvent.choose(op, before: was, now: now, watch: s.watch, original: before, object: after).map(Decision.send) ?? .none
    }

    @Test("create, enter, update, leave, delete and nothing, as Parse Server decides them")
    func kinds() throws {
        let high = try subscription(["score": ["$gt": 10]])
        #expect(decide(high, "create", nil, ["score": 20]) == .send(.create))
        #expect(decide(high, "create", nil, ["score": 5]) == Decision.none)
        #expect(decide(high, "update", ["score": 5], ["score": 20]) == .send(.enter))
        #expect(decide(high, "update", ["score": 20], ["score": 30]) == .send(.update))
        #expect(decide(high, "update", ["score": 20], ["score": 5]) == .send(.leave))
        #expect(decide(high, "update", ["score": 1], ["score": 5]) == Decision.none)
        #expect(decide(high, "delete", ["score": 20], nil) == .send(.delete))
        #expect(decide(high, "delete", ["score": 1], nil) == Decision.none)
    }

    @Test("watch: creates and updates only when a watched field is set or changes; enter and leave always")
    func watch() throws {
        let watching = try subscription([:], watch: ["name"])
        #expect(decide(watching, "update", ["score": 1, "name": "a"], ["score": 2, "name": "a"]) == Decision.none)
        #expect(decide(watching, "update", ["score": 1, "name": "a"], ["score": 1, "name": "b"]) == .send(.update))
        #expect(decide(watching, "create", nil, ["score": 1]) == Decision.none)
        #expect(decide(watching, "create", nil, ["name": "x"]) == .send(.create))
        let named = try subscription(["name": "b"], watch: ["score"])
        #expect(decide(named, "update", ["name": "a"], ["name": "b"]) == .send(.enter))
    }

    @Test("queries the object alone cannot decide (sub-queries) go to storage; keys cut the object")
    func storageAndKeys() throws {
        let sub = try subscription(["team": ["$inQuery": ["className": "Team", "where": ["name": "red"]]]])
        #expect(decide(sub, "create", nil, ["score": 1]) == .needsStorage)
        let object: [String: JSONValue] = ["objectId": "a", "className": "Game", "score": 3, "name": "n", "secret": 1, "ACL": [:]]
        #expect(LiveQueryEvent.cut(object, keys: ["score"]) == ["objectId": "a", "className": "Game", "score": 3, "ACL": [:]])
        #expect(LiveQueryEvent.cut(object, keys: nil) == object)
    }
}
