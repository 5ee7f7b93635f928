public import ParsleyCore

/// The `email` of a request body. - Throws: 204 missing, 125 not a string.
func requestedEmail(_ body: JSONValue?) throws(ParseError) -> String {
    guard let value = body?["email"], !value.isNull else { throw ParseError(.init(rawValue: 204), "you must provide an email") }
    guard case .string(let email) = value else { throw ParseError(.init(rawValue: 125), "you must provide a valid email string") }
    guard !email.isEmpty else { throw ParseError(.init(rawValue: 204), "you must provide an email") }
    return email
}

/// `POST /requestPasswordReset`: mail a reset link to the user with this email.
public struct PasswordResetRequest: Sendable, Equatable {
    public var email: String

    public init(email: String) { self.email = email }

    /// - Throws: 204 without an email, 125 when it is not a string.
    public init(decoding body: JSONValue?) throws(ParseError) { email = try requestedEmail(body) }
}

/// `POST /verificationEmailRequest`: mail a new verification link to the user with this email.
public struct VerificationEmailRequest: Sendable, Equatable {
    public var email: String

    public init(email: String) { self.email = email }

    /// - Throws: 204 without an email, 125 when it is not a string.
    public init(decoding body: JSONValue?) throws(ParseError) { email = try requestedEmail(body) }
}
