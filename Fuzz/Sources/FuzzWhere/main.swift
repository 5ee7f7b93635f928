// QueryParser (a find's `where`) on arbitrary JSON: never crashes; a client's parse (no internal fields) that
// succeeds gives the same tree to a master-key caller; every value in the tree is in stored (normalised) form and
// survives a JSON round trip; order keys go through fieldPath as QueryService does.
import FuzzSupport
import ParsleyCore

let schemas: [String: ClassSchema] = [
    "GameScore": ClassSchema(
        className: "GameScore",
        fields: [
            "score": .number, "playerName": .string, "cheatMode": .boolean, "when": .date, "player": .pointer("_User"),
            "team": .pointer("Team"), "tags": .array, "location": .geoPoint, "area": .polygon, "stats": .object, "photo": .file,
            "fans": .relation("_User"),
        ]),
    "Team": ClassSchema(className: "Team", fields: ["name": .string, "city": .string, "founded": .date, "members": .relation("_User")]),
    "_User": ClassSchema(className: "_User"),
]

let now = ParseDate(milliseconds: 1_700_000_000_000)

func parser(internalFields: Bool) -> QueryParser {
    var p = QueryParser(allowInternalFields: internalFields, now: now)
    p.schemas = schemas
    return p
}

let clientParser = parser(internalFields: false)
let masterParser = parser(internalFields: true)

/// Every JSON value a predicate holds.
func values(_ node: QueryNode, into out: inout [JSONValue]) {
    switch node {
    case .all: break
    case .and(let n), .or(let n), .nor(let n): for c in n { values(c, into: &out) }
    case .relatedTo(let owner, _): out.append(owner.json)
    case .field(_, let condition):
        switch condition {
        case .equals(let v), .notEquals(let v), .compare(_, let v): out.append(v)
        case .isIn(let vs), .notIn(let vs), .containsAll(let vs), .containedBy(let vs): out.append(contentsOf: vs)
        case .select(let sub, _), .dontSelect(let sub, _), .inQuery(let sub), .notInQuery(let sub): values(sub.predicate, into: &out)
        case .nearSphere(let p, _), .geoIntersects(let p): out.append(p.json)
        case .withinBox(let a, let b): out.append(contentsOf: [a.json, b.json])
        case .withinPolygon(let ps): out.append(contentsOf: ps.map(\.json))
        case .withinCenterSphere(let p, let r):
            if !(r >= 0 && r.isFinite) { fuzzFailure("centerSphere radius \(r)") }
            out.append(p.json)
        case .containsAllMatching, .regex, .text, .exists: break
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let whereValue = parseJSON(data, size) else { return 0 }
    checkDates(in: whereValue)
    let asClient = Result { () throws(ParseError) in try clientParser.parse(whereValue, className: "GameScore") }
    let asMaster = Result { () throws(ParseError) in try masterParser.parse(whereValue, className: "GameScore") }
    if case .success(let node) = asClient {
        guard case .success(let masterNode) = asMaster else { fuzzFailure("a client's where is refused to the master key: \(asMaster)") }
        if masterNode != node { fuzzFailure("client and master parse differ") }
    }
    if case .success(let node) = asMaster {
        var found: [JSONValue] = []
        values(node, into: &found)
        for v in found {
            expectNormalized(v, "query operand")
            expectJSONRoundTrip(v, "query operand")
        }
        _ = node.referencedFields
        _ = node.nearSphere
        _ = node.textSearch
    }
    // Keys as `order` / `keys` entries.
    if case .object(let o) = whereValue {
        for key in o.keys {
            _ = try? clientParser.fieldPath(key)
            _ = try? masterParser.fieldPath(key)
        }
    }
    return 0
}

runFuzzer { data, size in
    var empty: UInt8 = 0
    return data.map { fuzz($0, size) } ?? fuzz(&empty, 0)
}
