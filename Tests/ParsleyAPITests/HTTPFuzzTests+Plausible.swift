import HTTPTypes
import ParsleyCore

/// Mostly valid requests on the fuzzer's own class `FzT`, whose fields keep one type each: creates, updates with
/// every operation, typed queries with includes and keys, aggregates. Random requests seldom get past validation;
/// these reach the write and query paths with values that are valid, edge-case, or a little wrong.
extension FuzzGenerator {
    static let typedClass = "FzT"

    /// A value for `field` of `FzT`, of its type (now and then of another, or an edge case).
    mutating func typedValue(_ field: String) -> JSONValue {
        if chance(0.05) { return scalar() }
        switch field {
        case "n": return .int(pick([0, 1, -1, 42, Int64.max, Int64.min, 1 << 53]))
        case "x": return .double(pick([0.5, -2.25, 1e300, -1e-300, 3.0]))
        case "name": return .string(pick(Self.strings))
        case "ok": return .bool(chance(0.5))
        case "tags": return .array((0..<int(0...4)).map { _ in chance(0.8) ? .string(pick(["a", "b", "c", "ü", ""])) : .int(Int64(int(0...3))) })
        case "obj": return ["sub": .int(Int64(int(-3...3))), "s": .string(pick(["t", "u"])), "deep": ["k": .bool(chance(0.5))]]
        case "when":
            return [
                "__type": "Date",
                "iso": .string(pick(["2024-05-01T10:00:00.000Z", "1970-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2024-02-30T00:00:00Z"])),
            ]
        case "geo":
            return [
                "__type": "GeoPoint", "latitude": .double(pick([0, 89.9, -90, 45.5, 91])), "longitude": .double(pick([0, 179.9, -180, 12.25, 181])),
            ]
        case "ptr": return ["__type": "Pointer", "className": "FzB", "objectId": .string(pick(fixtureIds + ["x", "abcdefghij"]))]
        case "fix": return ["__type": "Pointer", "className": .string(pick(fixtureClasses)), "objectId": .string(pick(fixtureIds))]
        case "poly": return ["__type": "Polygon", "coordinates": [[0, 0], [0, 1], [1, .double(pick([1, 0.5]))]]]
        default: return value()
        }
    }

    static let typedFields = ["n", "x", "name", "ok", "tags", "obj", "when", "geo", "ptr", "fix", "poly"]

    /// An update operation on one of the typed fields.
    mutating func typedOperation() -> (String, JSONValue) {
        switch int(0...9) {
        case 0: return ("n", ["__op": "Increment", "amount": .int(pick([1, -1, Int64.max, 0]))])
        case 1: return ("x", ["__op": "Increment", "amount": .double(0.5)])
        case 2: return ("tags", ["__op": .string(pick(["Add", "AddUnique", "Remove"])), "objects": typedValue("tags")])
        case 3: return ("obj.sub", chance(0.5) ? ["__op": "Increment", "amount": 2] : .int(7))
        case 4: return ("obj.deep.k", chance(0.5) ? ["__op": "Delete"] : .bool(true))
        case 5: return (pick(Self.typedFields), ["__op": "Delete"])
        case 6: return ("rel", ["__op": .string(pick(["AddRelation", "RemoveRelation"])), "objects": [typedValue("ptr")]])
        case 7: return ("ACL", pick([["*": ["read": true]], [:], ["role:FixtureRole": ["read": true, "write": true]]]))
        default:
            let f = pick(Self.typedFields)
            return (f, typedValue(f))
        }
    }

    /// A `where` on the typed fields, with operators that fit their types.
    mutating func typedWhere() -> JSONValue {
        var o: [String: JSONValue] = [:]
        for _ in 0..<int(1...3) {
            switch int(0...9) {
            case 0: o["n"] = [pick(["$lt", "$gte", "$ne"]): typedValue("n")]
            case 1:
                o["name"] =
                    chance(0.5)
                    ? ["$regex": .string(pick(["^o", "a|b", "(", ".*"])), "$options": "i"] : ["$in": [typedValue("name"), typedValue("name")]]
            case 2: o["tags"] = [pick(["$all", "$in", "$nin", "$containedBy"]): typedValue("tags")]
            case 3:
                o["when"] = [
                    pick(["$gt", "$lte"]): chance(0.7) ? typedValue("when") : ["$relativeTime": .string(pick(["in 3 days", "2 weeks ago", "now"]))]
                ]
            case 4: o["geo"] = ["$nearSphere": typedValue("geo"), "$maxDistanceInKilometers": .double(pick([10, 0, 20000]))]
            case 5: o["ptr"] = chance(0.5) ? typedValue("ptr") : ["$inQuery": ["className": "FzB", "where": ["a": ["$exists": true]]]]
            case 6: o["obj.sub"] = [pick(["$gt", "$eq", "$exists"]): chance(0.8) ? .int(0) : .bool(true)]
            case 7: o["$or"] = [typedWhere(), ["ok": typedValue("ok")]]
            case 8: o["rel"] = ["$exists": .bool(chance(0.5))]
            default: o["geo"] = ["$within": ["$box": [typedValue("geo"), typedValue("geo")]]]
            }
        }
        return .object(o)
    }

    /// One plausible request on `FzT` (or an object of it): the master key half the time, else a user or nobody.
    mutating func plausible() -> (method: HTTPRequest.Method, path: String, body: JSONValue?) {
        let id = pick(createdIds.isEmpty ? ["x"] : createdIds)
        switch int(0...9) {
        case 0, 1, 2:
            var o: [String: JSONValue] = [:]
            for _ in 0..<int(1...6) {
                let f = pick(Self.typedFields)
                o[f] = typedValue(f)
            }
            if chance(0.3) { o["ACL"] = pick([["*": ["read": true, "write": true]], ["*": ["read": true]]]) }
            return (.post, "classes/\(Self.typedClass)", .object(o))
        case 3, 4, 5:
            var o: [String: JSONValue] = [:]
            for _ in 0..<int(1...4) {
                let (k, v) = typedOperation()
                o[k] = v
            }
            return (.put, "classes/\(Self.typedClass)/\(id)", .object(o))
        case 6:
            return (.delete, "classes/\(Self.typedClass)/\(id)", nil)
        case 7:
            let pipeline: JSONValue = [
                ["$match": ["n": ["$gte": 0]]], ["$group": ["_id": "$ok", "total": ["$sum": "$n"], "c": ["$sum": 1]]], ["$sort": ["total": -1]],
            ]
            return (.get, "aggregate/\(Self.typedClass)?pipeline=" + Self.encode(JSONWriter.string(pipeline)), nil)
        default:
            var items = ["where=" + Self.encode(JSONWriter.string(typedWhere()))]
            if chance(0.4) { items.append("include=" + Self.encode(pick(["ptr", "fix", "ptr,fix", "*"]))) }
            if chance(0.3) { items.append("keys=" + Self.encode(pick(["n,name", "obj.sub", "ptr.a", "tags"]))) }
            if chance(0.3) { items.append("order=" + Self.encode(pick(["-n", "name,-when", "x", "obj.sub"]))) }
            if chance(0.2) { items.append("count=1&limit=" + pick(["0", "5"])) }
            return (.get, "classes/\(Self.typedClass)?" + items.joined(separator: "&"), nil)
        }
    }
}
