public import ParsleyCore

/// `POST /challenge`: who asks (a username or email with its password, or one provider's `authData`), and what each
/// provider is asked (`challengeData`), as Parse Server's `handleChallenge` reads them.
public struct Challenge: Sendable, Equatable {
    public var credentials: PasswordCredentials?
    public var authData: [String: JSONValue]?
    public var challengeData: [String: JSONValue]?

    public init(credentials: PasswordCredentials? = nil, authData: [String: JSONValue]? = nil, challengeData: [String: JSONValue]?) {
        self.credentials = credentials
        self.authData = authData
        self.challengeData = challengeData
    }

    /// - Throws: -1 for a username or email without a password, `challengeData` or `authData` not an object; as
    ///   `PasswordCredentials` for the rest.
    public init(decoding body: JSONValue?) throws(ParseError) {
        let fields = try bodyFields(body)
        if fields["username"]?.isTruthy == true || fields["email"]?.isTruthy == true {
            guard fields["password"]?.isTruthy == true else {
                throw ParseError(.otherCause, "You provided username or email, you need to also provide password.")
            }
            credentials = try PasswordCredentials(decoding: fields)
        }
        switch fields["challengeData"] {
        case nil, .null?: challengeData = nil
        case .object(let data)?: challengeData = data
        case .bool(false)?, .int(0)?, .string("")?: challengeData = nil
        default: throw ParseError(.otherCause, "challengeData should be an object.")
        }
        switch fields["authData"] {
        case nil, .null?: authData = nil
        case .object(let data)?: authData = data
        default: throw ParseError(.otherCause, "authData should be an object.")
        }
    }
}
