/// Turns a Parse `where` object into a `QueryNode`, checking names and operator shapes with Parse's codes.
public struct QueryParser: Sendable {
    /// The internal fields this caller's `where` and `order` may name (none for clients).
    public var internalFields: Set<String>
    /// Whether any internal field may be named (the master keys).
    public var allowInternalFields: Bool { !internalFields.isEmpty }

    /// What the master key may query, as Parse Server's `specialQueryKeys`: never the password hash or its history
    /// (a `$regex` on `_hashed_password` would read it a character at a time).
    public static let masterInternalFields: Set<String> = [
        "_rperm", "_wperm", "_perishable_token", "_email_verify_token", "_email_verify_token_expires_at",
        "_account_lockout_expires_at", "_failed_login_count",
    ]
    /// What the read-only master key may query: not the single-use reset and verification tokens either (reading one
    /// by a where would turn read access into taking an account over).
    public static let readOnlyMasterInternalFields: Set<String> = masterInternalFields.subtracting([
        "_perishable_token", "_email_verify_token",
    ])
    /// "Now" for `$relativeTime`.
    public var now: ParseDate
    /// Bound on nested operators and sub-queries, so one request cannot build an enormous SQL statement.
    public var maxConditions = 2_000

    public init(allowInternalFields: Bool = false, now: ParseDate) {
        self.init(internalFields: allowInternalFields ? Self.masterInternalFields : [], now: now)
    }

    public init(internalFields: Set<String>, now: ParseDate) {
        self.internalFields = internalFields
        self.now = now
    }

    /// Field types of the classes a query may name, for checks that depend on them (`$relativeTime` needs a
    /// Date field). Fields not found here are not checked.
    public var schemas: [String: ClassSchema] = [:]

    /// - Parameter className: the class queried, whose field types `schemas` may give.
    public func parse(_ whereValue: JSONValue?, className: String? = nil) throws(ParseError) -> QueryNode {
        var budget = maxConditions
        return try parse(whereValue ?? .object([:]), className: className, budget: &budget, depth: 0)
    }

    func parse(_ whereValue: JSONValue, className: String?, budget: inout Int, depth: Int) throws(ParseError) -> QueryNode {
        guard depth < 16 else { throw ParseError.invalidQuery("Query is nested too deeply") }
        guard case .object(let object) = whereValue else {
            throw ParseError(.invalidJSON, "Invalid where clause: expected an object")
        }
        var nodes: [QueryNode] = []
        for key in object.keys.sorted() {
            let value = object[key]!  // key from keys
            budget -= 1
            guard budget >= 0 else { throw ParseError.invalidQuery("Query has too many conditions") }
            switch key {
            case "$or", "$and", "$nor":
                guard case .array(let parts) = value, key != "$nor" || !parts.isEmpty else {
                    if key == "$nor" { throw ParseError.invalidQuery("Bad $nor format - use an array of at least 1 value.") }
                    throw ParseError.invalidQuery("Bad \(key) format - use an array value.")
                }
                var children: [QueryNode] = []
                for part in parts { children.append(try parse(part, className: className, budget: &budget, depth: depth + 1)) }
                switch key {
                case "$or": nodes.append(.or(children))
                case "$and": nodes.append(.and(children))
                default: nodes.append(.nor(children))
                }
            case "$relatedTo":
                guard let owner = value["object"].flatMap(Pointer.init(json:)), let relKey = value["key"]?.stringValue,
                    Naming.isValidClassName(owner.className), Naming.isValidFieldName(relKey)
                else { throw ParseError.invalidQuery("improper usage of $relatedTo") }
                nodes.append(.relatedTo(owner: owner, key: relKey))
            default:
                let path = try fieldPath(key)
                let type = path.subpath.isEmpty ? className.flatMap { schemas[$0]?.fields[path.field] } : nil
                nodes.append(contentsOf: try conditions(path, value, type: type, budget: &budget, depth: depth))
            }
        }
        if nodes.isEmpty { return .all }
        return nodes.count == 1 ? nodes[0] : .and(nodes)
    }

    /// Validates a where/order key into a `FieldPath`.
    public func fieldPath(_ key: String) throws(ParseError) -> FieldPath {
        if key == "ACL" { throw ParseError.invalidQuery("Cannot query on ACL.") }
        let parts = key.splitASCII(UInt8(ascii: "."), omittingEmptySubsequences: false)
        let field = parts[0]
        let isInternal = field.hasPrefix("_")
        if isInternal {
            guard internalFields.contains(field) else {
                throw ParseError(.invalidKeyName, "Invalid key name: \(key)")
            }
        } else if !(Naming.isIdentifier(field)) {
            throw ParseError(.invalidKeyName, "Invalid key name: \(key)")
        }
        let subpath = Array(parts.dropFirst())
        for p in subpath where p.isEmpty || !Naming.isValidNestedKey(p) || p.utf8.contains(UInt8(ascii: "\"")) {
            throw ParseError(.invalidKeyName, "Invalid key name: \(key)")
        }
        return FieldPath(field: field, subpath: subpath)
    }

    /// - Parameter type: the field's schema type when known.
    func conditions(_ path: FieldPath, _ value: JSONValue, type: FieldType?, budget: inout Int, depth: Int) throws(ParseError) -> [QueryNode] {
        guard case .object(let ops) = value, ops["__type"] == nil, ops.keys.contains(where: { $0.hasPrefix("$") }) else {
            return [.field(path, .equals(try operand(value)))]
        }
        if ops.keys.contains(where: { !$0.hasPrefix("$") }) {
            throw ParseError(.invalidJSON, "You cannot use \(JSONWriter.string(value)) as a query parameter.")
        }
        var result: [QueryNode] = []
        for op in ops.keys.sorted() {
            let arg = ops[op]!  // op from keys
            budget -= 1
            guard budget >= 0 else { throw ParseError.invalidQuery("Query has too many conditions") }
            let condition: Condition?
            switch op {
            case "$eq": condition = .equals(try operand(arg))
            case "$ne": condition = .notEquals(try operand(arg))
            case "$lt", "$lte", "$gt", "$gte":
                condition = .compare(Comparison(rawValue: op)!, try comparable(arg, type: type))  // op is one of the four raw values
            case "$in": condition = .isIn(try list(arg, op))
            case "$nin": condition = .notIn(try list(arg, op))
            case "$all":
                guard case .array(let items) = arg else { throw ParseError.invalidJSON("bad $all value") }
                let regexes = items.compactMap { $0["$regex"] }
                if regexes.isEmpty {
                    condition = .containsAll(try items.map { (v: JSONValue) throws(ParseError) -> JSONValue in try operand(v) })
                } else if regexes.count == items.count {
                    var patterns: [RegexPattern] = []
                    for item in items { patterns.append(try regex(item["$regex"]!, item["$options"])) }  // every item has $regex
                    condition = .containsAllMatching(patterns)
                } else {
                    throw ParseError.invalidJSON("All $all values must be of regex type or none: \(JSONWriter.string(arg))")
                }
            case "$containedBy":
                guard case .array(let items) = arg else { throw ParseError.invalidJSON("bad $containedBy: should be an array") }
                condition = .containedBy(try items.map { (v: JSONValue) throws(ParseError) -> JSONValue in try operand(v) })
            case "$exists":
                guard case .bool(let b) = arg else { throw ParseError.invalidJSON("bad $exists value") }
                condition = .exists(b)
            case "$regex": condition = .regex(try regex(arg, ops["$options"]))
            case "$options":
                if ops["$regex"] == nil { throw ParseError.invalidJSON("bad constraint: $options") }
                condition = nil
            case "$text": condition = .text(try textSearch(arg))
            case "$select", "$dontSelect":
                guard case .object(let sel) = arg, sel.count == 2, let query = sel["query"], let key = sel["key"]?.stringValue else {
                    throw ParseError.invalidQuery("improper usage of \(op)")
                }
                let sub = try subQuery(query, op, budget: &budget, depth: depth)
                condition = op == "$select" ? .select(sub, key: key) : .dontSelect(sub, key: key)
            case "$inQuery", "$notInQuery":
                guard arg["where"] != nil else { throw ParseError.invalidQuery("improper usage of \(op)") }
                let sub = try subQuery(arg, op, budget: &budget, depth: depth)
                condition = op == "$inQuery" ? .inQuery(sub) : .notInQuery(sub)
            case "$nearSphere":
                guard let point = geoPoint(arg) else { throw ParseError.invalidJSON("bad $nearSphere value") }
                condition = .nearSphere(point, maxDistanceRadians: try maxDistance(ops))
            case "$maxDistance", "$maxDistanceInRadians", "$maxDistanceInMiles", "$maxDistanceInKilometers":
                if ops["$nearSphere"] == nil { throw ParseError.invalidJSON("bad constraint: \(op) without $nearSphere") }
                condition = nil
            case "$within":
                guard let box = arg["$box"]?.arrayValue, box.count == 2, let sw = geoPoint(box[0]), let ne = geoPoint(box[1]) else {
                    throw ParseError.invalidJSON("malformatted $within arg")
                }
                condition = .withinBox(southwest: sw, northeast: ne)
            case "$geoWithin": condition = try geoWithin(arg)
            case "$geoIntersects":
                guard let point = arg["$point"].flatMap(geoPoint) else {
                    throw ParseError.invalidJSON("bad $geoIntersect value; $point should be GeoPoint")
                }
                condition = .geoIntersects(point)
            default:
                throw ParseError.invalidJSON("bad constraint: \(op)")
            }
            if let condition { result.append(.field(path, condition)) }
        }
        return result
    }

    /// The `{"className":..,"where":..}` of a sub-query; shape errors are 102 `improper usage of <op>`, errors
    /// inside its `where` are reported as themselves.
    func subQuery(_ value: JSONValue, _ op: String, budget: inout Int, depth: Int) throws(ParseError) -> SubQuery {
        guard case .object = value, let className = value["className"]?.stringValue, Naming.isValidClassName(className) else {
            throw ParseError.invalidQuery("improper usage of \(op)")
        }
        var whereValue = value["where"] ?? .object([:])
        if case .string(let text) = whereValue {
            guard let parsed = try? JSONParser.parse(text) else { throw ParseError.invalidJSON("Invalid where") }
            whereValue = parsed
        }
        guard case .object = whereValue else { throw ParseError.invalidQuery("improper usage of \(op)") }
        return SubQuery(className: className, predicate: try parse(whereValue, className: className, budget: &budget, depth: depth + 1))
    }

    /// Equality/containment operand: typed values normalised, plain values as given.
    func operand(_ value: JSONValue) throws(ParseError) -> JSONValue {
        if case .object(let o) = value, let t = o["__type"]?.stringValue {
            switch t {
            case "Date":
                guard let iso = o["iso"]?.stringValue, ParseDate(iso: iso) != nil else { throw ParseError.invalidJSON("bad Date value") }
            case "Pointer", "Object":
                guard Pointer(json: value) != nil else { throw ParseError.invalidJSON("bad Pointer value") }
            default: break
            }
            return ParseValue.normalize(value)
        }
        if case .object(let o) = value, o.keys.contains(where: { $0.hasPrefix("$") }) {
            throw ParseError.invalidJSON("You cannot use \(JSONWriter.string(value)) as a query parameter.")
        }
        return ParseValue.normalize(value)
    }

    func comparable(_ value: JSONValue, type: FieldType?) throws(ParseError) -> JSONValue {
        if let relative = value["$relativeTime"] {
            if let type, type != .date { throw ParseError.invalidJSON("$relativeTime can only be used with Date field") }
            guard case .string(let text) = relative, let date = RelativeTime.resolve(text, now: now) else {
                throw ParseError.invalidJSON("bad $relativeTime value")
            }
            return ["__type": "Date", "iso": .string(date.iso)]
        }
        return try operand(value)
    }

    func list(_ value: JSONValue, _ op: String) throws(ParseError) -> [JSONValue] {
        guard case .array(let items) = value else { throw ParseError.invalidJSON("bad \(op) value") }
        var out: [JSONValue] = []
        for item in items {
            if case .array(let inner) = item {
                for v in inner { out.append(try operand(v)) }
            } else {
                out.append(try operand(item))
            }
        }
        return out
    }

    func regex(_ pattern: JSONValue, _ options: JSONValue?) throws(ParseError) -> RegexPattern {
        guard case .string(let p) = pattern else { throw ParseError.invalidJSON("bad $regex value") }
        var opts = ""
        if let options {
            // Parse Server 9's letters: `u` (Unicode) too, which changes nothing here: the patterns already match
            // characters, not bytes or UTF-16 units, on SQLite, PostgreSQL and in LiveQuery.
            guard case .string(let o) = options, o.allSatisfy({ "imxsu".contains($0) }) else {
                throw ParseError.invalidQuery("Bad $options value for query: \(options.stringValue ?? JSONWriter.string(options))")
            }
            opts = o
        }
        guard p.utf8.count <= 1024 else { throw ParseError.invalidQuery("$regex pattern is too long") }
        return RegexPattern(pattern: p, options: opts)
    }

    func textSearch(_ value: JSONValue) throws(ParseError) -> TextSearch {
        guard case .object(let search)? = value["$search"] else {
            throw ParseError.invalidJSON("bad $text: $search, should be object")
        }
        guard case .string(let term)? = search["$term"] else { throw ParseError.invalidJSON("bad $text: $term, should be string") }
        var language: String?
        if let l = search["$language"] {
            guard case .string(let s) = l else { throw ParseError.invalidJSON("bad $text: $language, should be string") }
            language = s
        }
        var caseSensitive = false, diacriticSensitive = false
        if let c = search["$caseSensitive"] {
            guard case .bool(let b) = c else { throw ParseError.invalidJSON("bad $text: $caseSensitive, should be boolean") }
            caseSensitive = b
        }
        if let d = search["$diacriticSensitive"] {
            guard case .bool(let b) = d else { throw ParseError.invalidJSON("bad $text: $diacriticSensitive, should be boolean") }
            diacriticSensitive = b
        }
        return TextSearch(term: term, language: language, caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive)
    }

    /// A GeoPoint object, or a `[longitude, latitude]` pair.
    func geoPoint(_ value: JSONValue) -> GeoPoint? {
        if let p = GeoPoint(json: value) { return p }
        if let pair = value.arrayValue, pair.count == 2, let lng = pair[0].numberValue, let lat = pair[1].numberValue,
            (-90...90).contains(lat), (-180...180).contains(lng)
        {
            return GeoPoint(latitude: lat, longitude: lng)
        }
        return nil
    }

    func maxDistance(_ ops: [String: JSONValue]) throws(ParseError) -> Double? {
        let units: [(String, Double)] = [
            // Parse Server converts with these radii (3959 mi, 6371 km).
            ("$maxDistance", 1), ("$maxDistanceInRadians", 1), ("$maxDistanceInMiles", 3959),
            ("$maxDistanceInKilometers", 6371),
        ]
        for (key, divisor) in units {
            guard let v = ops[key] else { continue }
            guard let d = v.numberValue, d >= 0 else { throw ParseError.invalidJSON("bad \(key) value") }
            return d / divisor
        }
        return nil
    }

    func geoWithin(_ arg: JSONValue) throws(ParseError) -> Condition {
        if let polygon = arg["$polygon"] {
            var raw: [JSONValue]
            if polygon.parseType == "Polygon" {
                guard let coords = polygon["coordinates"]?.arrayValue else { throw ParseError.invalidJSON("bad $geoWithin value") }
                // Polygon objects hold [lat, lng]; rewrite them as GeoPoints.
                raw = []
                for c in coords {
                    guard let pair = c.arrayValue, pair.count == 2, let lat = pair[0].numberValue, let lng = pair[1].numberValue else {
                        throw ParseError.invalidJSON("bad $geoWithin value")
                    }
                    raw.append(["__type": "GeoPoint", "latitude": .double(lat), "longitude": .double(lng)])
                }
            } else {
                guard let items = polygon.arrayValue else {
                    throw ParseError.invalidJSON("bad $geoWithin value; $polygon should be Polygon object or Array of Parse.GeoPoint's")
                }
                raw = items
            }
            guard raw.count >= 3 else {
                throw ParseError.invalidJSON("bad $geoWithin value; $polygon should contain at least 3 GeoPoints")
            }
            var points: [GeoPoint] = []
            for item in raw {
                guard let p = geoPoint(item) else { throw ParseError.invalidJSON("bad $geoWithin value") }
                points.append(p)
            }
            return .withinPolygon(points)
        }
        if let sphere = arg["$centerSphere"]?.arrayValue {
            guard sphere.count == 2, let center = geoPoint(sphere[0]), let radius = sphere[1].numberValue, radius >= 0 else {
                throw ParseError.invalidJSON("bad $geoWithin value; $centerSphere should be an array of Parse.GeoPoint and distance")
            }
            return .withinCenterSphere(center, radians: radius)
        }
        throw ParseError.invalidJSON("bad $geoWithin value; $polygon or $centerSphere required")
    }
}
