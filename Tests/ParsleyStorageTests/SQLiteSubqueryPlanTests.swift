import Foundation
import Logging
import ParsleyCore
import ParsleySQLite
import ParsleyStorage
import Testing

/// `field $inQuery` of a whole class (how a session's lookup asks that its user still exists) must look each id up in
/// the class's primary key: a `WHERE 1=1` in the sub-query made SQLite read the whole table into a list first.
@Suite("SQLite sub-query plans")
struct SQLiteSubqueryPlanTests {
    @Test("an $inQuery of every object of a class searches its primary key; with a condition it still answers right")
    func wholeClassSubquery() async throws {
        let system = #""objectId" TEXT PRIMARY KEY, "createdAt" TEXT, "updatedAt" TEXT, "_rperm" TEXT, "_wperm" TEXT"#
        let user = ClassSchema(className: "Person", fields: ["name": .string])
        let session = ClassSchema(className: "Pass", fields: ["token": .string, "user": .pointer("Person")])
        try await TemporarySQLite.with("subquery") { database in
            _ = try await database.write { db in
                try await db.query(SQLFragment(unsafeSQL: #"CREATE TABLE "Person" ("# + system + #", "name" TEXT)"#))
                try await db.query(SQLFragment(unsafeSQL: #"CREATE TABLE "Pass" ("# + system + #", "token" TEXT, "user" TEXT)"#))
                try await db.query(#"CREATE UNIQUE INDEX "Pass_token" ON "Pass" ("token")"#)
                try await db.query(#"INSERT INTO "Person" ("objectId", "name") VALUES ('u1', 'ann'), ('u2', 'bob')"#)
                try await db.query(#"INSERT INTO "Pass" ("objectId", "token", "user") VALUES ('s1', 't1', 'u1'), ('s2', 't2', 'gone')"#)
            }
            func find(_ token: String, people: QueryNode) async throws -> (ids: [String], plan: [String]) {
                let predicate = QueryNode.and([
                    .field(FieldPath(field: "token"), .equals(.string(token))),
                    .field(FieldPath(field: "user"), .inQuery(SubQuery(className: "Person", predicate: people))),
                ])
                let spec = FindSpec(schema: session, predicate: predicate, limit: 1, readPrincipals: nil, schemas: ["Person": user])
                let (statement, _) = try SQLStore.selectStatement(spec, dialect: SQLiteDialect())
                let rows = try await database.read { try await $0.query(statement) }
                return (rows.compactMap { $0.first?.text }, try await TemporarySQLite.plan(database, statement))
            }
            let found = try await find("t1", people: .all)
            #expect(found.ids == ["s1"])
            #expect(!found.plan.isEmpty)
            #expect(!found.plan.contains { $0.contains("LIST SUBQUERY") || ($0.hasPrefix("SCAN") && $0.contains("Person")) }, "\(found.plan)")
            #expect(try await find("t2", people: .all).ids.isEmpty, "the session's user does not exist")
            let named = QueryNode.field(FieldPath(field: "name"), .equals(.string("bob")))
            #expect(try await find("t1", people: named).ids.isEmpty, "ann is not bob")
        }
    }
}
