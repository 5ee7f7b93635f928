import ParsleyCore
import ParsleyStorage

extension ObjectService {
    /// What an update writes: the column assignments, the values its answer echoes (array operations, nested
    /// changes) and the relation changes, from the parsed body and the stored object (`current`, empty when the
    /// update needs no read).
    struct UpdatePlan {
        var assignments: [SQLWriter.Assignment] = []
        var echoed: [String: JSONValue] = [:]
        var relations: [(field: String, add: [Pointer], remove: [Pointer])] = []
    }

    /// Whether the update needs the stored object first: nested keys and array operations are computed from it.
    static func readsStored(_ patch: ObjectPatch) -> Bool {
        patch.operations.contains { path, op in
            if !path.subpath.isEmpty { return true }
            switch op {
            case .add, .addUnique, .remove: return true
            default: return false
            }
        }
    }

    /// Whether the update adds or removes relation members (rows of join tables, beside the object's own).
    static func changesRelations(_ patch: ObjectPatch) -> Bool {
        patch.operations.contains { _, op in
            if case .relation = op { return true }
            return false
        }
    }

    static func updatePlan(_ patch: ObjectPatch, schema: ClassSchema, current: [String: JSONValue], rules: Internal) throws -> UpdatePlan {
        var plan = UpdatePlan()
        var nested: [String: JSONValue] = [:]
        // A field set whole and changed below in one body (`obj` and `obj.sub`, as the JS SDK may send): the whole
        // value first (the parser orders `obj` before `obj.sub`), then the nested changes on top, in one assignment.
        let nestedFields = Set(patch.operations.lazy.filter { !$0.path.subpath.isEmpty }.map(\.path.field))
        for (path, op) in patch.operations {
            if path.subpath.isEmpty, nestedFields.contains(path.field) {
                switch op {
                case .set(let v): nested[path.field] = v
                case .delete: nested[path.field] = .null
                default: throw ParseError.invalidKeyName(path.field)
                }
                continue
            }
            if !path.subpath.isEmpty {
                let base = nested[path.field] ?? current[path.field]
                let existing = value(at: path.subpath, in: base)
                let newValue: JSONValue?
                switch op {
                case .delete: newValue = nil
                case .increment(let amount): newValue = try add(existing, amount)
                case .add, .addUnique, .remove: newValue = try op.applyArrayOperation(to: existing)
                case .set(let v): newValue = v
                case .relation: throw ParseError.invalidKeyName(path.description)
                }
                nested[path.field] = setting(base, path.subpath, to: newValue)
                if op.echoesResult, let newValue { plan.echoed[path.field] = setting(plan.echoed[path.field], path.subpath, to: newValue) }
                continue
            }
            switch op {
            case .set(.null), .delete:
                // Unsetting a field the class does not have changes nothing (Parse Server answers as usual).
                if schema.fields[path.field] != nil { plan.assignments.append(.set(path.field, .null)) }
            case .set(let v): plan.assignments.append(.set(path.field, v))
            case .increment(let amount): plan.assignments.append(.increment(path.field, amount))
            case .add, .addUnique, .remove:
                let v = try op.applyArrayOperation(to: current[path.field])
                plan.assignments.append(.set(path.field, v))
                plan.echoed[path.field] = v
            case .relation(let add, let remove): plan.relations.append((path.field, add, remove))
            }
        }
        for (field, value) in nested { plan.assignments.append(.set(field, value)) }
        // Clearing an internal column the class never had changes nothing.
        for (field, value) in rules.values where !(value.isNull && schema.fields[field] == nil) { plan.assignments.append(.set(field, value)) }
        for (field, amount) in rules.increments { plan.assignments.append(.increment(field, .int(amount))) }
        if let acl = patch.acl { plan.assignments.append(.setACL(acl)) }
        return plan
    }

    /// An update that reads the stored object first (array and nested operations, a condition), changes relations
    /// or publishes a change event: the statements in one transaction. `plan`: what the update writes when that needs
    /// no read (nil: planned from the row read here). Nil when the object is missing, not writable, or fails the
    /// condition.
    func updateInTransaction(
        _ className: String, objectId: String, patch: ObjectPatch, schema: ClassSchema, rules: Internal, plan planned: UpdatePlan?,
        original: [String: JSONValue]?, now: ParseDate, auth: Auth
    ) async throws -> [String: JSONValue]? {
        let principals = auth.principals
        let request = RequestInfo.current  // read before the transaction, whose body may run on another task
        return try await store.transaction { [store, changes] transaction in
            let writer = store.writer(transaction)
            let plan: UpdatePlan
            if let planned {
                plan = planned
            } else {
                guard let current = try await writer.fetch(className: className, schema: schema, objectId: objectId, writePrincipals: principals)
                else { return nil }
                if let condition = rules.condition, (current[condition.field] ?? .null) != (condition.value ?? .null) { return nil }
                plan = try Self.updatePlan(patch, schema: schema, current: current, rules: rules)
            }
            guard
                let incremented = try await writer.update(
                    className: className, schema: schema, objectId: objectId, updatedAt: now, assignments: plan.assignments,
                    writePrincipals: principals)
            else { return nil }
            var echoed = plan.echoed
            for (k, v) in incremented { echoed[k] = v }
            for (field, add, remove) in plan.relations {
                try await writer.addRelation(owner: className, field: field, owningId: objectId, related: add.map(\.objectId))
                try await writer.removeRelation(owner: className, field: field, owningId: objectId, related: remove.map(\.objectId))
            }
            if changes.publishes(className) {
                let saved = try await writer.fetch(className: className, schema: schema, objectId: objectId, writePrincipals: nil)
                try await changes.publish(
                    event(className, .update, objectId, original: original, object: saved, auth: auth, request: request, time: now), in: transaction)
            }
            return echoed
        }
    }
}
