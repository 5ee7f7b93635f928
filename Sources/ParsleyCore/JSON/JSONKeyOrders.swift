/// The order in which a document's object keys were written. `JSONValue` objects are unordered (their text form
/// is canonical); the few places where Parse gives key order a meaning — a compound index's columns — read it
/// from here: for every object of the document, its keys in order, under the key that holds the object.
public struct JSONKeyOrders: Sendable, Equatable {
    private var byParent: [String: [[String]]] = [:]

    public init() {}

    mutating func note(_ keys: [String], under parent: String) {
        byParent[parent, default: []].append(keys)
    }

    /// The order `keys` were written in, in the first object held by a key named `parent` that has exactly these
    /// keys; nil when there is none.
    public func order(of keys: some Collection<String>, under parent: String) -> [String]? {
        let wanted = Set(keys)
        return byParent[parent]?.first { $0.count == wanted.count && Set($0) == wanted }
    }
}
