import NIOCore
import ParsleyCore
public import ParsleyStorage

/// Reads an export (`TransferFormat`) into a database whose API has been bootstrapped (`ParseServices.open`),
/// keeping objectIds, dates, permissions, internal fields, relations, schemas (class-level permissions, field
/// options, indexes) and, when the export has them and a store is given, files. Lines are read one at a time;
/// objects and relation pairs are written `batchSize` at a time, each batch in one write transaction.
public struct TransferImporter: Sendable {
    public let store: SQLStore
    public let schemas: SchemaService
    /// Where file lines go; nil: they are skipped.
    public let files: (any FileStore)?
    public var batchSize = 500
    /// Import into a database that has objects: objects with an imported objectId are overwritten.
    public var force = false

    public init(store: SQLStore, schemas: SchemaService, files: (any FileStore)? = nil, force: Bool = false) {
        self.store = store
        self.schemas = schemas
        self.files = files
        self.force = force
    }

    /// Classes of the target that hold objects (an import expects none of them).
    public func nonEmptyClasses() async throws -> [String] {
        var found: [String] = []
        for className in schemas.all().keys.sorted() {
            if try await store.hasObjects(className: className) { found.append(className) }
        }
        return found
    }

    /// Imports the lines `nextLine` returns (nil at the end).
    /// - Throws: `TransferError` naming the line, when the target has objects (without `force`), or when the
    ///   export is malformed or truncated; what was imported before stays.
    public func run(_ nextLine: () async throws -> String?) async throws -> TransferSummary {
        if !force {
            let busy = try await nonEmptyClasses()
            if !busy.isEmpty {
                throw TransferError(
                    "the target database is not empty (objects in \(busy.joined(separator: ", "))); import into an empty database, or use --force "
                        + "to overwrite objects with the same objectId"
                )
            }
        }
        var lineNumber = 0
        func next() async throws -> JSONValue? {
            while let text = try await nextLine() {
                lineNumber += 1
                if text.allSatisfy({ $0 == " " || $0 == "\r" || $0 == "\t" }) { continue }
                do {
                    return try JSONParser.parse(text)
                } catch {
                    throw TransferError("line \(lineNumber): not JSON: \(error)")
                }
            }
            return nil
        }
        guard let header = try await next() else { throw TransferError("the export is empty") }
        guard header["parsley"]?.stringValue == "export", let version = header["version"]?.integerValue else {
            throw TransferError("line \(lineNumber): not a Parsley export (the first line must be {\"parsley\":\"export\",\"version\":1})")
        }
        guard version <= TransferFormat.version else {
            throw TransferError("the export has format version \(version); this Parsley reads up to \(TransferFormat.version)")
        }
        var summary = TransferSummary()
        var batch: [Row] = []
        var ended = false
        func flush() async throws {
            guard !batch.isEmpty else { return }
            let rows = batch
            batch.removeAll(keepingCapacity: true)
            try await store.database.write { [store] db in
                let writer = store.writer(db)
                for row in rows {
                    switch row {
                    case .object(let className, let columns, let values, let overwrite):
                        try await writer.insertExported(className: className, columns: columns, values: values, overwrite: overwrite)
                    case .relation(let owner, let field, let owningId, let relatedId):
                        try await writer.insertRelationPair(owner: owner, field: field, owningId: owningId, relatedId: relatedId)
                    }
                }
            }
        }
        do {
            while let line = try await next() {
                if let object = line["object"] {
                    batch.append(try objectRow(className: line["class"]?.stringValue ?? "", object))
                    summary.objects += 1
                } else if let relation = line["relation"] {
                    batch.append(try relationRow(relation))
                    summary.relations += 1
                } else if let schema = line["schema"] {
                    try await flush()
                    try await importSchema(schema)
                    summary.classes += 1
                } else if let config = line["config"] {
                    try await flush()
                    try await importConfig(config)
                } else if let file = line["file"] {
                    try await flush()
                    if try await importFile(file, next: next) { summary.files += 1 } else { summary.skippedFiles += 1 }
                } else if line["fileData"] != nil {
                    // Chunks of a file that was skipped.
                    guard files == nil else { throw TransferError("file data without its file line") }
                } else if line["end"] == .bool(true) {
                    try await flush()
                    ended = true
                    if let n = line["objects"]?.integerValue, n != summary.objects {
                        throw TransferError("the end line counts \(n) objects but the export holds \(summary.objects)")
                    }
                    if let n = line["relations"]?.integerValue, n != summary.relations {
                        throw TransferError("the end line counts \(n) relations but the export holds \(summary.relations)")
                    }
                    break
                } else {
                    throw TransferError("unknown line \(JSONWriter.string(line).prefix(80))")
                }
                if batch.count >= batchSize { try await flush() }
            }
            try await flush()
        } catch let e as TransferError {
            throw TransferError("line \(lineNumber): \(e.description)")
        } catch {
            throw TransferError("line \(lineNumber): \(error)")
        }
        guard ended else {
            throw TransferError("the export ends at line \(lineNumber) without its end line: it is truncated (\(summary) imported)")
        }
        return summary
    }

    // MARK: Lines

    /// Creates the class (table, columns, join tables, indexes) or adds what the target lacks, and stores the
    /// exported schema (class-level permissions, field options, indexes) for it.
    func importSchema(_ json: JSONValue) async throws {
        guard let imported = ClassSchema(json: json), Naming.isValidClassName(imported.className) else {
            throw TransferError("invalid schema \(JSONWriter.string(json).prefix(120))")
        }
        let className = imported.className
        _ = try await schemas.update(className) { writer, stored in
            var merged = imported
            if let stored {
                for (name, type) in stored.fields {
                    if let wanted = imported.fields[name], wanted != type {
                        throw TransferError("class \(className): field \(name) is \(type.display) in the target but \(wanted.display) in the export")
                    }
                    merged.fields[name] = type
                }
            } else {
                try await writer.createTable(className)
            }
            for (name, type) in imported.fields.sorted(by: { $0.key < $1.key })
            where ClassSchema.defaultFields[name] == nil && stored?.fields[name] == nil {
                try await writer.addColumn(className, field: name, type: type)
            }
            for (indexName, spec) in imported.indexes.sorted(by: { $0.key < $1.key }) where stored?.indexes[indexName] == nil {
                guard case .object(let keys) = spec, !keys.isEmpty else { continue }
                let columns = keys.sorted { $0.key < $1.key }.map { ($0.key, $0.value.integerValue == -1) }
                try await writer.createIndex(className, name: indexName, fields: columns)
            }
            if let stored { merged.indexes = stored.indexes.merging(imported.indexes) { _, new in new } }
            return merged
        }
    }

    /// A row an import writes, checked when its line was read, written with its batch.
    enum Row: Sendable {
        /// An object's stored columns (`objectId` first); `overwrite` replaces an object with the same id.
        case object(className: String, columns: [String], values: [SQLValue], overwrite: Bool)
        case relation(owner: String, field: String, owningId: String, relatedId: String)
    }

    /// The row of one exported object (replacing one with the same objectId with `force`).
    func objectRow(className: String, _ json: JSONValue) throws -> Row {
        guard let schema = schemas.schema(className) else { throw TransferError("object of class '\(className)' before its schema line") }
        guard case .object(let object) = json, let id = object["objectId"]?.stringValue, !id.isEmpty else {
            throw TransferError("\(className) object without an objectId")
        }
        func date(_ key: String) throws -> String {
            let value = object[key]
            guard let text = value?.stringValue ?? value?["iso"]?.stringValue, let date = ParseDate(iso: text) else {
                throw TransferError("\(className) \(id): \(key) is missing or not a date")
            }
            return date.iso
        }
        let created = try date("createdAt")
        let updated = object["updatedAt"] == nil ? created : try date("updatedAt")
        var names = TransferFormat.systemColumns
        var binds: [SQLValue] = [
            .text(id), .text(created), .text(updated), TransferFormat.permissionValue(object["_rperm"]),
            TransferFormat.permissionValue(object["_wperm"]),
        ]
        for (name, value) in object.sorted(by: { $0.key < $1.key }) where !value.isNull {
            if TransferFormat.systemColumns.contains(name) || name == "ACL" { continue }
            guard let type = schema.fields[name] else { throw TransferError("\(className) \(id): field \(name) is not in the class's schema") }
            if case .relation = type { continue }
            names.append(name)
            binds.append(StorageCodec.encode(value, as: type))
        }
        if object["_rperm"] == nil, object["_wperm"] == nil, let aclJSON = object["ACL"], let acl = try? ACL(json: aclJSON) {
            // An export written by hand may give the ACL in Parse's form instead.
            binds[3] = TransferFormat.permissionValue(.array(acl.readers.map { .string($0) }))
            binds[4] = TransferFormat.permissionValue(.array(acl.writers.map { .string($0) }))
        }
        return .object(className: className, columns: names, values: binds, overwrite: force)
    }

    func relationRow(_ json: JSONValue) throws -> Row {
        guard let owner = json["owner"]?.stringValue, let field = json["field"]?.stringValue,
            let owningId = json["owningId"]?.stringValue, let relatedId = json["relatedId"]?.stringValue
        else { throw TransferError("relation line without owner, field, owningId and relatedId") }
        guard case .relation? = schemas.schema(owner)?.fields[field] else {
            throw TransferError("relation \(owner).\(field) is not a Relation field of its class's schema")
        }
        return .relation(owner: owner, field: field, owningId: owningId, relatedId: relatedId)
    }

    /// `/config` parameters (row "1" of `_GlobalConfig`), replacing the target's.
    func importConfig(_ json: JSONValue) async throws {
        let params = json["params"] ?? [:], masterKeyOnly = json["masterKeyOnly"] ?? [:]
        try await store.database.write { [store] db in
            let writer = store.writer(db)
            try await writer.createConfigTable()
            try await writer.saveConfig(params: params, masterKeyOnly: masterKeyOnly)
        }
    }

    /// One file: the bytes of its `file` line, then of the `fileData` lines that follow until `size` bytes came.
    /// False when there is no file store (the data lines are then skipped as they come).
    func importFile(_ json: JSONValue, next: () async throws -> JSONValue?) async throws -> Bool {
        guard let name = json["name"]?.stringValue, let size = json["size"]?.integerValue, size >= 0 else {
            throw TransferError("file line without name and size")
        }
        guard let files else { return false }
        var stored = StoredFile(name: name, size: Int64(size), contentType: json["contentType"]?.stringValue)
        stored.metadata = json["metadata"]
        stored.tags = json["tags"]
        if case .int(let t)? = json["createdAt"] { stored.createdAt = t }
        func decode(_ value: JSONValue?) throws -> ByteBuffer {
            guard let text = value?.stringValue, let bytes = FileBase64.decode(text) else { throw TransferError("file \(name): invalid base64") }
            return bytes
        }
        var first: ByteBuffer? = try json["base64"].map(decode)
        var received = first?.readableBytes ?? 0
        if force { _ = try? await files.delete(name) }
        let created = try await files.create(stored, maxBytes: max(size, 1)) { () async throws -> ByteBuffer? in
            if let chunk = first {
                first = nil
                return chunk
            }
            guard received < size else { return nil }
            guard let line = try await next(), let data = line["fileData"], data["name"]?.stringValue == name else {
                throw TransferError("file \(name): the export ends or goes on before its \(size) bytes")
            }
            let chunk = try decode(data["base64"])
            received += chunk.readableBytes
            return chunk
        }
        guard created.size == Int64(size) else { throw TransferError("file \(name): \(created.size) bytes instead of \(size)") }
        return true
    }
}
