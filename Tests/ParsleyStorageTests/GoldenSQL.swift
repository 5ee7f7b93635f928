import ParsleyCore
import ParsleyPostgres
import ParsleySQLite
import ParsleyStorage

/// A statement as a backend receives it: the dialect's rendered text and the values bound to it, in order.
struct GoldenSQL: Equatable, CustomStringConvertible {
    var sql: String
    var binds: [SQLValue]

    init(_ sql: String, _ binds: [SQLValue] = []) {
        self.sql = sql
        self.binds = binds
    }

    var description: String { "\(sql)\n  binds: \(binds)" }
}

/// The classes the golden queries run against, and the compiler and statement builder as the store calls them.
enum GoldenFixture {
    static let post = ClassSchema(
        className: "Post",
        fields: [
            "title": .string, "views": .number, "published": .boolean, "tags": .array, "author": .pointer("_User"),
            "likes": .relation("_User"), "meta": .object, "location": .geoPoint, "publishedAt": .date, "body": .string,
        ])
    static let user = ClassSchema(className: "_User", fields: ["username": .string, "age": .number])
    static let comment = ClassSchema(className: "Comment", fields: ["post": .pointer("Post"), "authorName": .string])
    static let schemas = [post.className: post, user.className: user, comment.className: comment]

    /// Parses a Parse `where` as the query layer does (master key: internal fields allowed).
    static func predicate(_ whereValue: JSONValue, on schema: ClassSchema = post) throws -> QueryNode {
        var parser = QueryParser(allowInternalFields: true, now: ParseDate(milliseconds: 0))
        parser.schemas = schemas
        return try parser.parse(whereValue, className: schema.className)
    }

    /// The predicate `WhereCompiler` builds for a `where` on a class (`Post` unless given; table alias `t0`, as in
    /// a find), with the read filter when `readPrincipals` are given.
    static func whereClause(
        _ whereValue: JSONValue, _ dialect: any SQLDialect, on schema: ClassSchema = post, readPrincipals: [String]? = nil
    ) throws -> GoldenSQL {
        let compiler = WhereCompiler(dialect: dialect, schemas: schemas, readPrincipals: readPrincipals)
        var fragment = try compiler.compile(try predicate(whereValue, on: schema), schema: schema, alias: "t0")
        fragment.append(compiler.readFilter(alias: "t0"))
        return GoldenSQL(dialect.render(fragment), fragment.binds)
    }

    /// The whole SELECT of a find on `Post`.
    static func select(_ spec: FindSpec, _ dialect: any SQLDialect) throws -> GoldenSQL {
        let (fragment, _) = try SQLStore.selectStatement(spec, dialect: dialect)
        return GoldenSQL(dialect.render(fragment), fragment.binds)
    }

    static let sqlite: any SQLDialect = SQLiteDialect()
    static let postgres: any SQLDialect = PostgresDialect()
}

/// The representative `where` values, one per shape the compiler handles; each dialect's suite checks all of them.
enum GoldenQueries {
    static let equality: JSONValue = ["title": "Hello", "views": 3, "published": true]
    static let comparisons: JSONValue = [
        "views": ["$gte": 10, "$lt": 100], "publishedAt": ["$gt": ["__type": "Date", "iso": "2024-01-02T03:04:05.000Z"]],
    ]
    static let notEqualAndNull: JSONValue = ["title": ["$ne": "Draft"], "body": .null]
    static let inList: JSONValue = ["title": ["$in": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]]]
    static let notInList: JSONValue = ["views": ["$nin": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]]
    static let exists: JSONValue = ["title": ["$exists": true], "body": ["$exists": false]]
    static let regex: JSONValue = ["title": ["$regex": "^Hel+o", "$options": "i"]]
    static let dottedKeys: JSONValue = ["meta.rank": 2, "meta.owner.name": "ann", "meta.score": ["$gt": 1.5]]
    static let arrayAll: JSONValue = ["tags": ["$all": ["swift", "sql"]]]
    static let arrayContainedBy: JSONValue = ["tags": ["$containedBy": ["swift", "sql", "parse"]]]
    static let arrayElement: JSONValue = ["tags": "swift"]
    static let pointer: JSONValue = ["author": ["__type": "Pointer", "className": "_User", "objectId": "u1"]]
    /// On `_User`: the users in the `likes` relation of post p1.
    static let relatedTo: JSONValue = ["$relatedTo": ["object": ["__type": "Pointer", "className": "Post", "objectId": "p1"], "key": "likes"]]
    static let relationField: JSONValue = ["likes": ["__type": "Pointer", "className": "_User", "objectId": "u2"]]
    static let orAnd: JSONValue = ["$or": [["title": "a"], ["$and": [["views": ["$gt": 1]], ["views": ["$lt": 5]]]]]]
    static let inQuery: JSONValue = ["author": ["$inQuery": ["className": "_User", "where": ["age": ["$gte": 18]]]]]
    static let select: JSONValue = [
        "title": ["$select": ["query": ["className": "Comment", "where": ["authorName": "ann"]], "key": "authorName"]]
    ]
    static let nearSphere: JSONValue = [
        "location": ["$nearSphere": ["__type": "GeoPoint", "latitude": 40.0, "longitude": -30.0], "$maxDistanceInRadians": 0.5]
    ]
    static let withinBox: JSONValue = [
        "location": [
            "$within": [
                "$box": [
                    ["__type": "GeoPoint", "latitude": 10.0, "longitude": 20.0], ["__type": "GeoPoint", "latitude": 30.0, "longitude": 40.0],
                ]
            ]
        ]
    ]
    static let text: JSONValue = ["body": ["$text": ["$search": ["$term": "swift server", "$caseSensitive": true]]]]
}

/// Whole finds on `Post`, for the parts of a SELECT around the `where` (columns, order, limit, skip).
enum GoldenFinds {
    /// `keys=title,views`, `order=-views,meta.rank`, `limit=20`, `skip=40`, as user u1.
    static func page() throws -> FindSpec {
        FindSpec(
            schema: GoldenFixture.post, predicate: try GoldenFixture.predicate(["published": true]),
            order: [
                SortKey(path: FieldPath(field: "views"), descending: true),
                SortKey(path: FieldPath(field: "meta", subpath: ["rank"]), descending: false),
            ],
            limit: 20, skip: 40, keys: ["title", "views"], readPrincipals: ["*", "u1"], schemas: GoldenFixture.schemas)
    }

    /// `$nearSphere` without an order sorts by distance; `skip` without `limit`.
    static func nearest() throws -> FindSpec {
        FindSpec(
            schema: GoldenFixture.post,
            predicate: try GoldenFixture.predicate(["location": ["$nearSphere": ["__type": "GeoPoint", "latitude": 1.0, "longitude": 2.0]]]),
            skip: 5, keys: ["location"], readPrincipals: nil, schemas: GoldenFixture.schemas)
    }

    /// `$text` with `keys=$score` and `order=$score`.
    static func scored() throws -> FindSpec {
        var spec = FindSpec(
            schema: GoldenFixture.post, predicate: try GoldenFixture.predicate(GoldenQueries.text),
            order: [SortKey(path: FieldPath(field: "$score"), descending: true)], limit: 10, keys: ["body"], readPrincipals: nil,
            schemas: GoldenFixture.schemas)
        spec.withTextScore = true
        return spec
    }
}
