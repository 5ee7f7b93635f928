/// The one error type of the Parse API: a numeric Parse code and a message, rendered as
/// `{"code":N,"error":"message"}`. The HTTP status for each code lives in one table in `ParsleyHTTP`.
public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        public static let otherCause = Code(rawValue: -1)
        public static let internalServerError = Code(rawValue: 1)
        public static let connectionFailed = Code(rawValue: 100)
        public static let objectNotFound = Code(rawValue: 101)
        public static let invalidQuery = Code(rawValue: 102)
        public static let invalidClassName = Code(rawValue: 103)
        public static let missingObjectId = Code(rawValue: 104)
        public static let invalidKeyName = Code(rawValue: 105)
        public static let invalidPointer = Code(rawValue: 106)
        public static let invalidJSON = Code(rawValue: 107)
        public static let commandUnavailable = Code(rawValue: 108)
        public static let incorrectType = Code(rawValue: 111)
        public static let pushMisconfigured = Code(rawValue: 115)
        public static let operationForbidden = Code(rawValue: 119)
        public static let invalidNestedKey = Code(rawValue: 121)
        public static let invalidFileName = Code(rawValue: 122)
        public static let invalidACL = Code(rawValue: 123)
        public static let timeout = Code(rawValue: 124)
        public static let fileTooLarge = Code(rawValue: 129)
        public static let fileSaveError = Code(rawValue: 130)
        public static let missingRequiredField = Code(rawValue: 135)
        public static let changedImmutableField = Code(rawValue: 136)
        public static let duplicateValue = Code(rawValue: 137)
        public static let scriptFailed = Code(rawValue: 141)
        public static let validationError = Code(rawValue: 142)
        public static let webhookError = Code(rawValue: 143)
        public static let duplicateRequest = Code(rawValue: 159)
        public static let invalidValue = Code(rawValue: 162)
        public static let invalidSessionToken = Code(rawValue: 209)
        public static let invalidSchemaOperation = Code(rawValue: 255)
    }

    public var code: Code
    public var message: String
    /// What a client is told instead of `message` when `enableSanitizedErrorResponse` is on (Parse Server 9's
    /// `createSanitizedError`: permission and authentication refusals say `Permission denied`, the detailed
    /// `message` goes to the server's log). Nil: the message is always shown.
    public var sanitizedMessage: String?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        self.sanitizedMessage = nil
    }

    /// A refusal whose detailed message Parse Server 9 only logs (`createSanitizedError`); the client reads
    /// `generic` unless `enableSanitizedErrorResponse` is false.
    public static func sanitized(_ code: Code, _ message: String, generic: String = "Permission denied") -> ParseError {
        var error = ParseError(code, message)
        error.sanitizedMessage = generic
        return error
    }

    /// The error as a client receives it: with `sanitize`, a sanitizable error carries its generic message.
    public func answered(sanitize: Bool) -> ParseError {
        guard sanitize, let generic = sanitizedMessage else { return self }
        return ParseError(code, generic)
    }

    /// Errors are equal by code and detailed message (whether it is shown is the server's choice).
    public static func == (a: ParseError, b: ParseError) -> Bool { a.code == b.code && a.message == b.message }

    public var description: String { "ParseError(\(code.rawValue)): \(message)" }

    /// The JSON body Parse clients expect.
    public var json: JSONValue { .object(["code": .int(Int64(code.rawValue)), "error": .string(message)]) }
}

extension ParseError {
    public static func objectNotFound(_ message: String = "Object not found.") -> ParseError {
        ParseError(.objectNotFound, message)
    }
    public static func invalidJSON(_ message: String = "Invalid JSON") -> ParseError { ParseError(.invalidJSON, message) }
    public static func invalidQuery(_ message: String) -> ParseError { ParseError(.invalidQuery, message) }
    public static func invalidKeyName(_ name: String) -> ParseError { ParseError(.invalidKeyName, "Invalid field name: \(name).") }
    public static func invalidClassName(_ name: String) -> ParseError {
        ParseError(
            .invalidClassName,
            "Invalid classname: \(name), classnames can only have alphanumeric characters and _, and must start with an alpha character "
        )
    }
}
