/// Validation of Parse class and field names (Parse Server's rules, §2.6 of the API reference).
public enum Naming {
    public static let systemClasses: Set<String> = [
        "_User", "_Installation", "_Role", "_Session", "_Product", "_PushStatus", "_JobStatus", "_JobSchedule",
        "_Audience", "_Idempotency", "_Hooks",
    ]

    /// `^[A-Za-z][A-Za-z0-9_]*$`
    public static func isIdentifier(_ s: String) -> Bool {
        guard let first = s.utf8.first, isAlpha(first), s.utf8.count <= 128 else { return false }
        return s.utf8.allSatisfy { isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    public static func isValidClassName(_ name: String) -> Bool {
        systemClasses.contains(name) || isIdentifier(name)
    }

    /// Class names a client may create (no new `_` classes).
    public static func isValidUserClassName(_ name: String) -> Bool { isIdentifier(name) }

    public static func isValidFieldName(_ name: String) -> Bool {
        isIdentifier(name) && name != "className" && name != "length"
    }

    /// Keys inside nested objects may not contain `$` or `.`.
    public static func isValidNestedKey(_ key: String) -> Bool {
        !key.utf8.contains(UInt8(ascii: "$")) && !key.utf8.contains(UInt8(ascii: "."))
    }

    @inline(__always) static func isAlpha(_ b: UInt8) -> Bool {
        (b >= 65 && b <= 90) || (b >= 97 && b <= 122)
    }
    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
}
