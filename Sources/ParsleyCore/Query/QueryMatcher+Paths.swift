extension QueryMatcher {
    /// A dotted path into an Object field (`stats.wins`), as `WhereCompiler+JSONPaths` compares it: the value there is
    /// taken as the operand's own kind (a number never equals a string), a Date operand by its `iso`, a pointer by its
    /// `objectId`; a JSON null counts as missing. Nil where that needs storage.
    static func path(_ condition: Condition, _ value: JSONValue?) -> Bool? {
        let present = value.flatMap { $0.isNull ? nil : $0 }
        switch condition {
        case .equals(let v): return v.isNull ? present == nil : pathEquals(present, v)
        case .notEquals(let v): return v.isNull ? present != nil : pathEquals(present, v).map { !$0 }
        case .compare(let op, let v):
            guard let present, let (stored, operand) = comparable(present, v) else { return v.objectValue != nil && v.parseType == nil ? nil : false }
            switch op {
            case .lessThan: return stored < operand
            case .lessThanOrEqual: return stored <= operand
            case .greaterThan: return stored > operand
            case .greaterThanOrEqual: return stored >= operand
            }
        case .isIn(let values):
            if values.isEmpty { return false }
            var any = false
            for v in values {
                if v.isNull { if present == nil { any = true }; continue }
                guard let hit = pathEquals(present, v) else { return nil }
                if hit { any = true }
            }
            return any
        case .notIn(let values):
            if values.isEmpty { return true }
            if values.contains(where: \.isNull), present == nil { return false }
            for v in values where !v.isNull {
                guard let hit = pathEquals(present, v) else { return nil }
                if hit { return false }
            }
            return true
        case .exists(let b): return (value != nil) == b
        case .regex(let r):
            guard let present else { return false }
            guard let text = present.stringValue else { return nil }
            return RegexMatch.matches(text, r)
        default: return nil
        }
    }

    /// The value at `subpath` inside `value` (nil when missing).
    static func value(at subpath: [String], in value: JSONValue?) -> JSONValue? {
        var current = value
        for key in subpath { current = current?.objectValue?[key] }
        return current
    }

    /// Equality of the value there with an operand; nil for operands only storage can compare (objects, arrays).
    static func pathEquals(_ present: JSONValue?, _ v: JSONValue) -> Bool? {
        if v.parseType == "Date", let iso = v["iso"]?.stringValue { return present?["iso"]?.stringValue == iso }
        if let p = Pointer(json: v) { return present?["objectId"]?.stringValue == p.objectId }
        switch v {
        case .array, .object: return nil
        default:
            guard let present else { return false }
            if v.isNumber { return present.isNumber && present.numberValue == v.numberValue }
            return present == v
        }
    }

    /// Both sides as keys of one kind: numbers, text (a Date operand against the stored `iso`, a pointer against the
    /// stored `objectId`), booleans (false before true).
    static func comparable(_ present: JSONValue, _ v: JSONValue) -> (Key, Key)? {
        if v.parseType == "Date", let iso = v["iso"]?.stringValue, let stored = present["iso"]?.stringValue { return (.text(stored), .text(iso)) }
        if let p = Pointer(json: v), let stored = present["objectId"]?.stringValue { return (.text(stored), .text(p.objectId)) }
        if v.isNumber, present.isNumber, let a = present.numberValue, let b = v.numberValue { return (.number(a), .number(b)) }
        if let b = v.stringValue, let a = present.stringValue { return (.text(a), .text(b)) }
        if let b = v.boolValue, let a = present.boolValue { return (.number(a ? 1 : 0), .number(b ? 1 : 0)) }
        return nil
    }
}
