/// Which LiveQuery event a committed write is for one subscription (Parse Server's rules): a create that matches is
/// `create`; an update is `enter` (it matches now, did not before), `update` (both), `leave` (only before), nothing
/// (neither); a delete of a matching object is `delete`. With `watch`, a create or update is sent only when a
/// watched field was set or changed (`enter` and `leave` always are). The objects given to `choose` are the ones the
/// subscriber may see (protected fields removed), so a watch never fires on a field it may not read.
public enum LiveQueryEvent: String, Sendable, Equatable {
    case create, enter, update, leave, delete

    /// The event for a write of `operation` given whether the subscriber could see the object matching before and
    /// after it (query and read permission both), or nil for none.
    public static func choose(
        _ operation: String, before: Bool, now: Bool, watch: [String], original: [String: JSONValue]?, object: [String: JSONValue]?
    ) -> LiveQueryEvent? {
        switch operation {
        case "create":
            return now && watched(watch, original: nil, object: object) ? .create : nil
        case "delete":
            return before ? .delete : nil
        default:
            switch (before, now) {
            case (false, true): return .enter
            case (true, false): return .leave
            case (true, true): return watched(watch, original: original, object: object) ? .update : nil
            case (false, false): return nil
            }
        }
    }

    /// Which version of the object an event's `object` or `original` carries.
    public enum Version: Sendable, Equatable {
        /// The object after the write.
        case current
        /// The object before the write.
        case previous
        /// Only what names the object (`className`, `objectId`, `createdAt`): nothing of a version the subscriber
        /// could not read.
        case identity
    }

    /// What this event carries, given whether the subscriber could read the object before and after the write
    /// (ACL and pointer permissions, the query aside). A subscriber never receives a version it could not read:
    /// a `leave` because it lost read access carries the previous version as `object` and `original` (what it last
    /// saw, enough to drop the row); an `enter` of an object it could not read before has only the object's identity
    /// as `original`.
    public func carries(readBefore: Bool, readNow: Bool) -> (object: Version, original: Version?) {
        switch self {
        case .create: return (.current, nil)
        case .delete: return (.previous, nil)
        case .update: return (.current, .previous)
        case .enter: return (.current, readBefore ? .previous : .identity)
        case .leave: return readNow ? (.current, .previous) : (.previous, .previous)
        }
    }

    /// The fields of `object` that `Version.identity` keeps.
    public static func identity(of object: [String: JSONValue]?) -> [String: JSONValue] {
        (object ?? [:]).filter { ["className", "objectId", "createdAt"].contains($0.key) }
    }

    /// Whether a watched field was set (create) or changed (update); true when nothing is watched.
    static func watched(_ fields: [String], original: [String: JSONValue]?, object: [String: JSONValue]?) -> Bool {
        guard !fields.isEmpty else { return true }
        return fields.contains { original?[$0] != object?[$0] }
    }

    /// The object as a subscription with `keys` receives it: `className`, `objectId`, `createdAt`, `updatedAt`, `ACL`
    /// and the keys (all fields when `keys` is nil).
    public static func cut(_ object: [String: JSONValue], keys: [String]?) -> [String: JSONValue] {
        guard let keys else { return object }
        let kept = Set(keys).union(["className", "objectId", "createdAt", "updatedAt", "ACL"])
        return object.filter { kept.contains($0.key) }
    }
}
