import Logging
public import ParsleyCore

/// Objects read back into one app class from JSON lines or CSV (as `ClassExport` writes them). Each row is checked
/// against the class's schema first (a field it does not have, or a value of another type, refuses the row); the
/// rows that pass are written through the write pipeline (`ObjectService.create`, with the caller's rights: its
/// triggers and checks apply) in batches, each batch in one transaction: a row the write refuses is reported and the
/// batch is written again without it, so no batch is ever half written. objectIds are kept; createdAt and updatedAt
/// are the import's time; relations are not values and are left out.
public struct ClassImport: Sendable {
    /// A row that was not written: its line in the input, Parse's error code and message.
    public struct Refusal: Sendable, Equatable {
        public var line: Int
        public var code: Int
        public var error: String
    }

    public struct Report: Sendable {
        public var imported = 0
        public var batches = 0
        /// The first `maxListed` refusals (`refusedCount` counts them all).
        public var refused: [Refusal] = []
        public var refusedCount = 0
        static let maxListed = 1000

        mutating func refuse(_ line: Int, _ error: any Error) {
            refusedCount += 1
            guard refused.count < Self.maxListed else { return }
            let (code, message) = ClassImport.describe(error)
            refused.append(Refusal(line: line, code: code, error: message))
        }

        public var json: JSONValue {
            [
                "imported": .int(Int64(imported)), "batches": .int(Int64(batches)), "refusedCount": .int(Int64(refusedCount)),
                "refused": .array(refused.map { ["line": .int(Int64($0.line)), "code": .int(Int64($0.code)), "error": .string($0.error)] }),
            ]
        }
    }

    /// One row ready to write.
    struct Row: Sendable {
        var line: Int
        var objectId: String?
        var fields: [String: JSONValue]
    }

    let objects: ObjectService
    let className: String
    let schema: ClassSchema
    let auth: Auth
    let batchSize: Int

    /// Checks that `className` is an app class that exists and that `auth` may write.
    public init(objects: ObjectService, className: String, auth: Auth, batchSize: Int = 100) async throws {
        guard auth.isMaster, !auth.isReadOnly else {
            throw ParseError(.operationForbidden, "Importing needs the master key (not the read-only one).")
        }
        guard !className.hasPrefix("_") else {
            throw ParseError(
                .operationForbidden, "Only app classes can be imported; Parse's own classes move with the whole database (parsley export).")
        }
        guard let schema = try await objects.schemas.current(className) else {
            throw ParseError(.invalidClassName, "Class \(className) does not exist.")
        }
        self.objects = objects
        self.className = className
        self.schema = schema
        self.auth = auth
        self.batchSize = max(1, batchSize)
    }

    static func describe(_ error: any Error) -> (Int, String) {
        switch error {
        case let e as ParseError: return (e.code.rawValue, e.message)
        default:
            Logger(label: "parsley.import").error("import row failed: \(String(reflecting: error))")
            return (ParseError.Code.internalServerError.rawValue, "Internal server error.")
        }
    }

    // MARK: Reading rows

    /// A JSON line as an object of this class.
    func row(jsonLine text: String, line: Int) throws -> Row {
        let value: JSONValue
        do { value = try JSONParser.parse(text) } catch { throw ParseError.invalidJSON("Invalid JSON: \(error.message)") }
        guard case .object(var o) = value else { throw ParseError.invalidJSON("A line must hold a JSON object.") }
        var objectId: String?
        switch o.removeValue(forKey: "objectId") {
        case .string(let id)?: objectId = try ObjectService.customObjectId(.string(id))
        case nil, .null?: break
        default: throw ParseError(.incorrectType, "objectId must be a string")
        }
        o["createdAt"] = nil
        o["updatedAt"] = nil
        for (key, value) in o {
            if value == .null { o[key] = nil }
            guard key != "ACL", value != .null else { continue }
            let type = try fieldType(key)
            if case .relation = type {
                o[key] = nil
                continue
            }
            if value.objectValue?["__op"] != nil { throw ParseError(.incorrectType, "\(key) holds an operation; import takes values") }
            if let got = try ParseValue.inferType(value), got != type { throw SchemaService.mismatch(key, expected: type, got: got) }
        }
        return Row(line: line, objectId: objectId, fields: o)
    }

    func fieldType(_ key: String) throws(ParseError) -> FieldType {
        guard let type = schema.fields[key] else { throw ParseError(.invalidKeyName, "\(key) is not a field of \(className)") }
        return type
    }

    /// Refuses a CSV header naming a column the class does not have (before any row is read).
    func check(header: [String]) throws(ParseError) {
        for column in header where column != "objectId" && column != "createdAt" && column != "updatedAt" && column != "ACL" {
            _ = try fieldType(column)
        }
    }

    /// A CSV record as an object of this class: each non-empty cell read as its column's type.
    func row(csv cells: [String], header: [String], line: Int) throws -> Row {
        guard cells.count == header.count else {
            throw ParseError.invalidJSON("\(cells.count) cells where the header has \(header.count) columns")
        }
        var fields: [String: JSONValue] = [:]
        var objectId: String?
        for (column, cell) in zip(header, cells) where !cell.isEmpty {
            switch column {
            case "objectId": objectId = try ObjectService.customObjectId(.string(cell))
            case "createdAt", "updatedAt": break
            case "ACL": fields[column] = try Self.json(cell, column)
            default:
                let type = try fieldType(column)
                if case .relation = type { continue }
                fields[column] = try Self.value(cell, column, type)
            }
        }
        return Row(line: line, objectId: objectId, fields: fields)
    }

    static func json(_ cell: String, _ column: String) throws(ParseError) -> JSONValue {
        do { return try JSONParser.parse(cell) } catch { throw ParseError.invalidJSON("\(column): invalid JSON") }
    }

    static func value(_ cell: String, _ column: String, _ type: FieldType) throws(ParseError) -> JSONValue {
        func wrong(_ what: String) -> ParseError { ParseError(.incorrectType, "\(column): expected \(what), got \(cell)") }
        switch type {
        case .string: return .string(cell)
        case .number:
            if let n = Int64(cell) { return .int(n) }
            guard let d = Double(cell), d.isFinite else { throw wrong("a number") }
            return .double(d)
        case .boolean:
            switch cell.lowercased() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: throw wrong("true or false")
            }
        case .date:
            guard ParseDate(iso: cell) != nil else { throw wrong("an ISO date") }
            return ["__type": "Date", "iso": .string(cell)]
        case .pointer(let target): return ["__type": "Pointer", "className": .string(target), "objectId": .string(cell)]
        default:
            let value = try json(cell, column)
            if let got = try ParseValue.inferType(value), got != type { throw SchemaService.mismatch(column, expected: type, got: got) }
            return value
        }
    }

    // MARK: Writing

    struct RowFailed: Error {
        let index: Int
        let error: any Error
    }

    /// Writes `rows` in one transaction; a row the write refuses is reported and the rest written again without it.
    func write(_ rows: [Row], into report: inout Report) async {
        var rows = rows
        guard !rows.isEmpty else { return }
        report.batches += 1
        let (objects, className, auth) = (objects, className, auth)
        while !rows.isEmpty {
            do {
                try await Transactions(store: objects.store).run { [rows] in
                    for (i, row) in rows.enumerated() {
                        do {
                            _ = try await objects.create(className, CreateObject(row.fields), auth: auth, rules: .init(objectId: row.objectId))
                        } catch {
                            throw RowFailed(index: i, error: error)
                        }
                    }
                }
                report.imported += rows.count
                return
            } catch let failed as RowFailed {
                report.refuse(rows[failed.index].line, failed.error)
                rows.remove(at: failed.index)
                try? await objects.schemas.reload()
            } catch {
                for row in rows { report.refuse(row.line, error) }
                return
            }
        }
    }
}

/// Feeds an import its input as it arrives (an HTTP body, a file), a chunk at a time; rows are written whenever a
/// batch is full. The first line of CSV is its header.
public struct ClassImportReader: Sendable {
    let importer: ClassImport
    let format: ClassExport.Format
    var report = ClassImport.Report()
    var pending: [ClassImport.Row] = []
    var line: [UInt8] = []
    var lineNumber = 0
    var csv = CSV.Reader()
    var header: [String]?
    static let maxLineBytes = 16 << 20

    public init(_ importer: ClassImport, format: ClassExport.Format) {
        self.importer = importer
        self.format = format
    }

    /// - Throws: a CSV header with a column the class does not have, or a line over 16 MiB; nothing of the
    ///   current batch is written then.
    public mutating func feed(_ bytes: some Collection<UInt8>) async throws {
        switch format {
        case .jsonLines:
            for byte in bytes {
                if byte == 10 {
                    try await take(line: line)
                    line.removeAll(keepingCapacity: true)
                } else {
                    line.append(byte)
                    if line.count > Self.maxLineBytes { throw ParseError.invalidJSON("line \(lineNumber + 1) is longer than 16 MiB") }
                }
            }
        case .csv:
            for record in csv.feed(bytes) { try await take(record: record) }
        }
    }

    /// Reads what is left, writes the last batch and answers the report.
    public mutating func finish() async throws -> ClassImport.Report {
        switch format {
        case .jsonLines:
            if !line.isEmpty { try await take(line: line) }
        case .csv:
            if csv.unterminatedQuote { throw ParseError.invalidJSON("the input ends inside a quoted CSV field") }
            if let record = csv.finish() { try await take(record: record) }
        }
        await importer.write(pending, into: &report)
        pending = []
        return report
    }

    mutating func take(line bytes: [UInt8]) async throws {
        lineNumber += 1
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains(where: { !$0.isWhitespace }) else { return }
        do { pending.append(try importer.row(jsonLine: text, line: lineNumber)) } catch { report.refuse(lineNumber, error) }
        await flushIfFull()
    }

    mutating func take(record: (line: Int, fields: [String])) async throws {
        guard let header else {
            // (A spreadsheet may start the file with a byte order mark.)
            let names = record.fields.enumerated().map { i, name in
                (i == 0 && name.hasPrefix("\u{FEFF}") ? String(name.dropFirst()) : name).trimmingSpaces()
            }
            try importer.check(header: names)
            header = names
            return
        }
        if record.fields == [""] { return }
        do { pending.append(try importer.row(csv: record.fields, header: header, line: record.line)) } catch { report.refuse(record.line, error) }
        await flushIfFull()
    }

    mutating func flushIfFull() async {
        guard pending.count >= importer.batchSize else { return }
        await importer.write(pending, into: &report)
        pending = []
    }
}

extension String {
    /// Without spaces at either end.
    fileprivate func trimmingSpaces() -> String {
        String(String(drop { $0 == " " }.reversed().drop { $0 == " " }).reversed())
    }
}
