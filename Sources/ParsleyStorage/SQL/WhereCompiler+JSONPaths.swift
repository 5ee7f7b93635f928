import ParsleyCore

extension WhereCompiler {
    /// Dotted paths into Object fields. Each comparison extracts the value as the kind of its operand, so a
    /// number never equals a string (as in Parse Server) and typed databases compare like with like.
    func compileJSONPath(_ condition: Condition, base: SQLFragment, path: [String]) throws(ParseError) -> SQLFragment {
        func extract(for v: JSONValue) -> (SQLFragment, SQLValue) {
            if v.parseType == "Date", let iso = v["iso"]?.stringValue {
                return (dialect.jsonExtract(base, path: path + ["iso"], as: .text), .text(iso))
            }
            if let p = Pointer(json: v) { return (dialect.jsonExtract(base, path: path + ["objectId"], as: .text), .text(p.objectId)) }
            let bound = StorageCodec.encodeScalar(v)
            return (dialect.jsonExtract(base, path: path, as: ScalarKind(bound)), bound)
        }
        /// `extracted = value`, false (never NULL) when the value there is missing or of another kind.
        func equals(_ v: JSONValue) -> SQLFragment {
            let (e, b) = extract(for: v)
            return "COALESCE(" + e + " = " + .bind(b) + ", 1=0)"
        }
        let present = dialect.jsonExtract(base, path: path, as: .any)
        switch condition {
        case .equals(let v):
            if v.isNull { return present + " IS NULL" }
            let (e, b) = extract(for: v)
            return e + " = " + .bind(b)
        case .notEquals(let v):
            if v.isNull { return present + " IS NOT NULL" }
            return SQLFragment("NOT ") + equals(v)
        case .compare(let op, let v):
            let (e, b) = extract(for: v)
            // Same-type comparisons only (numbers with numbers, strings with strings).
            let kind: SQLFragment
            switch v {
            case .int, .double: kind = dialect.jsonType(base, path: path) + " IN ('integer','real') AND "
            case .string: kind = dialect.jsonType(base, path: path) + " = 'text' AND "
            case .bool: kind = dialect.jsonType(base, path: path) + " IN ('true','false') AND "
            case .null, .array: return "1=0"
            case .object: kind = ""
            }
            return (kind + e + " \(sqlOperator(op)) " + .bind(b)).parenthesized
        case .isIn(let values):
            guard !values.isEmpty else { return "1=0" }
            var parts = values.filter { !$0.isNull }.map(equals)
            if values.contains(where: \.isNull) { parts.append(present + " IS NULL") }
            return SQLFragment.join(parts, " OR ").parenthesized
        case .notIn(let values):
            guard !values.isEmpty else { return "1=1" }
            let others = SQLFragment.join(values.filter { !$0.isNull }.map(equals) + ["1=0"], " OR ").parenthesized
            if values.contains(where: \.isNull) { return (present + " IS NOT NULL AND NOT " + others).parenthesized }
            return SQLFragment("NOT ") + others
        case .exists(let b): return dialect.jsonType(base, path: path) + (b ? " IS NOT NULL" : " IS NULL")
        case .regex(let r): return dialect.regexMatch(dialect.jsonExtract(base, path: path, as: .text), r.pattern, options: r.options)
        case .select(let sub, let key):
            return try selectSubquery(dialect.jsonExtract(base, path: path, as: .text), .text, sub, key: key, negated: false)
        case .dontSelect(let sub, let key):
            return try selectSubquery(dialect.jsonExtract(base, path: path, as: .text), .text, sub, key: key, negated: true)
        case .inQuery(let sub):
            return dialect.jsonExtract(base, path: path + ["objectId"], as: .text) + " IN " + (try idsSubquery(sub))
        case .notInQuery(let sub):
            let e = dialect.jsonExtract(base, path: path + ["objectId"], as: .text)
            return (e + " IS NULL OR " + e + " NOT IN " + (try idsSubquery(sub))).parenthesized
        default: return "1=0"
        }
    }
}
