import GraphQL
import OrderedCollections
import ParsleyCore
import Synchronization

/// One LiveQuery event on its way to a subscription's selection: which event, the object as it is and as it was,
/// both as the LiveQuery hub shaped them for this subscriber (ACLs, CLPs, protected fields applied).
struct LiveEventValue: Sendable {
    let className: String
    let event: String
    let object: ParseObjectValue?
    let original: ParseObjectValue?
}

/// The `Subscription` root type (beyond Parse Server, which never finished GraphQL subscriptions): per class a field
/// named as its find query, `gameScores(where: GameScoreWhereInput): GameScoreSubscriptionPayload!`, answering each
/// LiveQuery event of that class (`event`, `node`: the object now, `original`: before an update, enter or leave).
/// It is served over WebSocket (`graphql-transport-ws`) by `GraphQLWSSession`; the classes must be LiveQuery classes.
enum LiveSubscriptions {
    static let eventNames = ["create", "enter", "update", "leave", "delete"]

    static func subscriptionType(_ shapes: [ClassShape], objects: [String: GraphQLObjectType], inputs: CommonInputTypes) throws
        -> GraphQLObjectType?
    {
        var values: GraphQLEnumValueMap = [:]
        for name in eventNames { values[name] = GraphQLEnumValue(value: .string(name)) }
        let events = try GraphQLEnumType(name: "LiveQueryEvent", values: values)
        var fields: GraphQLFieldMap = [:]
        let byName = Dictionary(shapes.map { ($0.className, $0) }, uniquingKeysWith: { a, _ in a })
        for shape in shapes {
            guard let name = shape.findName, let object = objects[shape.className] else { continue }
            let className = shape.className
            let payload = try GraphQLObjectType(
                name: shape.typeName + "SubscriptionPayload",
                fields: [
                    "event": GraphQLField(
                        type: GraphQLNonNull(events), resolve: { source, _, _, _ in (source as? LiveEventValue).map { Map.string($0.event) } }),
                    "node": GraphQLField(type: object, resolve: { source, _, _, _ in (source as? LiveEventValue)?.object }),
                    "original": GraphQLField(type: object, resolve: { source, _, _, _ in (source as? LiveEventValue)?.original }),
                ])
            fields[name] = GraphQLField(
                type: GraphQLNonNull(payload), args: ["where": GraphQLArgument(type: try inputs.whereType(shape))],
                resolve: { source, args, _, _ in
                    // Subscribing: the operation runs once to learn its class and where, with GraphQL's own coercion
                    // of arguments and variables.
                    if let probe = source as? SubscriptionProbe {
                        var whereValue: [String: JSONValue] = [:]
                        if case .object(let input)? = MapJSON.json(args)["where"] { whereValue = try GraphQLWhere.parse(input, shape, byName) }
                        probe.found.withLock { $0 = (className, whereValue) }
                        return nil
                    }
                    guard let event = source as? LiveEventValue, event.className == className else { return nil }
                    return event
                })
        }
        return fields.isEmpty ? nil : try GraphQLObjectType(name: "Subscription", fields: fields)
    }
}

/// The root value of a subscription's first run: its field's resolver records the class and the Parse `where`.
final class SubscriptionProbe: Sendable {
    let found = Mutex<(className: String, whereValue: [String: JSONValue])?>(nil)
}
