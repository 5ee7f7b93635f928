public import ParsleyCore

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
            return any { e in SQLFragment.join(values.map { elementEquals(e, $0) }, " OR ").parenthesized }
        case .notIn(let values):
            guard !values.isEmpty else { return "1=1" }
            return SQLFragment("NOT ") + any { e in SQLFragment.join(values.map { elementEquals(e, $0) }, " OR ").parenthesized }
        case .containsAll(let values):
            guard !values.isEmpty else { return "1=0" }
            return SQLFragment.join(values.map { v in any { elementEquals($0, v) } }, " AND ").parenthesized
        case .containsAllMatching(let patterns):
            guard !patterns.isEmpty else { return "1=0" }
            return SQLFragment.join(
                patterns.map { p in any { e in (e.type + " = 'text' AND " + dialect.regexMatch(e.value(.text), p.pattern, options: p.options)).parenthesized } },
                " AND "
            ).parenthesized
        case .containedBy(let values):
            return SQLFragment("NOT ") + any { e in
                values.isEmpty ? "1=1" : SQLFragment("NOT ") + SQLFragment.join(values.map { elementEquals(e, $0) }, " OR ").parenthesized
            }
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

    /// One array element equals a Parse value (pointers by class and id, dates by instant).
    func elementEquals(_ e: ArrayElement, _ v: JSONValue) -> SQLFragment {
        switch v {
        case .null: return e.type + " = 'null'"
        case .bool(let b): return e.type + (b ? " = 'true'" : " = 'false'")
        case .int, .double: return (e.type + " IN ('integer','real') AND " + e.value(.number) + " = " + .bind(StorageCodec.encodeScalar(v))).parenthesized
        case .string(let s): return (e.type + " = 'text' AND " + e.value(.text) + " = " + .bind(.text(s))).parenthesized
        case .array: return (e.type + " = 'array' AND " + e.json + " = " + .bind(.json(JSONWriter.string(v)))).parenthesized
        case .object:
            if let p = Pointer(json: v) {
                return (e.type + " = 'object' AND " + dialect.jsonExtract(e.json, path: ["objectId"], as: .text) + " = " + .bind(.text(p.objectId)) + " AND "
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
            return (e.type + " = 'object' AND " + dialect.jsonExtract(e.json, path: ["iso"], as: .text) + " \(sqlOperator(op)) " + .bind(.text(iso))).parenthesized
        }
        switch v {
        case .int, .double:
            return (e.type + " IN ('integer','real') AND " + e.value(.number) + " \(sqlOperator(op)) " + .bind(StorageCodec.encodeScalar(v))).parenthesized
        case .string(let s):
            return (e.type + " = 'text' AND " + e.value(.text) + " \(sqlOperator(op)) " + .bind(.text(s))).parenthesized
        default: return "1=0"
        }
    }
}
