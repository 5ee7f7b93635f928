public import ParsleyCore

/// `required` and `defaultValue` at write time (Parse Server's `setRequiredFieldsIfNeeded`, §10.5).
extension ClassSchema {
    static func isBlank(_ value: JSONValue?) -> Bool {
        switch value {
        case nil, .null?, .string("")?: return true
        default: return false
        }
    }

    /// On create: a field with a `defaultValue` that the body leaves out (or `Delete`s) gets the default,
    /// which the create response echoes; a `required` field still absent, null or `""` is 142 `<f> is required`.
    /// - Parameters:
    ///   - values: the top-level values about to be inserted (body and internal values).
    public func fillDefaults(_ patch: ObjectPatch, values: inout [String: JSONValue], echoed: inout [String: JSONValue]) throws(ParseError) {
        for (name, options) in fieldOptions.sorted(by: { $0.key < $1.key }) where fields[name] != nil {
            let op = patch.operation(for: name)
            let leftOut: Bool
            switch op {
            case nil, .delete?: leftOut = values[name] == nil
            default: leftOut = false
            }
            if leftOut, let value = options.defaultValue {
                values[name] = value
                echoed[name] = value
            } else if options.isRequired, Self.isBlank(values[name]),
                !patch.operations.contains(where: { $0.path.field == name && !$0.path.subpath.isEmpty })
            {
                throw ParseError(.validationError, "\(name) is required")
            }
        }
    }

    /// On update: only fields in the body are checked; setting a `required` field to null, `""` or `Delete` is 142.
    public func checkRequired(updating patch: ObjectPatch) throws(ParseError) {
        guard !fieldOptions.isEmpty else { return }
        for (path, op) in patch.operations where path.subpath.isEmpty && fieldOptions[path.field]?.isRequired == true {
            switch op {
            case .delete, .set(.null), .set(.string("")): throw ParseError(.validationError, "\(path.field) is required")
            default: continue
            }
        }
    }
}
