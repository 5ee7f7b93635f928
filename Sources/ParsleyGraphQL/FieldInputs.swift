import ParsleyCore
import ParsleyDomain

/// A create's or update's `fields` input as a REST body (docs/graphql-contract.md §4.2): dates, bytes, files,
/// geo points and polygons as Parse's typed JSON, `ACL` as Parse's ACL map, pointers as Parse pointers and relations
/// as `AddRelation`/`RemoveRelation` operations. Nested `createAndLink` and `createAndAdd` objects are created first,
/// as the caller, through the object service (there is no transaction, as in Parse Server).
struct FieldInputs: Sendable {
    let shapes: [String: ClassShape]
    let services: GraphQLServices
    let auth: Auth
    /// A multipart request's files and how to store one (`FileInput.upload`).
    var uploads: [String: GraphQLUpload] = [:]
    var storeFile: GraphQLService.StoreFile?

    init(shapes: [String: ClassShape], services: GraphQLServices, auth: Auth) {
        self.shapes = shapes
        self.services = services
        self.auth = auth
    }

    /// Inputs of a mutation run in `context` (its caller and its request's files).
    init(shapes: [String: ClassShape], services: GraphQLServices, context: GraphQLContext) {
        self.init(shapes: shapes, services: services, auth: context.auth)
        uploads = context.uploads
        storeFile = context.storeFile
    }

    /// The REST body of `input` for `shape`. `null` on a field (not a relation) unsets it on an update and is left
    /// out on a create.
    func body(_ input: JSONValue?, _ shape: ClassShape, update: Bool) async throws -> [String: JSONValue] {
        guard case .object(let fields)? = input else { return [:] }
        var out: [String: JSONValue] = [:]
        for key in fields.keys.sorted() {
            let value = fields[key] ?? .null
            let type = shape.schema.fields[key]
            if value == .null {
                if case .relation? = type { continue }
                if update { out[key] = ["__op": "Delete"] }
                continue
            }
            if key == "ACL" {
                out[key] = GraphQLWhere.acl(value)
                continue
            }
            switch type {
            case .pointer(let target)?: out[key] = try await pointer(value, field: key, target: target)
            case .relation(let target)?: out[key] = try await relation(value, field: key, target: target)
            case .file?: out[key] = try await file(value)
            default: out[key] = try Self.value(value, type)
            }
        }
        return out
    }

    /// A plain field's input as Parse JSON.
    static func value(_ value: JSONValue, _ type: FieldType?) throws -> JSONValue {
        switch type {
        case .date?:
            if case .string(let iso) = value { return ["__type": "Date", "iso": .string(iso)] }
        case .geoPoint?:
            return geoPoint(value)
        case .polygon?:
            let points = (value.arrayValue ?? []).map { JSONValue.array([$0["latitude"] ?? .null, $0["longitude"] ?? .null]) }
            return ["__type": "Polygon", "coordinates": .array(points)]
        default: break
        }
        return value
    }

    /// `FileInput`: `{upload}`, a file of the multipart request, stored as `POST /files` stores one (as Parse Server's
    /// `handleUpload`), or `{file}`, a file stored before (its name, or `{name, url}`).
    func file(_ value: JSONValue) async throws -> JSONValue {
        if let key = value["upload"]?["__graphQLUpload"]?.stringValue {
            guard let upload = uploads[key], let storeFile else { throw ParseError(.fileSaveError, "Invalid file upload.") }
            let stored = try await storeFile(upload, auth)
            return ["__type": "File", "name": .string(stored.name), "url": .string(stored.url)]
        }
        guard case .object(var file)? = value["file"] else { throw ParseError(.fileSaveError, "Invalid file upload.") }
        file["__type"] = "File"
        return .object(file)
    }

    /// `{latitude, longitude}` with `__type: "GeoPoint"`.
    static func geoPoint(_ value: JSONValue) -> JSONValue {
        guard case .object(var point) = value else { return value }
        point["__type"] = "GeoPoint"
        return .object(point)
    }

    /// `{link: ID}` or `{createAndLink: {...}}` → a Parse pointer to `target` (exactly one key, 106 otherwise).
    func pointer(_ value: JSONValue, field: String, target: String) async throws -> JSONValue {
        let link = value["link"].flatMap { $0 == .null ? nil : $0 }
        let create = value["createAndLink"].flatMap { $0 == .null ? nil : $0 }
        guard (link == nil) != (create == nil) else {
            throw ParseError(.invalidPointer, "You need to provide link OR createLink on the pointer mutation of field \(field)")
        }
        let id: String
        if let link {
            id = GraphQLNames.objectId(from: link.stringValue ?? "", className: target)
        } else {
            id = try await self.create(create, in: target)
        }
        return ["__type": "Pointer", "className": .string(target), "objectId": .string(id)]
    }

    /// `{add, remove, createAndAdd}` → `AddRelation`/`RemoveRelation` (in a `Batch` when both are given).
    func relation(_ value: JSONValue, field: String, target: String) async throws -> JSONValue {
        func pointer(_ id: String) -> JSONValue { ["__type": "Pointer", "className": .string(target), "objectId": .string(id)] }
        let add = (value["add"]?.arrayValue ?? []).compactMap(\.stringValue).map { GraphQLNames.objectId(from: $0, className: target) }
        let remove = (value["remove"]?.arrayValue ?? []).compactMap(\.stringValue).map { GraphQLNames.objectId(from: $0, className: target) }
        let creates = value["createAndAdd"]?.arrayValue ?? []
        guard !add.isEmpty || !remove.isEmpty || !creates.isEmpty else {
            throw ParseError(.invalidPointer, "You need to provide at least one operation on the relation mutation of field \(field)")
        }
        var added = add
        for fields in creates { added.append(try await create(fields, in: target)) }
        var ops: [JSONValue] = []
        if !added.isEmpty { ops.append(["__op": "AddRelation", "objects": .array(added.map(pointer))]) }
        if !remove.isEmpty { ops.append(["__op": "RemoveRelation", "objects": .array(remove.map(pointer))]) }
        return ops.count == 1 ? ops[0] : ["__op": "Batch", "ops": .array(ops)]
    }

    /// Creates an object of `className` from a `Create<G>FieldsInput`, as the caller; its objectId.
    func create(_ fields: JSONValue?, in className: String) async throws -> String {
        guard let shape = shapes[className], shape.hasMutations else { throw ParseError.invalidClassName(className) }
        let body = try await body(fields, shape, update: false)
        let object = try await services.objects.create(className, CreateObject(body), auth: auth)
        guard let id = object["objectId"]?.stringValue else { throw ParseError(.internalServerError, "Internal server error") }
        return id
    }
}
