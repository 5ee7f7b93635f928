public import ParsleyCore

/// `POST /users`: a sign-up with a username and password, or a log-in/sign-up with `authData`.
public struct SignUp: Sendable, Equatable {
    public enum Credentials: Sendable, Equatable {
        case password(username: String, password: String)
        /// Providers' data (`{"facebook": {...}}`), not empty.
        case authData([String: JSONValue])
    }

    public var credentials: Credentials
    /// The new user's fields: without `password`; with `username` and `authData` as sent.
    public var fields: [String: JSONValue]

    public init(credentials: Credentials, fields: [String: JSONValue]) {
        self.credentials = credentials
        self.fields = fields
    }

    /// A request body. - Throws: 107 not an object; without `authData`, 200 missing username, 201 missing password.
    public init(decoding body: JSONValue?) throws(ParseError) {
        var fields = try bodyFields(body)
        // `mfa` alone is a second factor enrolled at a password sign-up, not a way to sign up.
        if case .object(let authData)? = fields["authData"], !authData.isEmpty, authData.keys.contains(where: { $0 != "mfa" }) {
            self.init(credentials: .authData(authData), fields: fields)
            return
        }
        guard case .string(let username)? = fields["username"], !username.isEmpty else {
            throw ParseError(.init(rawValue: 200), "bad or missing username")
        }
        guard case .string(let password)? = fields["password"], !password.isEmpty else {
            throw ParseError(.init(rawValue: 201), "password is required")
        }
        fields["password"] = nil
        self.init(credentials: .password(username: username, password: password), fields: fields)
    }
}
