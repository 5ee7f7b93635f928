import Foundation
import HTTPTypes
import NIOCore
import ParsleyCore
import ParsleyDomain
import Testing

@Suite("GraphQL users, cloud code, files and schema")
struct GraphQLUsersTests {
    static let options = TestServer.options { $0.mountGraphQL = true }

    static var cloud: CloudCode {
        var cloud = CloudCode()
        cloud.define("hello") { req in
            ["greeting": .string("hello \(req.params["name"]?.stringValue ?? "nobody")"), "user": req.caller.userId.map(JSONValue.string) ?? .null]
                as JSONValue
        }
        cloud.define("fails") { _ -> JSONValue in
            throw ParseError(.scriptFailed, "bad call")
        }
        return cloud
    }

    static let signUp = """
        mutation SignUp($input: SignUpInput!) {
          signUp(input: $input) { clientMutationId viewer { sessionToken user { objectId username email } } }
        }
        """

    @Test("signUp answers a viewer whose token works for viewer; a wrong password is 101; logOut ends the session", arguments: Backend.all)
    func users(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let signedUp = try await p.graphQL(
                Self.signUp, ["input": ["clientMutationId": "s1", "fields": ["username": "ann", "password": "secret1", "email": "ann@example.com"]]])
            #expect(signedUp.status == 200, "\(signedUp.json)")
            #expect(signedUp.data("signUp", "clientMutationId") == "s1")
            let token = try #require(signedUp.data("signUp", "viewer", "sessionToken")?.stringValue, "\(signedUp.json)")
            let id = try #require(signedUp.data("signUp", "viewer", "user", "objectId")?.stringValue)
            #expect(signedUp.data("signUp", "viewer", "user", "username") == "ann")
            // The same user REST knows, and the token is a real session.
            let me = try await p.request(.get, "/users/me", master: false, extra: ["X-Parse-Session-Token": token])
            #expect(me["objectId"] == .string(id), "\(me.json)")

            let viewer = try await p.graphQL("{ viewer { sessionToken user { objectId username email } } }", token: token)
            #expect(viewer.data("viewer", "sessionToken") == .string(token), "\(viewer.json)")
            #expect(viewer.data("viewer", "user", "objectId") == .string(id))
            #expect(viewer.data("viewer", "user", "email") == "ann@example.com")

            let anonymous = try await p.graphQL("{ viewer { sessionToken } }")
            #expect(anonymous.status == 200)
            #expect(anonymous.json["data"] == .null, "\(anonymous.json)")
            #expect(anonymous.graphQLError.message == "Invalid session token")
            #expect(anonymous.graphQLError.code == 209)

            let duplicate = try await p.graphQL(Self.signUp, ["input": ["fields": ["username": "ann", "password": "other"]]])
            #expect(duplicate.graphQLError.code == 202, "\(duplicate.json)")

            let logIn = """
                mutation LogIn($input: LogInInput!) { logIn(input: $input) { viewer { sessionToken user { username } } } }
                """
            let wrong = try await p.graphQL(logIn, ["input": ["username": "ann", "password": "nope"]])
            #expect(wrong.status == 200)
            #expect(wrong.graphQLError.message == "Invalid username/password.", "\(wrong.json)")
            #expect(wrong.graphQLError.code == 101)
            #expect(wrong.json["data"] == .null)

            let loggedIn = try await p.graphQL(logIn, ["input": ["username": "ann", "password": "secret1"]])
            let second = try #require(loggedIn.data("logIn", "viewer", "sessionToken")?.stringValue, "\(loggedIn.json)")
            #expect(second != token)
            #expect(loggedIn.data("logIn", "viewer", "user", "username") == "ann")

            let out = try await p.graphQL("mutation { logOut(input: {clientMutationId: \"o1\"}) { clientMutationId ok } }", token: second)
            #expect(out.data("logOut") == ["clientMutationId": "o1", "ok": true], "\(out.json)")
            let refused = try await p.graphQL("{ viewer { sessionToken } }", token: second)
            #expect(refused.status == 400, "\(refused.json)")
            #expect(refused["code"] == 209)
            // The first session still works; logging out without a token is still ok.
            #expect(try await p.graphQL("{ viewer { sessionToken } }", token: token).data("viewer", "sessionToken") == .string(token))
            #expect(try await p.graphQL("mutation { logOut(input: {}) { ok } }").data("logOut", "ok") == true)
        }
    }

    @Test("logInWith signs up then logs in an anonymous user; reset and verification requests run the REST flows", arguments: Backend.all)
    func logInWith(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let query = """
                mutation With($input: LogInWithInput!) { logInWith(input: $input) { viewer { sessionToken user { objectId } } } }
                """
            let input: JSONValue = ["input": ["authData": ["anonymous": ["id": "00000000-0000-4000-8000-000000000001"]]]]
            let first = try await p.graphQL(query, input)
            let token = try #require(first.data("logInWith", "viewer", "sessionToken")?.stringValue, "\(first.json)")
            let id = try #require(first.data("logInWith", "viewer", "user", "objectId")?.stringValue)
            let again = try await p.graphQL(query, input)
            #expect(again.data("logInWith", "viewer", "user", "objectId") == .string(id), "\(again.json)")
            #expect(again.data("logInWith", "viewer", "sessionToken") != .string(token))
            let stored = try await p.get("_User", id)
            #expect(stored["authData"]?["anonymous"]?["id"] == "00000000-0000-4000-8000-000000000001", "\(stored.json)")

            // An unknown email answers like a known one, as POST /requestPasswordReset and /verificationEmailRequest do.
            let reset = try await p.graphQL("mutation { resetPassword(input: {email: \"x@example.com\"}) { ok } }")
            #expect(reset.data("resetPassword", "ok") == true, "\(reset.json)")
            #expect(try await p.request(.post, "/requestPasswordReset", ["email": "x@example.com"], master: false).status == 200)
            let verify = try await p.graphQL("mutation { sendVerificationEmail(input: {email: \"x@example.com\"}) { ok } }")
            #expect(verify.data("sendVerificationEmail", "ok") == true, "\(verify.json)")
            // A bad request is refused with REST's code and words.
            for (mutation, path) in [("resetPassword", "/requestPasswordReset"), ("sendVerificationEmail", "/verificationEmailRequest")] {
                let empty = try await p.graphQL("mutation { \(mutation)(input: {email: \"\"}) { ok } }")
                let rest = try await p.request(.post, path, ["email": ""], master: false)
                let code = try #require(rest.code, "\(rest.json)")
                #expect(empty.graphQLError.code == .int(Int64(code)), "\(empty.json)")
                #expect(empty.graphQLError.message == rest["error"]?.stringValue)
            }
            let challenge = try await p.graphQL("mutation { challenge(input: {username: \"ann\"}) { challengeData } }")
            let restChallenge = try await p.request(.post, "/challenge", ["username": "ann"], master: false)
            #expect(challenge.graphQLError.message == "You provided username or email, you need to also provide password.", "\(challenge.json)")
            #expect(challenge.graphQLError.code == restChallenge["code"])
            let badToken = try await p.graphQL("mutation { confirmResetPassword(input: {username: \"ann\", password: \"p\", token: \"t\"}) { ok } }")
            #expect(badToken.graphQLError.message == "Failed to reset password: username / email or token is invalid", "\(badToken.json)")
            #expect(badToken.graphQLError.code == -1)
            let confirm = try await p.graphQL("mutation { confirmResetPassword(input: {username: \"\", password: \"p\", token: \"t\"}) { ok } }")
            #expect(confirm.graphQLError.message == "you must provide a username", "\(confirm.json)")
            #expect(confirm.graphQLError.code == 200)
        }
    }

    @Test("callCloudCode runs the function as the caller, and a function's error surfaces its code", arguments: Backend.all)
    func cloudCode(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options, cloud: Self.cloud) { p in
            let signedUp = try await p.graphQL(Self.signUp, ["input": ["fields": ["username": "bob", "password": "secret1"]]])
            let token = try #require(signedUp.data("signUp", "viewer", "sessionToken")?.stringValue, "\(signedUp.json)")
            let id = try #require(signedUp.data("signUp", "viewer", "user", "objectId")?.stringValue)
            let call = """
                mutation Call($params: Object) { callCloudCode(input: {functionName: hello, params: $params, clientMutationId: "c"}) { clientMutationId result } }
                """
            let answer = try await p.graphQL(call, ["params": ["name": "graph"]], token: token)
            #expect(answer.data("callCloudCode", "clientMutationId") == "c", "\(answer.json)")
            #expect(answer.data("callCloudCode", "result") == ["greeting": "hello graph", "user": .string(id)])
            let anonymous = try await p.graphQL(call, ["params": ["name": "x"]])
            #expect(anonymous.data("callCloudCode", "result", "user") == .null, "\(anonymous.json)")

            let failed = try await p.graphQL("mutation { callCloudCode(input: {functionName: fails}) { result } }")
            #expect(failed.status == 200)
            #expect(failed.graphQLError.message == "bad call", "\(failed.json)")
            #expect(failed.graphQLError.code == 141)
            // Only defined functions are enum values: anything else does not validate.
            let unknown = try await p.graphQL("mutation { callCloudCode(input: {functionName: nope}) { result } }")
            #expect(unknown.status == 400, "\(unknown.json)")
        }
    }

    @Test("createFile stores a multipart upload that REST serves back", arguments: Backend.all)
    func createFile(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let signedUp = try await p.graphQL(Self.signUp, ["input": ["fields": ["username": "cy", "password": "secret1"]]])
            let token = try #require(signedUp.data("signUp", "viewer", "sessionToken")?.stringValue, "\(signedUp.json)")
            let operations = JSONWriter.string([
                "query": "mutation CreateFile($input: CreateFileInput!) { createFile(input: $input) { clientMutationId fileInfo { name url } } }",
                "variables": ["input": ["clientMutationId": "c1", "upload": .null]],
            ])
            let boundary = "----parsley-test-boundary"
            var body = "--\(boundary)\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n\(operations)\r\n"
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"map\"\r\n\r\n{\"1\":[\"variables.input.upload\"]}\r\n"
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"1\"; filename=\"myFileName.txt\"\r\nContent-Type: text/plain\r\n\r\n"
            body += "My File Content\r\n--\(boundary)--\r\n"
            var headers = p.headers(master: false, extra: ["X-Parse-Session-Token": token])
            headers[.contentType] = "multipart/form-data; boundary=\(boundary)"
            let created = try await p.raw(.post, "/graphql", body: body, headers: headers)
            #expect(created.status == 200, "\(created.json)")
            #expect(created.data("createFile", "clientMutationId") == "c1")
            let name = try #require(created.data("createFile", "fileInfo", "name")?.stringValue, "\(created.json)")
            #expect(name.hasSuffix("_myFileName.txt"))
            let url = try #require(created.data("createFile", "fileInfo", "url")?.stringValue)
            #expect(url.hasSuffix("/files/\(TestServer.appId)/\(name)"), "\(url)")
            let read = try await p.raw(.get, "\(p.mount)/files/\(TestServer.appId)/\(name)", headers: HTTPFields())
            #expect(read.status == 200)
            #expect(read.json == "My File Content")

            // Public uploads are off by default, as on POST /files.
            headers[HTTPField.Name("X-Parse-Session-Token")!] = nil
            let refused = try await p.raw(.post, "/graphql", body: body, headers: headers)
            #expect(refused.graphQLError.code == 130, "\(refused.json)")
            #expect(refused.graphQLError.message == "File upload by public is disabled.")
        }
    }

    @Test("createFile refuses a file over the upload limit with Parse Server's GraphQL message")
    func createFileTooLarge() async throws {
        let options = TestServer.options {
            $0.mountGraphQL = true
            $0.maxRequestBytes = 1024
        }
        try await TestServer.with(backend: .sqlite, options) { p in
            let operations = JSONWriter.string([
                "query": "mutation CreateFile($input: CreateFileInput!) { createFile(input: $input) { fileInfo { name } } }",
                "variables": ["input": ["upload": .null]],
            ])
            let boundary = "b0undary"
            var body = "--\(boundary)\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n\(operations)\r\n"
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"map\"\r\n\r\n{\"0\":[\"variables.input.upload\"]}\r\n"
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"0\"; filename=\"big.txt\"\r\nContent-Type: text/plain\r\n\r\n"
            body += String(repeating: "x", count: 2000) + "\r\n--\(boundary)--\r\n"
            var headers = p.headers(master: true)
            headers[.contentType] = "multipart/form-data; boundary=\(boundary)"
            let refused = try await p.raw(.post, "/graphql", body: body, headers: headers)
            #expect(refused.status == 200, "\(refused.json)")
            #expect(refused.graphQLError.message == "File truncated as it exceeds the 1024 byte size limit.", "\(refused.json)")
            // A map naming no file is the client's error.
            let broken = body.replacingOccurrences(of: "{\"0\":", with: "{\"7\":")
            #expect(try await p.raw(.post, "/graphql", body: broken, headers: headers).status == 400)
        }
    }

    @Test("class, classes, createClass, updateClass and deleteClass need the master key and run as /schemas", arguments: Backend.all)
    func schema(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            let create = """
                mutation { createClass(input: {name: "Game", schemaFields: {addStrings: [{name: "title"}], addNumbers: [{name: "score"}],
                  addPointers: [{name: "owner", targetClassName: "_User"}]}}) {
                  class { name schemaFields { name __typename ... on SchemaPointerField { targetClassName } } } } }
                """
            let denied = try await p.graphQL(create)
            #expect(denied.graphQLError.message == "unauthorized: master key is required", "\(denied.json)")
            #expect(denied.graphQLError.code == 119)
            let created = try await p.graphQL(create, master: true)
            #expect(created.data("createClass", "class", "name") == "Game", "\(created.json)")
            let fields = created.data("createClass", "class", "schemaFields")?.arrayValue ?? []
            #expect(fields.contains(["name": "title", "__typename": "SchemaStringField"]), "\(fields)")
            #expect(fields.contains(["name": "score", "__typename": "SchemaNumberField"]))
            #expect(fields.contains(["name": "owner", "__typename": "SchemaPointerField", "targetClassName": "_User"]))
            #expect(fields.contains(["name": "ACL", "__typename": "SchemaACLField"]))
            #expect(fields.contains(["name": "objectId", "__typename": "SchemaStringField"]))
            // The same class REST's /schemas shows.
            let rest = try await p.request(.get, "/schemas/Game")
            #expect(rest["fields"]?["score"]?["type"] == "Number", "\(rest.json)")

            let duplicated = try await p.graphQL(
                "mutation { updateClass(input: {name: \"Game\", schemaFields: {addStrings: [{name: \"title\"}]}}) { class { name } } }", master: true)
            #expect(duplicated.graphQLError.message == "Duplicated field name: title", "\(duplicated.json)")
            #expect(duplicated.graphQLError.code == 105)
            let updated = try await p.graphQL(
                """
                mutation { updateClass(input: {name: "Game", schemaFields: {addBooleans: [{name: "done"}], remove: [{name: "score"}, {name: "ghost"}]}}) {
                  class { schemaFields { name } } } }
                """, master: true)
            let names = updated.data("updateClass", "class", "schemaFields")?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(names.contains("done") && !names.contains("score"), "\(updated.json)")

            let one = try await p.graphQL("{ class(name: \"Game\") { name } }", master: true)
            #expect(one.data("class", "name") == "Game", "\(one.json)")
            let missing = try await p.graphQL("{ class(name: \"Nope\") { name } }", master: true)
            #expect(missing.graphQLError.message == "Class Nope does not exist.", "\(missing.json)")
            #expect(missing.graphQLError.code == 103)
            let all = try await p.graphQL("{ classes { name } }", master: true)
            let classNames = all.data("classes")?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(classNames.contains("Game") && classNames.contains("_User"), "\(all.json)")
            #expect(try await p.graphQL("{ classes { name } }").graphQLError.code == 119)

            _ = try await p.createId("Game", ["title": "one"])
            let notEmpty = try await p.graphQL("mutation { deleteClass(input: {name: \"Game\"}) { class { name } } }", master: true)
            #expect(notEmpty.graphQLError.code == 255, "\(notEmpty.json)")
            #expect(try await p.request(.delete, "/purge/Game").status == 200)
            let deleted = try await p.graphQL(
                "mutation { deleteClass(input: {name: \"Game\"}) { class { name schemaFields { name } } } }", master: true)
            #expect(deleted.data("deleteClass", "class", "name") == "Game", "\(deleted.json)")
            #expect(try await p.request(.get, "/schemas/Game").code == 103)
        }
    }

    @Test("the read-only master key reads schemas and changes none")
    func readOnlySchema() async throws {
        let options = TestServer.options {
            $0.mountGraphQL = true
            $0.readOnlyMasterKey = "read-only"
        }
        try await TestServer.with(backend: .sqlite, options) { p in
            var headers = p.headers(master: false, extra: ["X-Parse-Master-Key": "read-only"])
            headers[.contentType] = "application/json"
            let read = try await p.raw(.post, "/graphql", body: JSONWriter.string(["query": "{ classes { name } }"]), headers: headers)
            #expect(read.data("classes")?.arrayValue?.isEmpty == false, "\(read.json)")
            let write = try await p.raw(
                .post, "/graphql", body: JSONWriter.string(["query": "mutation { createClass(input: {name: \"X\"}) { class { name } } }"]),
                headers: headers)
            #expect(write.graphQLError.message == "read-only masterKey isn't allowed to create a schema.", "\(write.json)")
            #expect(write.graphQLError.code == 119)
            // Other mutations are refused as REST refuses the key's POSTs, and nothing is written.
            _ = try await p.createId("GameScore", ["score": 1])
            let create = try await p.raw(
                .post, "/graphql",
                body: JSONWriter.string(["query": "mutation { createGameScore(input: {fields: {score: 2}}) { gameScore { objectId } } }"]),
                headers: headers)
            #expect(create.graphQLError.message == "read-only masterKey isn't allowed to perform the create operation.", "\(create.json)")
            let signUp = try await p.raw(
                .post, "/graphql",
                body: JSONWriter.string([
                    "query": "mutation { signUp(input: {fields: {username: \"ro\", password: \"pw\"}}) { viewer { sessionToken } } }"
                ]),
                headers: headers)
            #expect(signUp.graphQLError.code == 119, "\(signUp.json)")
            #expect(try await p.find("GameScore").results.count == 1)
            #expect(try await p.find("_User").results.isEmpty)
        }
    }
}
