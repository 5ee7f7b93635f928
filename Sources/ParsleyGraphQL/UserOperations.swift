import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// A signed-in user as `Viewer` shows it: the session token and, when the document asks for it, the user read as
/// that user.
struct ViewerValue: Sendable {
    let sessionToken: String
    let user: ParseObjectValue?
}

/// The `viewer` query and the user mutations (docs/graphql-contract.md §6): `signUp`, `logIn`, `logInWith`,
/// `logOut`, `resetPassword`, `confirmResetPassword`, `sendVerificationEmail` and `challenge`. Each one calls the `UserService` or
/// `EmailFlows` function its REST route calls (`POST /users`, `/login`, `/logout`, `/requestPasswordReset`,
/// `/verificationEmailRequest`, `/challenge`, the reset page's form), so password policy, lockout, email verification, auth
/// providers and cloud code's login hooks hold as they do on REST.
struct UserOperations {
    let services: GraphQLServices
    let shape: ClassShape
    let viewer: GraphQLObjectType
    let inputs: CommonInputTypes

    init(services: GraphQLServices, shape: ClassShape, user: GraphQLObjectType, inputs: CommonInputTypes) throws {
        self.services = services
        self.shape = shape
        self.inputs = inputs
        viewer = try GraphQLObjectType(
            name: "Viewer",
            fields: [
                "sessionToken": GraphQLField(
                    type: GraphQLNonNull(GraphQLString), resolve: { source, _, _, _ in (source as? ViewerValue).map { Map.string($0.sessionToken) } }),
                "user": GraphQLField(type: GraphQLNonNull(user), resolve: { source, _, _, _ in (source as? ViewerValue)?.user }),
            ])
    }

    /// `viewer: Viewer!`: the caller's user, read under the caller's own auth; no session token is 209.
    func viewerQuery() -> GraphQLField {
        let services = self.services
        return GraphQLField(
            type: GraphQLNonNull(viewer),
            resolve: { _, _, context, info in
                let auth = try SchemaBuilder.auth(context)
                guard let userId = auth.userId, let token = auth.sessionToken else {
                    throw ParseError(.invalidSessionToken, "Invalid session token")
                }
                return try await Self.viewer(token: token, userId: userId, read: Selections.names(info).contains("user"), auth, services)
            })
    }

    /// The mutations, by name.
    func mutations() throws -> [(String, GraphQLField)] {
        let (services, shape, shapes) = (self.services, self.shape, inputs.classes.shapes)
        let viewerOutput: [String: any GraphQLOutputType] = ["viewer": GraphQLNonNull(viewer)]
        let ok: [String: any GraphQLOutputType] = ["ok": GraphQLNonNull(GraphQLBoolean)]
        var userFields = inputs.fieldsMap(shape, create: true)
        userFields["password"] = InputObjectField(type: GraphQLString)
        userFields["authData"] = InputObjectField(type: GraphQLScalars.object)
        let createUser = try GraphQLInputObjectType(name: "CreateUserFieldsInput", fields: userFields)
        var loginWithFields = userFields
        for name in ["username", "password", "authData"] { loginWithFields[name] = nil }
        let loginWith = try GraphQLInputObjectType(name: "UserLoginWithInput", fields: loginWithFields)

        let signUp = try RelayMutation.field(
            "signUp", input: ["fields": InputObjectField(type: createUser)], output: viewerOutput,
            resolve: { input, auth, info in
                let body = try await FieldInputs(shapes: shapes, services: services, auth: auth).body(input["fields"], shape, update: false)
                let created = try await services.users.signUp(try SignUp(decoding: .object(body)), auth: auth)
                return ["viewer": try await Self.viewer(created.body, info, auth, services)]
            })
        let logInWith = try RelayMutation.field(
            "logInWith",
            input: ["authData": InputObjectField(type: GraphQLNonNull(GraphQLScalars.object)), "fields": InputObjectField(type: loginWith)],
            output: viewerOutput,
            resolve: { input, auth, info in
                var body = try await FieldInputs(shapes: shapes, services: services, auth: auth).body(input["fields"], shape, update: false)
                body["authData"] = input["authData"]
                let created = try await services.users.signUp(try SignUp(decoding: .object(body)), auth: auth)
                return ["viewer": try await Self.viewer(created.body, info, auth, services)]
            })
        let logIn = try RelayMutation.field(
            "logIn",
            input: [
                "username": InputObjectField(type: GraphQLNonNull(GraphQLString)),
                "password": InputObjectField(type: GraphQLNonNull(GraphQLString)), "authData": InputObjectField(type: GraphQLScalars.object),
            ],
            output: viewerOutput,
            resolve: { input, auth, info in
                var params: [String: JSONValue] = ["username": input["username"] ?? .null, "password": input["password"] ?? .null]
                if case .object? = input["authData"] { params["authData"] = input["authData"] }
                let user = try await services.users.logIn(try LogIn(decoding: params), auth: auth)
                return ["viewer": try await Self.viewer(user, info, auth, services)]
            })
        // Parse Server's logOut answers `ok: true` without a session token too; with one, it is `POST /logout`.
        let logOut = try RelayMutation.field(
            "logOut", input: [:], output: ok,
            resolve: { _, auth, _ in
                if auth.sessionToken != nil { try await services.users.logOut(auth: auth) }
                return ["ok": Map.bool(true)]
            })
        let email: InputObjectFieldMap = ["email": InputObjectField(type: GraphQLNonNull(GraphQLString))]
        // Parse Server lets these two errors reach Apollo without their numeric code (§1.4); Parsley keeps the code.
        let resetPassword = try RelayMutation.field(
            "resetPassword", input: email, output: ok,
            resolve: { input, auth, _ in
                let request = try PasswordResetRequest(decoding: .object(["email": input["email"] ?? .null]))
                try await services.users.emails.requestPasswordReset(request, mountURL: RequestInfo.current.mountURL ?? "", auth: auth)
                return ["ok": Map.bool(true)]
            })
        let confirmResetPassword = try RelayMutation.field(
            "confirmResetPassword",
            input: [
                "username": InputObjectField(type: GraphQLNonNull(GraphQLString)),
                "password": InputObjectField(type: GraphQLNonNull(GraphQLString)),
                "token": InputObjectField(type: GraphQLNonNull(GraphQLString)),
            ],
            output: ok,
            resolve: { input, _, _ in
                let (username, password, token) = (
                    input["username"]?.stringValue ?? "", input["password"]?.stringValue ?? "", input["token"]?.stringValue ?? ""
                )
                guard !username.isEmpty else { throw ParseError(.init(rawValue: 200), "you must provide a username") }
                guard !password.isEmpty else { throw ParseError(.init(rawValue: 201), "you must provide a password") }
                guard !token.isEmpty else { throw ParseError(.otherCause, "you must provide a token") }
                switch try await services.users.emails.resetPassword(token: token, username: username, newPassword: password) {
                case .valid: return ["ok": Map.bool(true)]
                case .invalid: throw ParseError(.otherCause, "Failed to reset password: username / email or token is invalid")
                case .expired: throw ParseError(.otherCause, "The password reset link has expired")
                }
            })
        let sendVerificationEmail = try RelayMutation.field(
            "sendVerificationEmail", input: email, output: ok,
            resolve: { input, _, _ in
                let request = try VerificationEmailRequest(decoding: .object(["email": input["email"] ?? .null]))
                try await services.users.emails.requestVerificationEmail(request, mountURL: RequestInfo.current.mountURL ?? "")
                return ["ok": Map.bool(true)]
            })
        let challenge = try RelayMutation.field(
            "challenge",
            input: [
                "username": InputObjectField(type: GraphQLString), "password": InputObjectField(type: GraphQLString),
                "authData": InputObjectField(type: GraphQLScalars.object), "challengeData": InputObjectField(type: GraphQLScalars.object),
            ],
            output: ["challengeData": GraphQLScalars.object],
            resolve: { input, auth, _ in
                var body = input
                body["clientMutationId"] = nil
                let answer = try await services.users.challenge(try Challenge(decoding: .object(body)), auth: auth)
                guard let data = answer["challengeData"], data != .null else { return [:] }
                return ["challengeData": MapJSON.map(data)]
            })
        return [
            ("signUp", signUp), ("challenge", challenge), ("logInWith", logInWith), ("logIn", logIn), ("logOut", logOut),
            ("resetPassword", resetPassword),
            ("confirmResetPassword", confirmResetPassword), ("sendVerificationEmail", sendVerificationEmail),
        ]
    }

    /// The viewer of a sign-up or log-in answer (`sessionToken` and `objectId`), its user read only when `viewer.user`
    /// is selected.
    static func viewer(
        _ answer: [String: JSONValue], _ info: GraphQLResolveInfo, _ auth: Auth, _ services: GraphQLServices
    ) async throws -> ViewerValue {
        guard let token = answer["sessionToken"]?.stringValue, let userId = answer["objectId"]?.stringValue else {
            throw ParseError(.internalServerError, "Internal server error")
        }
        let read = Selections.names(under: "viewer", info).contains("user")
        let viewer = try await viewer(token: token, userId: userId, read: read, auth, services)
        // What the auth adapters answered (MFA's recovery codes, ...), as `User.authDataResponse`.
        guard let response = answer["authDataResponse"], let user = viewer.user else { return viewer }
        var fields = user.fields
        fields["authDataResponse"] = response
        return ViewerValue(sessionToken: token, user: ParseObjectValue(className: "_User", fields: fields))
    }

    /// A viewer: the user is read with a get as that user (its ACL, protected fields and triggers apply), as Parse
    /// Server does since the viewer fix of 2020, and shown as `GET /users/me` shows it.
    static func viewer(token: String, userId: String, read: Bool, _ caller: Auth, _ services: GraphQLServices) async throws -> ViewerValue {
        guard read else { return ViewerValue(sessionToken: token, user: nil) }
        let roles = try await services.roles.roleNames(forUser: userId)
        let auth = Auth(isMaster: false, userId: userId, roles: roles, installationId: caller.installationId, sessionToken: token)
        let user = try await services.queries.get("_User", objectId: userId, FindOptions(), auth: auth, triggers: true)
        return ViewerValue(sessionToken: token, user: ParseObjectValue(className: "_User", fields: services.users.shape(user, auth: auth)))
    }
}
