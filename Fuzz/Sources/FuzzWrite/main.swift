// WriteParser (a create/update body) on arbitrary JSON: never crashes; whatever a create accepts an update accepts
// with the same patch, and what a client may write the internal callers may too; every written value is in stored
// (normalised) form with the type it was inferred from and survives a JSON round trip; ACLs survive their own JSON
// form; the operations' helpers (implied type, value on an empty field, array application) do not crash.
import FuzzSupport
import ParsleyCore

func parser(create: Bool, internalFields: Bool) -> WriteParser {
    var p = WriteParser(isCreate: create)
    p.allowInternalFields = internalFields
    return p
}

func parse(_ body: JSONValue, create: Bool, internalFields: Bool) -> Result<ObjectPatch, ParseError> {
    Result { () throws(ParseError) in try parser(create: create, internalFields: internalFields).parse(body) }
}

func check(_ patch: ObjectPatch, body: JSONValue) {
    if case .some(.some(let acl)) = patch.acl {
        guard let again = try? ACL(json: acl.json) else { fuzzFailure("an ACL's JSON is refused: \(JSONWriter.string(acl.json))") }
        if again != acl { fuzzFailure("ACL changed through its JSON: \(acl) -> \(again)") }
    }
    for (path, operation) in patch.operations {
        if !Naming.isIdentifier(path.field) && !Naming.isIdentifier(String(path.field.dropFirst())) {
            fuzzFailure("accepted field name \(path.field)")
        }
        _ = operation.echoesResult
        let type = try? operation.impliedType()
        switch operation {
        case .set(let v):
            expectNormalized(v, "set value of \(path)")
            expectJSONRoundTrip(v, "set value of \(path)")
            // Normalising keeps the value valid and of the type the body's value had.
            guard let raw = body.objectValue?[path.description],
                let rawType = Result(catching: { () throws(ParseError) in try ParseValue.inferType(raw) }).optional
            else { fuzzFailure("set value of \(path) without a valid value in the body") }
            guard let inferred = Result(catching: { () throws(ParseError) in try ParseValue.inferType(v) }).optional else {
                fuzzFailure("normalised value of \(path) no longer valid: \(JSONWriter.string(v))")
            }
            if inferred != rawType || inferred != type {
                fuzzFailure("\(path): body value of type \(String(describing: rawType)) normalised to type \(String(describing: inferred))")
            }
        case .increment(let amount):
            if !amount.isNumber { fuzzFailure("increment by a non-number") }
        case .add(let items), .addUnique(let items), .remove(let items):
            for item in items {
                expectNormalized(item, "array item of \(path)")
                expectJSONRoundTrip(item, "array item of \(path)")
            }
            guard case .array(let empty)? = operation.valueOnEmpty else { fuzzFailure("array operation without an array on empty") }
            // Array operations on a missing field, on the field's own result, and on an array of the items.
            guard case .array(let once)? = try? operation.applyArrayOperation(to: nil),
                let twice = try? operation.applyArrayOperation(to: .array(once)),
                (try? operation.applyArrayOperation(to: .array(items))) != nil
            else { fuzzFailure("array operation refused an array") }
            switch operation {
            case .addUnique:
                if twice != .array(once) { fuzzFailure("AddUnique is not idempotent") }
                if once.count != empty.count { fuzzFailure("AddUnique on empty disagrees with valueOnEmpty") }
            case .remove:
                if !once.isEmpty { fuzzFailure("Remove on an empty field left items") }
            default:
                if once.count != items.count || empty.count != items.count { fuzzFailure("Add lost items") }
            }
            if (try? operation.applyArrayOperation(to: .string("x"))) != nil { fuzzFailure("array operation on a string") }
        case .relation(let add, let remove):
            // One relation field holds objects of one class, so one operation names one class (Batch included).
            if Set((add + remove).map(\.className)).count > 1 { fuzzFailure("relation operation on \(path) mixes classes") }
            for p in add + remove where !Naming.isValidClassName(p.className) { fuzzFailure("relation to class \(p.className)") }
            _ = operation.valueOnEmpty
        case .delete:
            if operation.valueOnEmpty != nil { fuzzFailure("Delete has a value") }
        }
    }
}

extension Result {
    var optional: Success? { try? get() }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let body = parseJSON(data, size) else { return 0 }
    checkDates(in: body)
    let create = parse(body, create: true, internalFields: false)
    let update = parse(body, create: false, internalFields: false)
    let internalUpdate = parse(body, create: false, internalFields: true)
    if case .success(let patch) = create {
        guard case .success(let updatePatch) = update else { fuzzFailure("a valid create body is refused as an update: \(update)") }
        if updatePatch != patch { fuzzFailure("create and update patches differ") }
    }
    if case .success(let patch) = update {
        guard case .success(let internalPatch) = internalUpdate else { fuzzFailure("a client's update is refused internally") }
        if internalPatch != patch { fuzzFailure("client and internal patches differ") }
    }
    if case .success(let patch) = internalUpdate { check(patch, body: body) }
    return 0
}

runFuzzer { data, size in
    var empty: UInt8 = 0
    return data.map { fuzz($0, size) } ?? fuzz(&empty, 0)
}
