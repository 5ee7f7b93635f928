import ParsleyCore

extension WhereCompiler {
    /// Array fields: a scalar operand matches an element; an array operand matches the whole array.
    func compileArray(_ condition: Condition, _ expr: SQLFragment) throws(ParseError) -> SQLFragment {
        func any(_ predicate: (ArrayElement) -> SQLFragment) -> SQLFragment {
            dialect.anyElement(of: expr, alias: newAlias(), where: predicate)
        }
        switch condition {
        case .equals(let v):
            if v.isNull { return expr + " IS NULL" }
            if case .array = v { return expr + " = " + .bind(.json(JSONWriter.string(v))) }
            return any { elementEquals($0, v) }
        case .notEquals(let v):
            if v.isNull { return expr + " IS NOT NULL" }
            if case .array = v { return (expr + " IS NULL OR " + expr + " <> " + .bind(.json(JSONWriter.string(v)))).parenthesized }
            return SQLFragment("NOT ") + any { elementEquals($0, v) }
        case .compare(let op, let v):
            return any { e in elementCompare(e, op, v) }
        case .isIn(let values):
            guard !values.isEmpty else { return "1=0" }
            return any { e in elementIn(e, values) }
        case .notIn(let values):
            guard !values.isEmpty else { return "1=1" }
            return SQLFragment("NOT ") + any { e in elementIn(e, values) }
        case .containsAll(let values):
            guard !values.isEmpty else { return "1=0" }
            return containsAll(expr, values)
        case .containsAllMatching(let patterns):
            guard !patterns.isEmpty else { return "1=0" }
            return SQLFragment.join(
                patterns.map { p in
                    any { e in (e.type + " = 'text' AND " + dialect.regexMatch(e.value(.text), p.pattern, options: p.options)).parenthesized }
                },
                " AND "
            ).parenthesized
        case .containedBy(let values):
            return SQLFragment("NOT ") + any { e in values.isEmpty ? "1=1" : SQLFragment("NOT ") + elementIn(e, values) }
        case .exists(let b): return expr + (b ? " IS NOT NULL" : " IS NULL")
        case .regex(let r):
            return any { e in (e.type + " = 'text' AND " + dialect.regexMatch(e.value(.text), r.pattern, options: r.options)).parenthesized }
        case .inQuery(let sub), .notInQuery(let sub):
            var negated = false
            if case .notInQuery = condition { negated = true }
            let ids = try idsSubquery(sub)
            let match = any { e in
                (e.type + " = 'object' AND " + dialect.jsonExtract(e.json, path: ["className"], as: .text) + " = " + .bind(.text(sub.className))
                    + " AND " + dialect.jsonExtract(e.json, path: ["objectId"], as: .text) + " IN " + ids).parenthesized
            }
            return negated ? SQLFragment("NOT ") + match : match
        case .select(let sub, let key), .dontSelect(let sub, let key):
            // Like `$in`/`$nin` on an array: some element is one of the selected values.
            var negated = false
            if case .dontSelect = condition { negated = true }
            guard let (values, kind) = try selectedValues(sub, key: key), kind != .json else { return negated ? "1=1" : "1=0" }
            let match = any { e in (e.type + " NOT IN ('object','array') AND " + e.value(kind) + " IN " + values).parenthesized }
            return negated ? SQLFragment("NOT ") + match : match
        case .text(let t):
            return dialect.textMatch(expr, TextSearchTerms(term: t.term, caseSensitive: t.caseSensitive, diacriticSensitive: t.diacriticSensitive))
        default: return "1=0"
        }
    }

    /// Operands of `$in`/`$nin`/`$all`/`$containedBy` on an array, grouped so that a list of any length is a few
    /// binds: strings, numbers, pointers of one class and dates each become one bound list; the rest (booleans,
    /// null, arrays, objects) one comparison per distinct value.
    struct ElementGroups {
        var strings: [SQLValue] = []
        var numbers: [SQLValue] = []
        var dates: [SQLValue] = []
        var pointers: [String: [SQLValue]] = [:]
        var others: [JSONValue] = []

        init(_ values: [JSONValue]) {
            var seen = Set<JSONValue>()
            for v in values where seen.insert(v).inserted {
                switch v {
                case .string(let s): strings.append(.text(s))
                case .int, .double: numbers.append(StorageCodec.encodeScalar(v))
                default:
                    if let p = Pointer(json: v) {
                        pointers[p.className, default: []].append(.text(p.objectId))
                    } else if v.parseType == "Date", let iso = v["iso"]?.stringValue {
                        dates.append(.text(iso))
                    } else {
                        others.append(v)
                    }
                }
            }
        }
    }

    /// The element equals one of `values`.
    func elementIn(_ e: ArrayElement, _ values: [JSONValue]) -> SQLFragment {
        let groups = ElementGroups(values)
        func among(_ expression: SQLFragment, _ list: [SQLValue]) -> SQLFragment { dialect.isIn(expression, BoundList(list)!, alias: newAlias()) }
        var parts: [SQLFragment] = []
        if !groups.strings.isEmpty { parts.append((e.type + " = 'text' AND " + among(e.value(.text), groups.strings)).parenthesized) }
        if !groups.numbers.isEmpty { parts.append((e.type + " IN ('integer','real') AND " + among(e.value(.number), groups.numbers)).parenthesized) }
        if !groups.dates.isEmpty {
            parts.append((e.type + " = 'object' AND " + among(dialect.jsonExtract(e.json, path: ["iso"], as: .text), groups.dates)).parenthesized)
        }
        for (className, ids) in groups.pointers.sorted(by: { $0.key < $1.key }) {
            parts.append(
                (e.type + " = 'object' AND " + dialect.jsonExtract(e.json, path: ["className"], as: .text) + " = " + .bind(.text(className))
                    + " AND " + among(dialect.jsonExtract(e.json, path: ["objectId"], as: .text), ids)).parenthesized)
        }
        parts += groups.others.map { elementEquals(e, $0) }
        return parts.isEmpty ? "1=0" : SQLFragment.join(parts, " OR ").parenthesized
    }

    /// `$all` on an array: every listed value is an element. Strings, numbers, dates and pointers of one class:
    /// as many distinct elements among the (distinct) listed values as were listed, one hashed list per group, so
    /// long lists and long arrays cost their sum, not their product. Other values: one test each.
    func containsAll(_ expr: SQLFragment, _ values: [JSONValue]) -> SQLFragment {
        let groups = ElementGroups(values)
        var parts: [SQLFragment] = []
        func allListed(_ list: [SQLValue], _ value: (ArrayElement) -> SQLFragment, _ type: (ArrayElement) -> SQLFragment) {
            let (from, e) = dialect.arrayElements(of: expr, alias: newAlias())
            var f = SQLFragment("(SELECT COUNT(DISTINCT ") + value(e) + ") FROM " + from + " WHERE " + type(e) + " AND "
            f.append(dialect.isIn(value(e), BoundList(list)!, alias: newAlias()))
            f.append(") = ")
            f.append(bind: .integer(Int64(list.count)))
            parts.append(f)
        }
        if !groups.strings.isEmpty { allListed(groups.strings, { $0.value(.text) }, { $0.type + " = 'text'" }) }
        if !groups.numbers.isEmpty { allListed(groups.numbers, { $0.value(.number) }, { $0.type + " IN ('integer','real')" }) }
        if !groups.dates.isEmpty {
            allListed(groups.dates, { dialect.jsonExtract($0.json, path: ["iso"], as: .text) }, { $0.type + " = 'object'" })
        }
        for (className, ids) in groups.pointers.sorted(by: { $0.key < $1.key }) {
            allListed(ids, { dialect.jsonExtract($0.json, path: ["objectId"], as: .text) }) { e in
                e.type + " = 'object' AND " + dialect.jsonExtract(e.json, path: ["className"], as: .text) + " = " + .bind(.text(className))
            }
        }
        parts += groups.others.map { v in dialect.anyElement(of: expr, alias: newAlias()) { elementEquals($0, v) } }
        return SQLFragment.join(parts, " AND ").parenthesized
    }

    /// One array element equals a Parse value (pointers by class and id, dates by instant).
    func elementEquals(_ e: ArrayElement, _ v: JSONValue) -> SQLFragment {
        switch v {
        case .null: return e.type + " = 'null'"
        case .bool(let b): return e.type + (b ? " = 'true'" : " = 'false'")
        case .int, .double:
            return (e.type + " IN ('integer','real') AND " + e.value(.number) + " = " + .bind(StorageCodec.encodeScalar(v))).parenthesized
        case .string(let s): return (e.type + " = 'text' AND " + e.value(.text) + " = " + .bind(.text(s))).parenthesized
        case .array: return (e.type + " = 'array' AND " + e.json + " = " + .bind(.json(JSONWriter.string(v)))).parenthesized
        case .object:
            if let p = Pointer(json: v) {
                return
                    (e.type + " = 'object' AND " + dialect.jsonExtract(e.json, path: ["objectId"], as: .text) + " = " + .bind(.text(p.objectId))
                    + " AND "
                    + dialect.jsonExtract(e.json, path: ["className"], as: .text) + " = " + .bind(.text(p.className))).parenthesized
            }
            if v.parseType == "Date", let iso = v["iso"]?.stringValue {
                return (e.type + " = 'object' AND " + dialect.jsonExtract(e.json, path: ["iso"], as: .text) + " = " + .bind(.text(iso))).parenthesized
            }
            return (e.type + " = 'object' AND " + e.json + " = " + .bind(.json(JSONWriter.string(v)))).parenthesized
        }
    }

    func elementCompare(_ e: ArrayElement, _ op: Comparison, _ v: JSONValue) -> SQLFragment {
        if v.parseType == "Date", let iso = v["iso"]?.stringValue {
            return (e.type + " = 'object' AND " + dialect.jsonExtract(e.json, path: ["iso"], as: .text) + " \(sqlOperator(op)) " + .bind(.text(iso)))
                .parenthesized
        }
        switch v {
        case .int, .double:
            return (e.type + " IN ('integer','real') AND " + e.value(.number) + " \(sqlOperator(op)) " + .bind(StorageCodec.encodeScalar(v)))
                .parenthesized
        case .string(let s):
            return (e.type + " = 'text' AND " + e.value(.text) + " \(sqlOperator(op)) " + .bind(.text(s))).parenthesized
        default: return "1=0"
        }
    }
}
