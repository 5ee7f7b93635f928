import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// A class's `FileInput` taking `upload` (a file of the multipart request, stored as `POST /files` stores it), and
/// `User.authDataResponse` on the viewer of a sign-up or log-in, as Parse Server's GraphQL API has them.
@Suite("GraphQL: FileInput uploads and User.authDataResponse")
struct GraphQLFileInputTests {
    static let options = GraphQLTests.options

    /// A multipart GraphQL request: `operations` with the file at `variables.<path>`.
    static func multipart(_ query: String, _ variables: JSONValue, path: String, file: String, content: String) -> (String, String) {
        let operations = JSONWriter.string(["query": .string(query), "variables": variables])
        let boundary = "----parsley-fileinput"
        var body = "--\(boundary)\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n\(operations)\r\n"
        body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"map\"\r\n\r\n{\"1\":[\"variables.\(path)\"]}\r\n"
        body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"1\"; filename=\"\(file)\"\r\nContent-Type: text/plain\r\n\r\n"
        body += "\(content)\r\n--\(boundary)--\r\n"
        return (body, "multipart/form-data; boundary=\(boundary)")
    }

    @Test("create and update with FileInput {upload} store the file; {file} links a stored one; neither is 130", arguments: Backend.all)
    func uploadInFields(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options) { p in
            #expect(try await p.request(.post, "/schemas/Photo", ["className": "Photo", "fields": ["image": ["type": "File"]]]).status == 200)
            let user = try await p.newUser("snap")
            let create = "mutation Make($input: CreatePhotoInput!) { createPhoto(input: $input) { photo { objectId image { name url } } } }"
            let (body, type) = Self.multipart(
                create, ["input": ["fields": ["image": ["upload": .null]]]], path: "input.fields.image.upload", file: "cat.txt", content: "meow")
            var headers = p.headers(master: false, extra: ["X-Parse-Session-Token": user.token])
            headers[.contentType] = type
            let created = try await p.raw(.post, "/graphql", body: body, headers: headers)
            let id = try #require(created.data("createPhoto", "photo", "objectId")?.stringValue, "\(created.json)")
            let name = try #require(created.data("createPhoto", "photo", "image", "name")?.stringValue)
            #expect(name.hasSuffix("_cat.txt"), "\(name)")
            let url = try #require(created.data("createPhoto", "photo", "image", "url")?.stringValue)
            #expect(url.hasSuffix("/files/\(TestServer.appId)/\(name)"))
            // Stored as POST /files stores it: REST reads the object's file and serves its bytes.
            #expect(try await p.get("Photo", id)["image"]?["name"]?.stringValue == name)
            let served = try await p.raw(.get, "\(p.mount)/files/\(TestServer.appId)/\(name)", headers: HTTPFields())
            #expect(served.status == 200 && served.json == "meow")

            // An update with a new upload replaces it; {file: name} links a stored file again.
            let update = "mutation Change($input: UpdatePhotoInput!) { updatePhoto(input: $input) { photo { image { name } } } }"
            let (again, _) = Self.multipart(
                update, ["input": ["id": .string(id), "fields": ["image": ["upload": .null]]]], path: "input.fields.image.upload",
                file: "dog.txt", content: "woof")
            let updated = try await p.raw(.post, "/graphql", body: again, headers: headers)
            #expect(updated.data("updatePhoto", "photo", "image", "name")?.stringValue?.hasSuffix("_dog.txt") == true, "\(updated.json)")
            let linked = try await p.graphQL(
                "mutation { updatePhoto(input: {id: \"\(id)\", fields: {image: {file: \"\(name)\"}}}) { photo { image { name } } } }",
                token: user.token)
            #expect(linked.data("updatePhoto", "photo", "image", "name")?.stringValue == name, "\(linked.json)")
            // Neither `upload` nor `file`: Parse Server's 130.
            let neither = try await p.graphQL("mutation { createPhoto(input: {fields: {image: {}}}) { photo { objectId } } }", token: user.token)
            #expect(neither.graphQLError.code == 130, "\(neither.json)")
            #expect(neither.graphQLError.message == "Invalid file upload.")
            // Public uploads are off by default, for a FileInput as on POST /files.
            headers[HTTPField.Name("X-Parse-Session-Token")!] = nil
            let anonymous = try await p.raw(.post, "/graphql", body: body, headers: headers)
            #expect(anonymous.graphQLError.code == 130, "\(anonymous.json)")
        }
    }

    @Test("signUp and logIn with MFA authData answer the adapter's response as viewer.user.authDataResponse", arguments: Backend.all)
    func authDataResponse(_ backend: Backend) async throws {
        let options = TestServer.options {
            $0.mountGraphQL = true
            $0.accounts.auth = ["mfa": ["enabled": true, "options": ["TOTP"]]]
        }
        try await TestServer.with(backend: backend, options) { p in
            let signUp = try await p.graphQL(
                "mutation SignUp($input: SignUpInput!) { signUp(input: $input) { viewer { sessionToken user { username authDataResponse } } } }",
                [
                    "input": [
                        "fields": [
                            "username": "mfa-user", "password": "secret-pw",
                            "authData": ["mfa": ["secret": .string(MFATests.secret), "token": .string(MFATests.code())]],
                        ]
                    ]
                ])
            let recovery = signUp.data("signUp", "viewer", "user", "authDataResponse")?["mfa"]?["recovery"]?.stringValue
            #expect(recovery?.split(separator: ",").count == 2, "\(signUp.json)")
            // Without an adapter's response (a plain log-in) it is null.
            let other = try await p.graphQL(
                "mutation { signUp(input: {fields: {username: \"plain-user\", password: \"secret-pw\"}}) { viewer { sessionToken } } }")
            #expect(other.data("signUp", "viewer", "sessionToken")?.stringValue != nil, "\(other.json)")
            let plain = try await p.graphQL(
                "mutation { logIn(input: {username: \"plain-user\", password: \"secret-pw\"}) { viewer { user { username authDataResponse } } } }")
            #expect(plain.data("logIn", "viewer", "user", "username") == "plain-user", "\(plain.json)")
            #expect(plain.data("logIn", "viewer", "user", "authDataResponse") == .null, "\(plain.json)")
        }
    }
}
