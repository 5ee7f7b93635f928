import Foundation
import HTTPTypes
import NIOCore
import ParsleyCore

/// One generated request, printable for a failure message.
struct FuzzRequest: CustomStringConvertible {
    var method: HTTPRequest.Method
    var path: String
    var headers: [(String, String)]
    var body: [UInt8]?

    var description: String {
        let text = body.map { String(decoding: $0.prefix(600), as: UTF8.self) } ?? "-"
        return "\(method.rawValue) \(path.prefix(600)) headers=\(headers) body=\(text)"
    }
}

/// Builds random and mutated Parse requests. The master key goes only with requests that touch classes the
/// fuzzer owns (`Fz*`), so everything the fixture holds must come out unchanged whatever is sent.
struct FuzzGenerator {
    var rng: SplitMix64
    let appId: String
    let masterKey: String
    /// Session tokens of the fixture's users (their own records may change; the fixture's objects may not).
    let tokens: [String]
    /// Fixture classes and object ids, to aim reads (and refused writes) at.
    let fixtureClasses: [String]
    let fixtureIds: [String]
    /// Objects of `FzT` created so far (the test adds each 201's objectId), for updates and deletes to aim at.
    var createdIds: [String] = []

    mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 10_000) / 10_000 < p }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    static let fuzzClasses = ["FzA", "FzB", "Fz_c", "FzT"]
    static let keys = [
        "name", "n", "tags", "obj", "obj.sub", "when", "ptr", "rel", "geo", "ACL", "objectId", "createdAt", "updatedAt", "_rperm",
        "_wperm", "authData", "sessionToken", "password", "username", "email", "__type", "__op", "$in", "$or", "a.b.c", "", " ",
        "ünï", "$where", "_hashed_password", "className", "emailVerified", "x\"y", "a'b", "1abc", "constructor2",
    ]
    static let operators = [
        "$lt", "$lte", "$gt", "$gte", "$ne", "$in", "$nin", "$all", "$exists", "$regex", "$options", "$select", "$dontSelect",
        "$inQuery", "$notInQuery", "$relatedTo", "$or", "$and", "$nor", "$near", "$nearSphere", "$maxDistance", "$within", "$box",
        "$geoWithin", "$polygon", "$centerSphere", "$geoIntersects", "$point", "$text", "$search", "$term", "$containedBy",
        "$relativeTime", "$eq", "$elemMatch", "$size", "$bogus",
    ]
    static let ops = ["Increment", "Add", "AddUnique", "Remove", "Delete", "AddRelation", "RemoveRelation", "Batch", "Bogus"]
    static let types = ["Pointer", "Date", "GeoPoint", "File", "Relation", "Bytes", "Polygon", "Object", "Bogus"]
    static let strings = [
        "", "a", "FzA", "_User", "2020-01-01T00:00:00.000Z", "not a date", "in 3 days", "3 days ago", "now", ".*", "(a+)+$", "[",
        "\\Q.\\E", "ünïcødé ✓", "🎉", String(repeating: "x", count: 3000), "null", "true", "-1", "1e400", "NaN", "\u{1}", "%00",
        "a/b", "../..", "role:Admin", "*", "r:bogus-token",
    ]

    mutating func scalar() -> JSONValue {
        switch int(0...9) {
        case 0: return .null
        case 1: return .bool(chance(0.5))
        case 2: return .int(Int64(int(-5...5)))
        case 3: return .int(pick([Int64.max, Int64.min, 1 << 53, -(1 << 53) - 1, 0]))
        case 4: return .double(pick([0.5, -1.5, 1e308, -1e-308, 3.14159, 1e15]))
        default: return .string(pick(Self.strings))
        }
    }

    /// A random Parse-ish value: scalars, special types, operations, arrays and objects, nested up to `depth`.
    mutating func value(_ depth: Int = 0) -> JSONValue {
        if depth > 4 || chance(0.4) { return scalar() }
        switch int(0...6) {
        case 0: return .array((0..<int(0...5)).map { _ in value(depth + 1) })
        case 1:
            var o: [String: JSONValue] = ["__type": .string(pick(Self.types))]
            for k in ["className", "objectId", "iso", "latitude", "longitude", "name", "base64", "coordinates"] where chance(0.5) {
                o[k] = chance(0.7) ? scalar() : value(depth + 1)
            }
            return .object(o)
        case 2:
            var o: [String: JSONValue] = ["__op": .string(pick(Self.ops))]
            for k in ["amount", "objects", "ops"] where chance(0.6) { o[k] = value(depth + 1) }
            return .object(o)
        case 3:
            return .array(
                (0..<int(0...3)).map { _ in
                    .object([
                        "__type": "Pointer", "className": .string(pick(Self.fuzzClasses + fixtureClasses)),
                        "objectId": .string(pick(fixtureIds + ["x"])),
                    ])
                })
        default:
            var o: [String: JSONValue] = [:]
            for _ in 0..<int(0...4) { o[pick(Self.keys)] = value(depth + 1) }
            return .object(o)
        }
    }

    /// A random `where`: field constraints with operators, logical operators, sub-queries.
    mutating func whereClause(_ depth: Int = 0) -> JSONValue {
        var o: [String: JSONValue] = [:]
        for _ in 0..<int(0...3) {
            if depth < 3, chance(0.2) {
                o[pick(["$or", "$and", "$nor"])] = .array((0..<int(0...3)).map { _ in whereClause(depth + 1) })
                continue
            }
            let key = pick(Self.keys)
            if chance(0.3) { o[key] = value(depth + 1); continue }
            var c: [String: JSONValue] = [:]
            for _ in 0..<int(1...2) {
                let op = pick(Self.operators)
                switch op {
                case "$inQuery", "$notInQuery":
                    c[op] = ["className": .string(pick(Self.fuzzClasses + fixtureClasses)), "where": depth < 3 ? whereClause(depth + 1) : value()]
                case "$select", "$dontSelect":
                    c[op] = [
                        "query": ["className": .string(pick(Self.fuzzClasses + fixtureClasses)), "where": whereClause(depth + 1)],
                        "key": .string(pick(Self.keys)),
                    ]
                case "$in", "$nin", "$all", "$containedBy":
                    c[op] = chance(0.1) ? .array((0..<int(100...3000)).map { .int(Int64($0)) }) : value(depth + 1)
                default: c[op] = value(depth + 1)
                }
            }
            o[key] = .object(c)
        }
        return .object(o)
    }

    /// A JSON body, sometimes damaged into bytes that are not JSON (truncated, invalid UTF-8, stray bytes).
    mutating func bodyBytes(_ json: JSONValue) -> [UInt8] {
        var bytes = JSONWriter.bytes(json)
        switch int(0...12) {
        case 0 where !bytes.isEmpty: bytes = Array(bytes.prefix(int(0...(bytes.count - 1))))
        case 1: bytes.insert(pick([0xFF, 0xC0, 0x00, 0x80, 0x7B]), at: int(0...bytes.count))
        case 2: bytes = Array((0..<int(0...64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case 3: bytes = Array(String(repeating: "[", count: int(60...2000)).utf8)
        case 4: bytes = Array(#"{"a":"\u0000","b":"\ud800"}"#.utf8)
        default: break
        }
        return bytes
    }

    mutating func queryString() -> String {
        var items: [String] = []
        if chance(0.6) { items.append("where=" + Self.encode(JSONWriter.string(whereClause()))) }
        if chance(0.3) { items.append("order=" + Self.encode(pick(["-n", "name,-createdAt", "$score", "nope", "authData", "_rperm", ""]))) }
        if chance(0.3) { items.append("keys=" + Self.encode(pick(["name", "ptr.name", "authData", "a.b.c", "", "*"]))) }
        if chance(0.3) { items.append("include=" + Self.encode(pick(["ptr", "*", "ptr.ptr", "rel", "tags", "a.b.c.d.e.f.g.h.i.j"]))) }
        if chance(0.3) { items.append("limit=" + Self.encode(pick(["0", "-1", "1", "1000", "99999999999999999999", "abc", "1.5"]))) }
        if chance(0.2) { items.append("skip=" + Self.encode(pick(["0", "-5", "10", "1e30", "x"]))) }
        if chance(0.2) { items.append("count=" + pick(["1", "true", "0", "x"])) }
        if chance(0.1) { items.append("excludeKeys=" + Self.encode(pick(["name", "objectId", ""]))) }
        if chance(0.05) { items.append(pick(["%", "%zz=1", "=", "&&", "a=%FF%FE", "where=%7B"])) }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }

    static func encode(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s }

    /// A path below the mount and whether it only touches the fuzzer's own classes (then the master key may go).
    mutating func path() -> (String, owned: Bool) {
        let fz = pick(Self.fuzzClasses)
        let fixture = pick(fixtureClasses)
        let id = pick(fixtureIds + ["abcdefghij", "", "%2F", "x%20y", Self.encode("ünï"), "%FF"])
        let options: [(String, Bool)] = [
            ("classes/\(fz)", true), ("classes/\(fz)/\(id)", true), ("classes/\(fixture)", false), ("classes/\(fixture)/\(id)", false),
            ("classes/_User", false), ("classes/_Session", false), ("classes/_Role", false), ("classes/_Installation", false),
            ("classes/_JobStatus", false), ("users", false), ("users/me", false), ("users/\(id)", false), ("login", false),
            ("logout", false), ("sessions", false), ("sessions/me", false), ("roles", false), ("roles/\(id)", false),
            ("schemas", false), ("schemas/\(fz)", true), ("schemas/\(fixture)", false), ("batch", true), ("functions/hello", false),
            ("jobs/nightly", false), ("config", false), ("installations", false), ("installations/\(id)", false), ("push", false),
            ("health", false), ("purge/\(fz)", true), ("verifyPassword", false), ("requestPasswordReset", false),
            ("verificationEmailRequest", false), ("upgradeToRevocableSession", false), ("loginAs", false), ("aggregate/\(fz)", true),
            ("serverInfo", false), ("hooks/functions", false), ("files/hello.txt", false), ("events/AppOpened", false),
            ("classes", false), ("", false), ("classes/\(fz)/\(id)/extra", true), ("classes//\(fz)", true), ("classes/%00", false),
            ("classes/../schemas", false), ("classes/\(String(repeating: "A", count: 300))", false), ("nope/nope", false),
        ]
        var (path, owned) = pick(options)
        if chance(0.05) { path += "/" + pick(["%", "%E2%82", "..", ".", "%2e%2e", "a%2Fb", "%F0%9F%98%80"]) }
        return (path, owned)
    }

    /// A batch whose sub-requests only write the fuzzer's classes (the batch carries the master key).
    mutating func batch() -> JSONValue {
        let requests: [JSONValue] = (0..<int(0...6)).map { _ in
            var r: [String: JSONValue] = [
                "method": .string(pick(["POST", "PUT", "DELETE", "GET", "PATCH", "bogus"])),
                "path": .string(
                    pick([
                        "/parse/classes/\(pick(Self.fuzzClasses))", "/parse/classes/\(pick(Self.fuzzClasses))/\(pick(fixtureIds + ["x"]))",
                        "/classes/FzA", "/parse/batch", "nope", "",
                    ])),
            ]
            if chance(0.8) { r["body"] = chance(0.5) ? value() : .object(["n": value(), "tags": value()]) }
            if chance(0.1) { r = ["junk": value()] }
            return .object(r)
        }
        var b: [String: JSONValue] = ["requests": chance(0.95) ? .array(requests) : value()]
        if chance(0.3) { b["transaction"] = .bool(chance(0.7)) }
        return .object(b)
    }

    mutating func next() -> FuzzRequest {
        if chance(0.3) {
            let (method, path, body) = plausible()
            var headers = [("X-Parse-Application-Id", appId), ("Content-Type", "application/json")]
            switch int(0...2) {
            case 0: headers.append(("X-Parse-Master-Key", masterKey))
            case 1: headers.append(("X-Parse-Session-Token", pick(tokens)))
            default: break
            }
            return FuzzRequest(method: method, path: "/parse/" + path, headers: headers, body: body.map { JSONWriter.bytes($0) })
        }
        let method = pick([HTTPRequest.Method.get, .post, .put, .delete, .get, .post, .patch, .head])
        var (path, owned) = path()
        var headers: [(String, String)] = []
        switch int(0...19) {
        case 0: break
        case 1: headers.append(("X-Parse-Application-Id", "wrong-app"))
        default: headers.append(("X-Parse-Application-Id", appId))
        }
        let useMaster = owned && chance(0.5)
        if useMaster {
            headers.append(("X-Parse-Master-Key", masterKey))
        } else if chance(0.05) {
            headers.append(("X-Parse-Master-Key", "wrong-key"))
        }
        if chance(0.4) { headers.append(("X-Parse-Session-Token", chance(0.8) ? pick(tokens) : pick(["r:nope", "", "x"]))) }
        if chance(0.1) {
            headers.append(("X-Parse-Installation-Id", pick(["0b6cbb4c-aaaa-bbbb-cccc-1b1b1b1b1b1b", "x", String(repeating: "i", count: 500)])))
        }
        if chance(0.1) { headers.append(("X-Parse-Request-Id", pick(["r1", "r2"]))) }
        if chance(0.05) { headers.append(("X-Parse-REST-API-Key", "whatever")) }
        headers.append(
            (
                "Content-Type",
                chance(0.9) ? "application/json" : pick(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "image/png"])
            ))
        var body: [UInt8]?
        if method != .get, method != .head, chance(0.85) {
            var json: JSONValue
            if path == "batch" {
                json = batch()
            } else if chance(0.25) {
                json = .object(["where": whereClause()])
            } else if chance(0.5) {
                // An object body of plausible fields (most writes look like this), with values of any kind.
                var o: [String: JSONValue] = [:]
                for _ in 0..<int(1...5) { o[pick(Self.keys)] = value() }
                json = .object(o)
            } else {
                json = value()
            }
            if chance(0.15), case .object(var o) = json {
                // The JS SDK's conventions in the body: credentials, _method, _context.
                o["_method"] = .string(pick(["GET", "PUT", "DELETE", "POST", "bogus"]))
                if chance(0.5) { o["_ApplicationId"] = .string(appId) }
                if chance(0.3) { o["_SessionToken"] = chance(0.5) ? .string(pick(tokens)) : scalar() }
                if chance(0.1) { o["_context"] = value() }
                json = .object(o)
            }
            body = bodyBytes(json)
        }
        // Query parameters carry the master key's power too: only for the fuzzer's own classes do they reach writes.
        if method == .get || chance(0.2) { path += queryString() }
        return FuzzRequest(method: method, path: "/parse/" + path, headers: headers, body: body)
    }
}
