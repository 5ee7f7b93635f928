public import ParsleyCore

/// One class as JSON lines (each object as a find answers it) or CSV (a header of columns, then a cell per field),
/// read through `QueryService.find` with the caller's rights (its triggers, permissions and protected fields apply,
/// as for `GET /classes`) a page at a time in objectId order, so memory stays flat however big the class is.
/// The dashboard's export and `parsley export --class` use it; `ClassImport` reads both formats back.
public struct ClassExport: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case jsonLines = "jsonl"
        case csv

        public var contentType: String { self == .csv ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8" }
    }

    let queries: QueryService

    public init(queries: QueryService) { self.queries = queries }

    /// The CSV columns of `schema`: objectId, createdAt, updatedAt, ACL, then its fields by name (relations are left
    /// out: they are links to other objects, not values).
    public static func columns(_ schema: ClassSchema) -> [String] {
        let own = schema.fields.filter { name, type in
            if ClassSchema.defaultFields[name] != nil { return false }
            if case .relation = type { return false }
            return true
        }
        return ["objectId", "createdAt", "updatedAt", "ACL"] + own.keys.sorted()
    }

    /// A value as a CSV cell: text as it is, numbers and booleans as JSON writes them, a date as its ISO text, a
    /// pointer as its objectId, anything else as JSON; no value is an empty cell.
    public static func cell(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: return ""
        case .string(let s)?: return s
        case .bool(let b)?: return b ? "true" : "false"
        case .object(let o)?:
            if o["__type"] == "Date", let iso = o["iso"]?.stringValue { return iso }
            if o["__type"] == "Pointer", let id = o["objectId"]?.stringValue { return id }
            return JSONWriter.string(.object(o))
        case let v?: return JSONWriter.string(v)
        }
    }

    /// The class's schema as the database holds it; 103 when there is no such class.
    public func schema(_ className: String) async throws -> ClassSchema {
        guard let schema = try await queries.schemas.current(className) else {
            throw ParseError(.invalidClassName, "Class \(className) does not exist.")
        }
        return schema
    }

    /// Writes the objects `whereValue` matches (all when nil) in `format`, a line (or CSV record) per `emit`, and
    /// answers how many objects there were.
    public func run(
        _ className: String, format: Format, where whereValue: JSONValue?, auth: Auth, pageSize: Int = 500,
        emit: (String) async throws -> Void
    ) async throws -> Int {
        let schema = try await schema(className)
        let columns = Self.columns(schema)
        if format == .csv { try await emit(CSV.record(columns)) }
        var last: String?
        var count = 0
        while true {
            var find = FindOptions()
            var parts: [JSONValue] = []
            if let whereValue, whereValue != .object([:]) { parts.append(whereValue) }
            if let last { parts.append(["objectId": ["$gt": .string(last)]]) }
            // (Not `parts.isEmpty ? nil : ...`: JSONValue takes `nil` as its `.null`, which no query is.)
            if parts.count == 1 {
                find.whereValue = parts[0]
            } else if parts.count > 1 {
                find.whereValue = ["$and": .array(parts)]
            }
            find.order = ["objectId"]
            find.limit = pageSize
            let page = try await queries.find(className, find, auth: auth, triggers: true).results
            guard let next = page.last?["objectId"]?.stringValue else { return count }
            for object in page {
                switch format {
                case .jsonLines: try await emit(JSONWriter.string(.object(object)))
                case .csv: try await emit(CSV.record(columns.map { Self.cell(object[$0]) }))
                }
            }
            count += page.count
            last = next
        }
    }
}
