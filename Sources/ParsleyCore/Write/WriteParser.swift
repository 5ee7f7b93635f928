/// Parses a create/update body into an `ObjectPatch`, rejecting reserved and invalid names with Parse's codes.
public struct WriteParser: Sendable {
    public var isCreate: Bool
    /// Internal callers (user sign-up, sessions) may write `_`-prefixed fields.
    public var allowInternalFields = false

    public init(isCreate: Bool) { self.isCreate = isCreate }

    public func parse(_ body: JSONValue) throws(ParseError) -> ObjectPatch {
        guard case .object(var object) = body else { throw ParseError.invalidJSON("The request body must be a JSON object") }
        if object["__type"]?.stringValue == "Object" {
            object["__type"] = nil
            object["className"] = nil
        }
        var patch = ObjectPatch()
        for key in object.keys.sorted() {
            let value = object[key]!  // key from keys
            switch key {
            case "objectId", "id":
                if isCreate { throw ParseError(.invalidKeyName, "\(key) is an invalid field name.") }
                continue
            case "createdAt", "updatedAt":
                continue
            case "ACL":
                if case .object(let o) = value, o["__op"]?.stringValue == "Delete" {
                    patch.acl = .some(nil)
                } else if value.isNull {
                    patch.acl = .some(nil)
                } else {
                    patch.acl = .some(try ACL(json: value))
                }
                continue
            default: break
            }
            let path = try fieldPath(key)
            patch.operations.append((path, try operation(value)))
        }
        return patch
    }

    func fieldPath(_ key: String) throws(ParseError) -> FieldPath {
        let parts = key.splitASCII(UInt8(ascii: "."), omittingEmptySubsequences: false)
        let field = parts[0]
        let validTop = allowInternalFields && field.hasPrefix("_") ? Naming.isIdentifier(String(field.dropFirst())) : Naming.isValidFieldName(field)
        guard validTop else { throw ParseError.invalidKeyName(key) }
        let subpath = Array(parts.dropFirst())
        for p in subpath where p.isEmpty || !Naming.isValidNestedKey(p) {
            throw ParseError(.invalidNestedKey, "Nested keys should not contain the '$' or '.' characters")
        }
        return FieldPath(field: field, subpath: subpath)
    }

    func operation(_ value: JSONValue) throws(ParseError) -> FieldOperation {
        guard case .object(let o) = value, let opValue = o["__op"] else {
            _ = try ParseValue.inferType(value)
            return .set(ParseValue.normalize(value))
        }
        guard case .string(let op) = opValue else { throw ParseError.invalidJSON("__op must be a string") }
        switch op {
        case "Increment":
            guard let amount = o["amount"], amount.isNumber else { throw ParseError.invalidJSON("incrementing must provide a number") }
            return .increment(amount)
        case "Add", "AddUnique", "Remove":
            guard case .array(let items)? = o["objects"] else {
                throw ParseError.invalidJSON(op == "Remove" ? "objects to remove must be an array" : "objects to add must be an array")
            }
            for item in items { _ = try ParseValue.inferType(item) }
            let normalized = items.map(ParseValue.normalize)
            switch op {
            case "Add": return .add(normalized)
            case "AddUnique": return .addUnique(normalized)
            default: return .remove(normalized)
            }
        case "Delete":
            return .delete
        case "AddRelation", "RemoveRelation":
            let pointers = try relationPointers(o["objects"])
            return op == "AddRelation" ? .relation(add: pointers, remove: []) : .relation(add: [], remove: pointers)
        case "Batch":
            guard case .array(let ops)? = o["ops"], !ops.isEmpty else { throw ParseError.invalidJSON("Batch needs ops") }
            var add: [Pointer] = [], remove: [Pointer] = []
            for sub in ops {
                guard case .relation(let a, let r) = try operation(sub) else {
                    throw ParseError(.commandUnavailable, "Batch is only supported for relation operations")
                }
                add += a
                remove += r
            }
            // One relation holds objects of one class: the ops of a batch must agree, as the objects of one op do.
            if let first = (add + remove).first, (add + remove).contains(where: { $0.className != first.className }) {
                throw ParseError(.incorrectType, "Relation objects must all be of the same class")
            }
            return .relation(add: add, remove: remove)
        default:
            throw ParseError(.commandUnavailable, "The \(op) operator is not supported yet.")
        }
    }

    func relationPointers(_ value: JSONValue?) throws(ParseError) -> [Pointer] {
        guard case .array(let items)? = value else { throw ParseError.invalidJSON("objects to add must be an array") }
        var pointers: [Pointer] = []
        for item in items {
            guard let p = Pointer(json: item), Naming.isValidClassName(p.className) else {
                throw ParseError(.invalidPointer, "Relation objects must be pointers")
            }
            if let first = pointers.first, first.className != p.className {
                throw ParseError(.incorrectType, "Relation objects must all be of the same class")
            }
            pointers.append(p)
        }
        return pointers
    }
}
