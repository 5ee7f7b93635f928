import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyStorage
import Testing

/// A compound index's columns follow the order its keys were written in (`{"user": 1, "created_at": -1}` serves
/// "my entries, newest first"; the same keys in name order would not), through `/schemas` and schema files.
@Suite("Schemas: index column order")
struct SchemasIndexOrderTests {
    /// The columns of `index` on `table`, in order, as the database has them.
    static func columns(_ api: ParseAPI, _ backend: Backend, table: String, index: String) async throws -> String {
        let sql =
            backend == .postgres
            ? SQLFragment(unsafeSQL: "SELECT indexdef AS d FROM pg_indexes WHERE indexname = ?", [.text(index)])
            : SQLFragment(unsafeSQL: "SELECT sql AS d FROM sqlite_master WHERE type = 'index' AND name = ?", [.text(index)])
        let rows = try await api.services.store.database.read { try await $0.query(sql) }
        guard case .text(let definition)? = rows.first?.first else { return "" }
        return definition
    }

    /// The parenthesised column list of an index definition, quotes around plain names dropped.
    static func columnList(_ definition: String) -> [String] {
        guard let open = definition.lastIndex(of: "("), let close = definition.lastIndex(of: ")") else { return [] }
        return definition[definition.index(after: open)..<close].split(separator: ",").map {
            let column = $0.trimmingCharacters(in: .whitespaces)
            return column == #""user""# ? column : column.replacingOccurrences(of: "\"", with: "")
        }
    }

    @Test("POST and PUT /schemas: columns in the order written, not by name; the schema file path too", arguments: Backend.all)
    func order(_ backend: Backend) async throws {
        try await TestServer.withAPI(backend: backend) { api, _, p in
            var h = p.headers(master: true)
            h[.contentType] = "application/json"
            let post = try await p.raw(
                .post, "/parse/schemas/Entry",
                body:
                    #"{"fields":{"user":{"type":"String"},"created_at":{"type":"Date"},"mood":{"type":"Number"}},"indexes":{"mine":{"user":1,"#
                    + #""created_at":-1}}}"#,
                headers: h)
            #expect(post.status == 200, "\(post.json)")
            let mine = try await Self.columns(api, backend, table: "Entry", index: "Entry_mine")
            // `("user", "created_at" DESC)` on SQLite, `("user", created_at DESC)` on PostgreSQL.
            #expect(Self.columnList(mine) == [#""user""#, "created_at DESC"], "\(mine)")
            let put = try await p.raw(.put, "/parse/schemas/Entry", body: #"{"indexes":{"by_mood":{"mood":-1,"created_at":1}}}"#, headers: h)
            #expect(put.status == 200, "\(put.json)")
            let byMood = try await Self.columns(api, backend, table: "Entry", index: "Entry_by_mood")
            #expect(Self.columnList(byMood) == ["mood DESC", "created_at"], "\(byMood)")
            // A schema file keeps the order too (Schemas/*.json, `parsley schema apply`).
            let file = try SchemaFile(
                name: "order.json",
                text: #"{"classes":[{"className":"Note","fields":{"z":{"type":"String"},"a":{"type":"Number"}},"indexes":{"za":{"z":1,"a":1}}}]}"#)
            let migration = try SchemaMigration(file, current: api.services.schemas.all())
            for step in migration.steps { _ = try await api.services.schemas.createClass(step.change) }
            let za = try await Self.columns(api, backend, table: "Note", index: "Note_za")
            #expect(Self.columnList(za) == ["z", "a"], "\(za)")
            // On the wire to a running server (`parsley schema apply --server`), the order is written as read.
            let step = try #require(migration.steps.first)
            let sent = JSONWriter.string(step.change.body, keyOrders: step.change.keyOrders)
            #expect(sent.contains(#""za":{"z":1,"a":1}"#), "\(sent)")
        }
    }
}
