import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// What the app-flow tests share: loading a `Schemas/*.json` file the way `parsley schema apply` does against a
/// running server, uploads, dates and per-user requests.
extension ParseClient {
    /// The repository's `Schemas/` folder.
    static var schemasDir: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Schemas")
    }

    /// The schemas the server has now, keyed by class name.
    func currentSchemas() async throws -> [String: ClassSchema] {
        let list = try await request(.get, "/schemas")
        guard list.status == 200 else { throw Failure("GET /schemas: \(list.status) \(list.json)") }
        var all: [String: ClassSchema] = [:]
        for item in list.results { if let s = ClassSchema(json: item) { all[s.className] = s } }
        return all
    }

    /// Plans `Schemas/<name>` against the server and sends each step through `/schemas`; returns the plan.
    @discardableResult
    func applySchema(_ name: String) async throws -> SchemaMigration {
        let text = try String(contentsOf: Self.schemasDir.appendingPathComponent(name), encoding: .utf8)
        let migration = try SchemaMigration(try SchemaFile(name: "Schemas/\(name)", text: text), current: try await currentSchemas())
        for step in migration.steps {
            let r = try await request(step.creates ? .post : .put, "/schemas/\(step.change.className)", step.change.body)
            guard r.status == 200 else { throw Failure("\(name): \(step.summary): \(r.status) \(r.json)") }
        }
        return migration
    }

    /// Uploads bytes as the user (`POST /files/:name`) and returns the File value to store in an object.
    func uploadFile(_ token: String, _ name: String, _ text: String, contentType: String = "image/jpeg") async throws -> JSONValue {
        var h = headers(master: false, extra: ["X-Parse-Session-Token": token])
        h[.contentType] = contentType
        let r = try await raw(.post, mount + "/files/\(name)", body: text, headers: h)
        guard r.status == 201, let stored = r["name"]?.stringValue, r["url"]?.stringValue != nil else {
            throw Failure("upload failed: \(r.status) \(r.json)")
        }
        return ["__type": "File", "name": .string(stored)]
    }

    /// Makes a user findable by others (users are private by default): ACL public read, own write.
    func makePublic(_ user: (id: String, token: String)) async throws {
        let acl: JSONValue = ["*": ["read": true], user.id: ["read": true, "write": true]]
        let r = try await asUser(user.token, .put, "/users/\(user.id)", ["ACL": acl])
        guard r.status == 200 else { throw Failure("ACL update failed: \(r.status) \(r.json)") }
    }

    /// Creates an object as the user (expects 201) and returns its id.
    func createAs(_ token: String, _ className: String, _ body: JSONValue) async throws -> String {
        let r = try await asUser(token, .post, "/classes/\(className)", body)
        guard r.status == 201, let id = r["objectId"]?.stringValue else { throw Failure("create \(className) failed: \(r.status) \(r.json)") }
        return id
    }

    /// objectIds of a find as the user (expects 200), in the server's order.
    func idsAs(_ token: String?, _ className: String, where w: JSONValue? = nil, _ params: [String: String] = [:]) async throws -> [String] {
        let r = try await findAs(token, className, where: w, params)
        guard r.status == 200 else { throw Failure("find \(className) failed: \(r.status) \(r.json)") }
        return r.results.compactMap { $0["objectId"]?.stringValue }
    }

    func pointer(_ className: String, _ id: String) -> JSONValue {
        ["__type": "Pointer", "className": .string(className), "objectId": .string(id)]
    }
}

extension JSONValue {
    /// `{"__type":"Date","iso":...}` for a time relative to now, or for an ISO string.
    static func date(_ offset: TimeInterval = 0) -> JSONValue {
        date(iso: ParseDate(milliseconds: Int64((Date().timeIntervalSince1970 + offset) * 1000)).iso)
    }

    static func date(iso: String) -> JSONValue { ["__type": "Date", "iso": .string(iso)] }

    /// A private ACL for one user.
    static func only(_ userId: String) -> JSONValue { .object([userId: ["read": true, "write": true]]) }
}
