import NIOCore
import ParsleyCore
public import ParsleyStorage

/// Writes a database as JSON lines (`TransferFormat`). Classes are read page by page in objectId order
/// (`objectId > last`), relations likewise, so memory stays bounded however large a class is. Everything but
/// the files is read inside one read transaction (a repeatable-read snapshot on PostgreSQL, a WAL snapshot on
/// SQLite), so an export taken while a server writes is still consistent.
public struct TransferExporter: Sendable {
    public let store: SQLStore
    /// Where file bytes are read from; nil: no file lines.
    public let files: (any FileStore)?
    public var pageSize = 1000

    public init(store: SQLStore, files: (any FileStore)? = nil) {
        self.store = store
        self.files = files
    }

    /// Hands each line (without its newline) to `emit`, in order.
    @discardableResult
    public func export(_ emit: @escaping @Sendable (String) async throws -> Void) async throws -> TransferSummary {
        try await emit(TransferFormat.line(TransferFormat.header))
        let withFiles = files != nil
        let (summary, fileNames) = try await store.database.read { db in
            try await self.exportTables(db, collectFiles: withFiles, emit)
        }
        var total = summary
        if let files {
            for name in fileNames.sorted() {
                if try await exportFile(name, from: files, emit) { total.files += 1 }
            }
        }
        try await emit(
            TransferFormat.line([
                "end": true, "objects": .int(Int64(total.objects)), "relations": .int(Int64(total.relations)),
                "files": .int(Int64(total.files)),
            ]))
        return total
    }

    func exportTables(
        _ db: any SQLExecutor, collectFiles: Bool, _ emit: @escaping @Sendable (String) async throws -> Void
    ) async throws -> (TransferSummary, Set<String>) {
        let reader = store.reader(db)
        // Outside the snapshot: a database that never ran the API may lack the table.
        let config = try? await reader.config()
        return try await reader.snapshot {
            try await exportSnapshot(reader, config: config, collectFiles: collectFiles, emit)
        }
    }

    func exportSnapshot(
        _ reader: SQLReader, config: StoredConfig?, collectFiles: Bool, _ emit: @escaping @Sendable (String) async throws -> Void
    ) async throws -> (TransferSummary, Set<String>) {
        let classes: [(className: String, schema: String)]
        do {
            classes = try await reader.storedSchemas()
        } catch {
            throw TransferError("no _SCHEMA table: this is not a Parsley database (\(error))")
        }
        var summary = TransferSummary()
        var fileNames = Set<String>()
        for (className, text) in classes {
            guard let json = try? JSONParser.parse(text), let schema = ClassSchema(json: json) else { continue }
            try await emit(TransferFormat.line(["schema": json]))
            summary.classes += 1
            summary.objects += try await exportObjects(reader, schema, collectFiles: collectFiles, &fileNames, emit)
            for (field, type) in schema.fields.sorted(by: { $0.key < $1.key }) {
                guard case .relation = type else { continue }
                summary.relations += try await exportRelation(reader, owner: className, field: field, emit)
            }
        }
        if let config, case .object(let params)? = config.params, !params.isEmpty {
            let masterKeyOnly = config.masterKeyOnly ?? [:]
            try await emit(TransferFormat.line(["config": ["params": .object(params), "masterKeyOnly": masterKeyOnly]]))
        }
        return (summary, fileNames)
    }

    /// The objects of one class, `pageSize` rows at a time in objectId order.
    func exportObjects(
        _ reader: SQLReader, _ schema: ClassSchema, collectFiles: Bool, _ fileNames: inout Set<String>,
        _ emit: @escaping @Sendable (String) async throws -> Void
    ) async throws -> Int {
        let fields = schema.storedFields
        let columns = TransferFormat.systemColumns + fields.map(\.name)
        let className = JSONValue.string(schema.className)
        var last: String?
        var count = 0
        while true {
            let rows = try await reader.objects(of: schema.className, columns: columns, after: last, limit: pageSize)
            for row in rows {
                guard case .text(let id) = row[0] else { continue }
                var object: [String: JSONValue] = ["objectId": .string(id)]
                if let c = row[1].text { object["createdAt"] = .string(c) }
                if let u = row[2].text { object["updatedAt"] = .string(u) }
                if let r = TransferFormat.permissions(row[3]) { object["_rperm"] = r }
                if let w = TransferFormat.permissions(row[4]) { object["_wperm"] = w }
                for (i, field) in fields.enumerated() where row[5 + i] != .null {
                    let value = StorageCodec.decode(row[5 + i], as: field.type)
                    object[field.name] = value
                    if collectFiles { TransferFormat.fileNames(in: value, into: &fileNames) }
                }
                try await emit(TransferFormat.line(["class": className, "object": .object(object)]))
                count += 1
                last = id
            }
            if rows.count < pageSize { return count }
        }
    }

    /// The pairs of one relation's join table, by (owningId, relatedId).
    func exportRelation(
        _ reader: SQLReader, owner: String, field: String, _ emit: @escaping @Sendable (String) async throws -> Void
    ) async throws -> Int {
        var last: (owningId: String, relatedId: String)?
        var count = 0
        while true {
            let pairs = try await reader.relationPairs(owner: owner, field: field, after: last, limit: pageSize)
            for (owning, related) in pairs {
                try await emit(
                    TransferFormat.line([
                        "relation": [
                            "owner": .string(owner), "field": .string(field), "owningId": .string(owning), "relatedId": .string(related),
                        ]
                    ]))
                count += 1
                last = (owning, related)
            }
            if pairs.count < pageSize { return count }
        }
    }

    /// One file: a `file` line with its attributes and first chunk, then `fileData` lines. False when the store
    /// does not have it (an object refers to a deleted file).
    func exportFile(_ name: String, from files: any FileStore, _ emit: @escaping @Sendable (String) async throws -> Void) async throws -> Bool {
        guard let file = try await files.info(name) else { return false }
        var head: [String: JSONValue] = ["name": .string(name), "size": .int(file.size), "createdAt": .int(file.createdAt)]
        if let contentType = file.contentType { head["contentType"] = .string(contentType) }
        if let metadata = file.metadata { head["metadata"] = metadata }
        if let tags = file.tags { head["tags"] = tags }
        let chunk = TransferFormat.fileChunkBytes
        var pending = ByteBuffer()
        var headWritten = false
        func flush(_ bytes: ByteBuffer) async throws {
            let base64 = JSONValue.string(FileBase64.encode(bytes))
            if headWritten {
                try await emit(TransferFormat.line(["fileData": ["name": .string(name), "base64": base64]]))
            } else {
                head["base64"] = base64
                try await emit(TransferFormat.line(["file": .object(head)]))
                headWritten = true
            }
        }
        if file.size > 0 {
            try await files.read(file, range: 0..<file.size) { buffer in
                var buffer = buffer
                pending.writeBuffer(&buffer)
                while pending.readableBytes >= chunk, let slice = pending.readSlice(length: chunk) {
                    try await flush(slice)
                }
                pending.discardReadBytes()
            }
        }
        if !headWritten || pending.readableBytes > 0 { try await flush(pending) }
        return true
    }
}
