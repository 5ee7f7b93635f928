import ParsleyCore
import ParsleyStorage
import Testing

/// The exact statements the storage layer sends PostgreSQL for representative Parse queries: text and binds.
/// A change here changes what every query runs; update the golden text only on purpose.
@Suite("Golden SQL: PostgreSQL")
struct PostgresGoldenSQLTests {
    func whereClause(_ whereValue: JSONValue, on schema: ClassSchema = GoldenFixture.post, readPrincipals: [String]? = nil) throws -> GoldenSQL {
        try GoldenFixture.whereClause(whereValue, GoldenFixture.postgres, on: schema, readPrincipals: readPrincipals)
    }

    func select(_ spec: FindSpec) throws -> GoldenSQL {
        try GoldenFixture.select(spec, GoldenFixture.postgres)
    }

    @Test("equality on strings, numbers and booleans (booleans stored as 1/0)")
    func equality() throws {
        let expected = GoldenSQL(
            #"((t0."published" = $1) AND (t0."title" = $2) AND (t0."views" = $3))"#,
            [.integer(1), .text("Hello"), .integer(3)])
        #expect(try whereClause(GoldenQueries.equality) == expected)
    }

    @Test("comparisons on numbers and dates")
    func comparisons() throws {
        let expected = GoldenSQL(
            #"((t0."publishedAt" > $1) AND (t0."views" >= $2) AND (t0."views" < $3))"#,
            [.text("2024-01-02T03:04:05.000Z"), .integer(10), .integer(100)])
        #expect(try whereClause(GoldenQueries.comparisons) == expected)
    }

    @Test("$ne also matches a missing field; equality with null is IS NULL")
    func notEqualAndNull() throws {
        let expected = GoldenSQL(
            #"((t0."body" IS NULL) AND ((t0."title" IS NULL OR t0."title" <> $1)))"#,
            [.text("Draft")])
        #expect(try whereClause(GoldenQueries.notEqualAndNull) == expected)
    }

    @Test("a long $in list is one bound parameter")
    func inList() throws {
        let expected = GoldenSQL(
            #"(t0."title" IN (SELECT t1.v FROM jsonb_array_elements_text($1) AS t1(v)))"#,
            [.json("[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\"]")])
        #expect(try whereClause(GoldenQueries.inList) == expected)
    }

    @Test("a long $nin list of numbers is one bound parameter and matches a missing field")
    func notInList() throws {
        let expected = GoldenSQL(
            #"(t0."views" IS NULL OR NOT (t0."views" IN (SELECT t1.v::double precision FROM jsonb_array_elements_text($1) AS t1(v))))"#,
            [.json("[1,2,3,4,5,6,7,8,9,10]")])
        #expect(try whereClause(GoldenQueries.notInList) == expected)
    }

    @Test("$exists")
    func exists() throws {
        let expected = GoldenSQL(
            #"((t0."body" IS NULL) AND (t0."title" IS NOT NULL))"#,
            [])
        #expect(try whereClause(GoldenQueries.exists) == expected)
    }

    @Test("$regex with options")
    func regex() throws {
        let expected = GoldenSQL(
            #"(t0."title" ~ $1)"#,
            [.text("(?i)^Hel+o")])
        #expect(try whereClause(GoldenQueries.regex) == expected)
    }

    @Test("dotted keys into an Object field compare like with like")
    func dottedKeys() throws {
        let expected = GoldenSQL(
            #"((parsley_text((t0."meta" #> ARRAY[$1, $2]::text[])) = $3) AND (parsley_num((t0."meta" #> ARRAY[$4]::text[])) = $5) AND "#
                + #"((parsley_json_type(t0."meta" #> ARRAY[$6]::text[]) IN ('integer','real') AND parsley_num((t0."meta" #> ARRAY[$7]::text[])) > "#
                + #"$8)))"#,
            [.text("owner"), .text("name"), .text("ann"), .text("rank"), .integer(2), .text("score"), .text("score"), .real(1.5)])
        #expect(try whereClause(GoldenQueries.dottedKeys) == expected)
    }

    @Test("a scalar on an array field matches an element")
    func arrayElement() throws {
        let expected = GoldenSQL(
            #"EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(t0."tags") = 'array' THEN t0."tags" ELSE '[]'::jsonb END) AS t1(v) "#
                + #"WHERE (parsley_json_type(t1.v) = 'text' AND parsley_text(t1.v) = $1))"#,
            [.text("swift")])
        #expect(try whereClause(GoldenQueries.arrayElement) == expected)
    }

    @Test("$all on an array counts distinct listed elements (one bound list)")
    func arrayAll() throws {
        let expected = GoldenSQL(
            #"((SELECT COUNT(DISTINCT parsley_text(t1.v)) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(t0."tags") = 'array' THEN t0."tags" "#
                + #"ELSE '[]'::jsonb END) AS t1(v) WHERE parsley_json_type(t1.v) = 'text' AND parsley_text(t1.v) IN (SELECT t2.v FROM "#
                + #"jsonb_array_elements_text($1) AS t2(v))) = $2)"#,
            [.json("[\"swift\",\"sql\"]"), .integer(2)])
        #expect(try whereClause(GoldenQueries.arrayAll) == expected)
    }

    @Test("$containedBy: no element outside the bound list")
    func arrayContainedBy() throws {
        let expected = GoldenSQL(
            #"NOT EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(t0."tags") = 'array' THEN t0."tags" ELSE '[]'::jsonb END) AS "#
                + #"t1(v) WHERE NOT ((parsley_json_type(t1.v) = 'text' AND parsley_text(t1.v) IN (SELECT t2.v FROM jsonb_array_elements_text($1) "#
                + #"AS t2(v)))))"#,
            [.json("[\"swift\",\"sql\",\"parse\"]")])
        #expect(try whereClause(GoldenQueries.arrayContainedBy) == expected)
    }

    @Test("a pointer matches by objectId")
    func pointer() throws {
        let expected = GoldenSQL(
            #"t0."author" = $1"#,
            [.text("u1")])
        #expect(try whereClause(GoldenQueries.pointer) == expected)
    }

    @Test("$relatedTo reads the owner's join table")
    func relatedTo() throws {
        let expected = GoldenSQL(
            #"t0."objectId" IN (SELECT relatedId FROM "_Join:likes:Post" WHERE owningId = $1)"#,
            [.text("p1")])
        #expect(try whereClause(GoldenQueries.relatedTo, on: GoldenFixture.user) == expected)
    }

    @Test("a pointer on a Relation field matches through the join table")
    func relationField() throws {
        let expected = GoldenSQL(
            #"t0."objectId" IN (SELECT owningId FROM "_Join:likes:Post" WHERE relatedId = $1)"#,
            [.text("u2")])
        #expect(try whereClause(GoldenQueries.relationField) == expected)
    }

    @Test("$or and $and nest in parentheses")
    func orAnd() throws {
        let expected = GoldenSQL(
            #"((t0."title" = $1) OR (((t0."views" > $2) AND (t0."views" < $3))))"#,
            [.text("a"), .integer(1), .integer(5)])
        #expect(try whereClause(GoldenQueries.orAnd) == expected)
    }

    @Test("$inQuery is a sub-select of ids")
    func inQuery() throws {
        let expected = GoldenSQL(
            #"t0."author" IN (SELECT t1."objectId" FROM "_User" AS t1 WHERE t1."age" >= $1)"#,
            [.integer(18)])
        #expect(try whereClause(GoldenQueries.inQuery) == expected)
    }

    @Test("$select is a sub-select of the key's values")
    func selectSubquery() throws {
        let expected = GoldenSQL(
            #"t0."title" IN (SELECT t1."authorName" FROM "Comment" AS t1 WHERE t1."authorName" = $1 AND t1."authorName" IS NOT NULL)"#,
            [.text("ann")])
        #expect(try whereClause(GoldenQueries.select) == expected)
    }

    @Test("$nearSphere with $maxDistanceInRadians")
    func nearSphere() throws {
        let expected = GoldenSQL(
            #"parsley_geo_distance(t0."location", $1, $2) <= $3"#,
            [.real(40.0), .real(-30.0), .real(0.5)])
        #expect(try whereClause(GoldenQueries.nearSphere) == expected)
    }

    @Test("$within $box")
    func withinBox() throws {
        let expected = GoldenSQL(
            #"parsley_num((t0."location" #> ARRAY[$1]::text[])) BETWEEN $2 AND $3 AND parsley_num((t0."location" #> ARRAY[$4]::text[])) BETWEEN $5 "#
                + #"AND $6"#,
            [.text("latitude"), .real(10.0), .real(30.0), .text("longitude"), .real(20.0), .real(40.0)])
        #expect(try whereClause(GoldenQueries.withinBox) == expected)
    }

    @Test("$text")
    func text() throws {
        let expected = GoldenSQL(
            #"parsley_text_score(t0."body"::text, $1, $2) > 0"#,
            [.text("swift server"), .integer(1)])
        #expect(try whereClause(GoldenQueries.text) == expected)
    }

    @Test("the read filter holds one of the caller's principals")
    func readFilter() throws {
        let expected = GoldenSQL(
            #"((t0."published" = $1) AND (t0."title" = $2) AND (t0."views" = $3)) AND (t0."_rperm" IS NULL OR jsonb_exists_any(t0."_rperm", "#
                + #"ARRAY[$4, $5, $6]::text[]))"#,
            [.integer(1), .text("Hello"), .integer(3), .text("*"), .text("u1"), .text("role:Admin")])
        #expect(try whereClause(GoldenQueries.equality, readPrincipals: ["*", "u1", "role:Admin"]) == expected)
    }

    @Test("a page of a find: keys, order (also on a dotted key), limit, skip, read filter")
    func findPage() throws {
        let expected = GoldenSQL(
            #"SELECT t0."objectId", t0."createdAt", t0."updatedAt", t0."_rperm", t0."_wperm", t0."title", t0."views" FROM "Post" AS t0 WHERE "#
                + #"t0."published" = $1 AND (t0."_rperm" IS NULL OR jsonb_exists_any(t0."_rperm", ARRAY[$2, $3]::text[])) ORDER BY t0."views" DESC,"#
                + #" NULLIF((t0."meta" #> ARRAY[$4]::text[]), 'null'::jsonb) ASC LIMIT 20 OFFSET 40"#,
            [.integer(1), .text("*"), .text("u1"), .text("rank")])
        #expect(try select(try GoldenFinds.page()) == expected)
    }

    @Test("$nearSphere without an order sorts by distance; skip without limit")
    func findNearest() throws {
        let expected = GoldenSQL(
            #"SELECT t0."objectId", t0."createdAt", t0."updatedAt", t0."_rperm", t0."_wperm", t0."location" FROM "Post" AS t0 WHERE t0."location" "#
                + #"IS NOT NULL ORDER BY parsley_geo_distance(t0."location", $1, $2) ASC OFFSET 5"#,
            [.real(1.0), .real(2.0)])
        #expect(try select(try GoldenFinds.nearest()) == expected)
    }

    @Test("$text with its score as a column and the order")
    func findScored() throws {
        let expected = GoldenSQL(
            #"SELECT t0."objectId", t0."createdAt", t0."updatedAt", t0."_rperm", t0."_wperm", t0."body", parsley_text_score(t0."body"::text, $1, "#
                + #"$2) FROM "Post" AS t0 WHERE parsley_text_score(t0."body"::text, $3, $4) > 0 ORDER BY parsley_text_score(t0."body"::text, $5, "#
                + #"$6) DESC LIMIT 10"#,
            [.text("swift server"), .integer(1), .text("swift server"), .integer(1), .text("swift server"), .integer(1)])
        #expect(try select(try GoldenFinds.scored()) == expected)
    }
}
