public import ParsleyCore

/// A username or an email, and a password, as `/login` and `/verifyPassword` read them (query string or body).
public struct PasswordCredentials: Sendable, Equatable {
    /// Set when given (then it is what the user is looked up by); otherwise `email` is.
    public var username: String?
    public var email: String?
    public var password: String

    public init(username: String? = nil, email: String? = nil, password: String) {
        self.username = username
        self.email = email
        self.password = password
    }

    /// Parse Server's order: missing (JavaScript-falsy) username and email is 200, a missing password 201, then any
    /// of them not a string (an operator object such as `{"$ne": null}`) is 101, like a wrong password.
    public init(decoding params: [String: JSONValue]) throws(ParseError) {
        let username = params["username"].flatMap { $0.isTruthy ? $0 : nil }, email = params["email"].flatMap { $0.isTruthy ? $0 : nil }
        guard username != nil || email != nil else { throw ParseError(.init(rawValue: 200), "username/email is required.") }
        guard let passwordValue = params["password"], passwordValue.isTruthy else { throw ParseError(.init(rawValue: 201), "password is required.") }
        guard case .string(let password) = passwordValue, username.map({ $0.stringValue != nil }) ?? true,
            email.map({ $0.stringValue != nil }) ?? true
        else { throw ParseError(.objectNotFound, "Invalid username/password.") }
        self.init(username: username?.stringValue, email: email?.stringValue, password: password)
    }
}

/// `GET|POST /login`: a new session for the user these credentials name; `authData` brings the additional factor
/// (`{"mfa": {"token": "123456"}}`) a user with MFA must give.
public struct LogIn: Sendable, Equatable {
    public var credentials: PasswordCredentials
    public var authData: [String: JSONValue]?

    public init(_ credentials: PasswordCredentials, authData: [String: JSONValue]? = nil) {
        self.credentials = credentials
        self.authData = authData
    }

    /// The query string's parameters merged over the body's. - Throws: as `PasswordCredentials`.
    public init(decoding params: [String: JSONValue]) throws(ParseError) {
        credentials = try PasswordCredentials(decoding: params)
        authData = params["authData"]?.objectValue
    }
}

/// `GET|POST /verifyPassword`: the user these credentials name, without a session.
public struct VerifyPassword: Sendable, Equatable {
    public var credentials: PasswordCredentials

    public init(_ credentials: PasswordCredentials) { self.credentials = credentials }

    /// The query string's parameters merged over the body's. - Throws: as `PasswordCredentials`.
    public init(decoding params: [String: JSONValue]) throws(ParseError) { credentials = try PasswordCredentials(decoding: params) }
}

/// `POST /loginAs` (master key): a new session for any user.
public struct LogInAs: Sendable, Equatable {
    public var userId: String

    public init(userId: String) { self.userId = userId }

    /// - Throws: 142 when `userId` is missing, empty or not a string.
    public init(decoding params: [String: JSONValue]) throws(ParseError) {
        guard case .string(let userId)? = params["userId"], !userId.isEmpty else {
            throw ParseError(.invalidValue, "userId must not be empty, null, or undefined")
        }
        self.userId = userId
    }
}
