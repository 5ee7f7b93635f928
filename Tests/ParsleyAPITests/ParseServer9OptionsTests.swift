import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

@testable import ParsleyServer

/// Parse Server 9 options on the wire: `enableSanitizedErrorResponse` (refusals say `Permission denied`, same code and
/// status) and `protectedFieldsTriggerExempt` (what cloud-code triggers see of protected fields).
@Suite("Parse Server 9 options")
struct ParseServer9OptionsTests {
    /// A class whose creates need the master key, a master-only class, a master-only route, a protected field in a
    /// query and `/users/me` without a session: each refused with the generic or the detailed message.
    static func refusals(_ p: ParseClient) async throws -> [String: Reply] {
        let schema: JSONValue = [
            "className": "Locked", "fields": ["secret": ["type": "String"]],
            "classLevelPermissions": [
                "find": ["*": true], "get": ["*": true], "create": [:], "update": [:], "delete": [:], "addField": [:],
                "protectedFields": ["*": ["secret"]],
            ],
        ]
        #expect(try await p.request(.post, "/schemas/Locked", schema).status == 200)
        var replies: [String: Reply] = [:]
        replies["clp"] = try await p.create("Locked", ["secret": "s"], master: false)
        replies["masterOnlyClass"] = try await p.find("_JobStatus", master: false)
        replies["masterOnlyRoute"] = try await p.request(.get, "/schemas", master: false)
        replies["protectedQuery"] = try await p.find("Locked", where: ["secret": "s"], master: false)
        replies["me"] = try await p.request(.get, "/users/me", master: false)
        let batch = try await p.request(
            .post, "/batch", ["requests": [["method": "POST", "path": "/parse/classes/Locked", "body": ["secret": "t"]]]], master: false)
        replies["batch"] = Reply(status: batch.status, headers: batch.headers, json: batch.json.arrayValue?.first?["error"] ?? .null)
        return replies
    }

    @Test("enableSanitizedErrorResponse true (default): refusals answer Permission denied with their code and status", arguments: Backend.all)
    func sanitized(_ backend: Backend) async throws {
        #expect(ParseServerOptions(applicationId: "a", masterKey: "m").enableSanitizedErrorResponse)
        try await TestServer.with(backend: backend) { p in
            let r = try await Self.refusals(p)
            #expect(r["clp"]?.status == 400 && r["clp"]?.json == ["code": 119, "error": "Permission denied"], "\(r["clp"]!.json)")
            #expect(r["masterOnlyClass"]?.json == ["code": 119, "error": "Permission denied"], "\(r["masterOnlyClass"]!.json)")
            #expect(r["masterOnlyRoute"]?.status == 403 && r["masterOnlyRoute"]?.json == ["error": "Permission denied"])
            #expect(r["protectedQuery"]?.json == ["code": 119, "error": "Permission denied"], "\(r["protectedQuery"]!.json)")
            #expect(r["me"]?.json == ["code": 209, "error": "Permission denied"], "\(r["me"]!.json)")
            #expect(r["batch"]?.json == ["code": 119, "error": "Permission denied"], "\(r["batch"]!.json)")
            // What is not a permission refusal keeps its words.
            #expect(try await p.get("Locked", "nothing-here", master: false).json == ["code": 101, "error": "Object not found."])
        }
    }

    @Test("enableSanitizedErrorResponse false: refusals name their reason, as before Parse Server 8.5", arguments: Backend.all)
    func detailed(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.enableSanitizedErrorResponse = false }) { p in
            let r = try await Self.refusals(p)
            #expect(r["clp"]?.json == ["code": 119, "error": "Permission denied for action create on class Locked."], "\(r["clp"]!.json)")
            #expect(
                r["masterOnlyClass"]?.json
                    == ["code": 119, "error": "Clients aren't allowed to perform the find operation on the _JobStatus collection."])
            #expect(r["masterOnlyRoute"]?.status == 403 && r["masterOnlyRoute"]?.json == ["error": "unauthorized: master key is required"])
            #expect(r["protectedQuery"]?.json == ["code": 119, "error": "This user is not allowed to query secret on class Locked"])
            #expect(r["me"]?.json == ["code": 209, "error": "Invalid session token"])
            #expect(r["batch"]?.json == ["code": 119, "error": "Permission denied for action create on class Locked."])
        }
    }

    /// Cloud code recording what its triggers see of `secret` (`-` for nothing).
    static func recordingCloud(_ log: CloudCodeTests.AfterLog) -> CloudCode {
        var cloud = CloudCode()
        @Sendable func seen(_ object: CloudObject?) -> String { object?["secret", as: String.self] ?? "-" }
        cloud.beforeSave("Vault") { req in log.add("beforeSave \(seen(req.original)) \(seen(req.object))") }
        cloud.afterSave("Vault") { req in log.add("afterSave \(seen(req.original)) \(seen(req.object))") }
        cloud.beforeDelete("Vault") { req in log.add("beforeDelete \(seen(req.object))") }
        return cloud
    }

    @Test(
        "protectedFieldsTriggerExempt false (default): triggers see the caller's view, without protected fields but for those the write sets; true: all",
        arguments: Backend.all)
    func triggerExempt(_ backend: Backend) async throws {
        #expect(!ParseServerOptions(applicationId: "a", masterKey: "m").protectedFieldsTriggerExempt)
        for exempt in [false, true] {
            let log = CloudCodeTests.AfterLog()
            let options = TestServer.options {
                $0.protectedFieldsTriggerExempt = exempt
                $0.protectedFields = ["Vault": ["*": ["secret"]]]
            }
            try await TestServer.with(backend: backend, options, cloud: Self.recordingCloud(log)) { p in
                let id = try await p.createId("Vault", ["secret": "s1", "name": "a", "ACL": ["*": ["read": true, "write": true]]])
                _ = try await log.wait(for: 2)
                let user = try await p.signUp("ann")
                #expect(try await p.asUser(user.token, .put, "/classes/Vault/\(id)", ["name": "b"]).status == 200)
                _ = try await log.wait(for: 4)
                #expect(try await p.asUser(user.token, .put, "/classes/Vault/\(id)", ["secret": "s2"]).status == 200)
                _ = try await log.wait(for: 6)
                #expect(try await p.asUser(user.token, .delete, "/classes/Vault/\(id)").status == 200)
                let seen = try await log.wait(for: 7)
                let hidden = exempt ? "s1" : "-"
                #expect(
                    seen == [
                        // The master key's create sees everything.
                        "beforeSave - s1", "afterSave - s1",
                        // A user's update: the original (and the unchanged saved field) as the user may read them.
                        "beforeSave \(hidden) \(hidden)", "afterSave \(hidden) \(hidden)",
                        // A field the write sets stays in `object`.
                        "beforeSave \(hidden) s2", "afterSave \(hidden) s2",
                        "beforeDelete \(exempt ? "s2" : "-")",
                    ], "exempt \(exempt): \(seen)")
                // Reads are not affected: the user still cannot see it.
                #expect(try await p.create("Vault", ["secret": "x", "ACL": ["*": ["read": true]]]).status == 201)
                let found = try await p.findAs(user.token, "Vault")
                #expect(found.results.allSatisfy { $0["secret"] == nil })
            }
        }
    }

    @Test("the settings reader: Parse Server 9's defaults, and the variables and JSON that change them; bad values refused by name")
    func settings() throws {
        let defaults = try ParseServerOptionsTests.setup([:]).options
        #expect(defaults.enableSanitizedErrorResponse && !defaults.protectedFieldsTriggerExempt)
        #expect(!defaults.aggregationRawValues && !defaults.aggregationRawFieldNames)
        #expect(defaults.files.upload.allowedFileUrlDomains == ["*"])
        let set = try ParseServerOptionsTests.setup([
            "PARSE_SERVER_ENABLE_SANITIZED_ERROR_RESPONSE": "false", "PARSE_SERVER_PROTECTED_FIELDS_TRIGGER_EXEMPT": "true",
            "PARSE_SERVER_QUERY": #"{"aggregationRawValues":true,"aggregationRawFieldNames":true}"#,
            "PARSE_SERVER_FILE_UPLOAD_OPTIONS": #"{"allowedFileUrlDomains":["cdn.example.com"]}"#,
        ]).options
        #expect(!set.enableSanitizedErrorResponse && set.protectedFieldsTriggerExempt)
        #expect(set.aggregationRawValues && set.aggregationRawFieldNames)
        #expect(set.files.upload.allowedFileUrlDomains == ["cdn.example.com"])
        let flat = try ParseServerOptionsTests.setup(["PARSE_SERVER_FILE_UPLOAD_ALLOWED_FILE_URL_DOMAINS": "a.example.com, *.b.example.com"])
        #expect(flat.options.files.upload.allowedFileUrlDomains == ["a.example.com", "*.b.example.com"])
        #expect(
            try ParseServerOptionsTests.setup(["PARSE_SERVER_FILE_UPLOAD_ALLOWED_FILE_URL_DOMAINS": "[]"]).options.files.upload.allowedFileUrlDomains
                == [])
        for (name, value) in [
            ("PARSE_SERVER_QUERY", #"{"aggregationRawValues":"yes"}"#), ("PARSE_SERVER_ENABLE_SANITIZED_ERROR_RESPONSE", "maybe"),
            ("PARSE_SERVER_FILE_UPLOAD_OPTIONS", #"{"allowedFileUrlDomains":"x"}"#),
        ] {
            let message = try ParseServerOptionsTests.refusal([name: value])
            #expect(message.contains(name), "\(name)=\(value): \(message)")
        }
    }
}
