public import ParsleyCore

/// Parse Server's GraphQL configuration (`_GraphQLConfig`, `/graphql-config`): which classes the GraphQL API shows
/// and, per class, which queries and mutations it has and under which names (docs/graphql-contract.md §8).
public struct GraphQLConfig: Sendable, Equatable {
    /// When set, only these classes are shown.
    public var enabledForClasses: [String]?
    /// Never shown, even when enabled.
    public var disabledForClasses: [String] = []
    /// Per class name (the first entry for a class wins, as in Parse Server).
    public var classConfigs: [String: ClassConfig] = [:]

    /// One class's settings; nil is Parse Server's default (shown, generated, default name).
    public struct ClassConfig: Sendable, Equatable {
        public var createFields: [String]?
        public var updateFields: [String]?
        public var outputFields: [String]?
        public var constraintFields: [String]?
        public var sortFields: [SortField]?
        public var get: Bool?
        public var find: Bool?
        public var getAlias: String?
        public var findAlias: String?
        public var create: Bool?
        public var update: Bool?
        public var destroy: Bool?
        public var createAlias: String?
        public var updateAlias: String?
        public var destroyAlias: String?
    }

    public struct SortField: Sendable, Equatable {
        public var field: String
        public var asc: Bool
        public var desc: Bool
    }

    public init() {}

    /// Whether `className` is shown at all.
    public func shows(_ className: String) -> Bool {
        if disabledForClasses.contains(className) { return false }
        return enabledForClasses?.contains(className) ?? true
    }

    /// The configuration a stored (already validated) object describes; what does not fit is left at its default.
    public init(_ json: [String: JSONValue]) {
        enabledForClasses = json["enabledForClasses"]?.arrayValue?.compactMap(\.stringValue)
        disabledForClasses = json["disabledForClasses"]?.arrayValue?.compactMap(\.stringValue) ?? []
        for entry in json["classConfigs"]?.arrayValue ?? [] {
            guard let name = entry["className"]?.stringValue, classConfigs[name] == nil else { continue }
            var config = ClassConfig()
            let type = entry["type"]
            config.createFields = type?["inputFields"]?["create"]?.arrayValue?.compactMap(\.stringValue)
            config.updateFields = type?["inputFields"]?["update"]?.arrayValue?.compactMap(\.stringValue)
            config.outputFields = type?["outputFields"]?.arrayValue?.compactMap(\.stringValue)
            config.constraintFields = type?["constraintFields"]?.arrayValue?.compactMap(\.stringValue)
            config.sortFields = type?["sortFields"]?.arrayValue?.compactMap { sort in
                guard let field = sort["field"]?.stringValue else { return nil }
                return SortField(field: field, asc: sort["asc"]?.boolValue ?? false, desc: sort["desc"]?.boolValue ?? false)
            }
            let query = entry["query"]
            config.get = query?["get"]?.boolValue
            config.find = query?["find"]?.boolValue
            config.getAlias = query?["getAlias"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            config.findAlias = query?["findAlias"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            let mutation = entry["mutation"]
            config.create = mutation?["create"]?.boolValue
            config.update = mutation?["update"]?.boolValue
            config.destroy = mutation?["destroy"]?.boolValue
            config.createAlias = mutation?["createAlias"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            config.updateAlias = mutation?["updateAlias"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            config.destroyAlias = mutation?["destroyAlias"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            classConfigs[name] = config
        }
    }

    // MARK: Validation (Parse Server's rules and texts)

    /// Every problem of a configuration sent to `PUT /graphql-config`, in Parse Server's words; empty when valid.
    public static func problems(_ value: JSONValue?) -> [String] {
        guard let value, value != .null else { return ["cannot be undefined, null or empty"] }
        guard case .object(let config) = value else { return ["must be a valid object"] }
        var problems: [String] = []
        let invalid = config.keys.filter { !["enabledForClasses", "disabledForClasses", "classConfigs"].contains($0) }.sorted()
        if !invalid.isEmpty { problems.append("encountered invalid keys: [\(invalid.joined(separator: ","))]") }
        for key in ["enabledForClasses", "disabledForClasses"] where config[key] != nil && config[key] != .null {
            if !isStringArray(config[key]) { problems.append("\"\(key)\" is not a valid array") }
        }
        if let classConfigs = config["classConfigs"], classConfigs != .null {
            if case .array(let entries) = classConfigs {
                for entry in entries {
                    if let problem = classProblem(entry) {
                        problems.append("classConfig:\(entry["className"]?.stringValue ?? "undefined") is invalid because \(problem)")
                    }
                }
            } else {
                problems.append("\"classConfigs\" is not a valid array")
            }
        }
        return problems
    }

    static func isStringArray(_ value: JSONValue?) -> Bool {
        guard case .array(let items)? = value else { return false }
        return items.allSatisfy { item in
            guard case .string(let text) = item else { return false }
            return !text.trimmed.isEmpty
        }
    }

    /// Keys of `object` outside `allowed`, as Parse Server lists them.
    static func extraKeys(_ object: [String: JSONValue], _ allowed: [String]) -> String? {
        let extra = object.keys.filter { !allowed.contains($0) }.sorted()
        return extra.isEmpty ? nil : extra.joined(separator: ",")
    }

    static func classProblem(_ entry: JSONValue) -> String? {
        guard case .object(let entry) = entry else { return "it must be a valid object" }
        if let extra = extraKeys(entry, ["className", "type", "query", "mutation"]) { return "\"invalidKeys\" [\(extra)] should not be present" }
        guard case .string(let className)? = entry["className"], !className.trimmed.isEmpty else { return "\"className\" must be a valid string" }
        if let type = entry["type"], type != .null {
            guard case .object(let type) = type else { return "\"type\" must be a valid object" }
            if let problem = typeProblem(type, className: className) { return problem }
        }
        if let query = entry["query"], query != .null {
            guard case .object(let query) = query else { return "\"query\" must be a valid object" }
            if let extra = extraKeys(query, ["find", "get", "findAlias", "getAlias"]) { return "\"query\" contains invalid keys, [\(extra)]" }
            if let problem = kindProblem(query, "query", booleans: ["find", "get"], strings: ["findAlias", "getAlias"]) { return problem }
        }
        if let mutation = entry["mutation"], mutation != .null {
            guard case .object(let mutation) = mutation else { return "\"mutation\" must be a valid object" }
            let keys = ["create", "update", "destroy", "createAlias", "updateAlias", "destroyAlias"]
            if let extra = extraKeys(mutation, keys) { return "\"mutation\" contains invalid keys, [\(extra)]" }
            let booleans = ["create", "update", "destroy"]
            if let problem = kindProblem(mutation, "mutation", booleans: booleans, strings: ["createAlias", "updateAlias", "destroyAlias"]) {
                return problem
            }
        }
        return nil
    }

    static func kindProblem(_ object: [String: JSONValue], _ name: String, booleans: [String], strings: [String]) -> String? {
        for key in booleans {
            if let value = object[key], value != .null, value.boolValue == nil { return "\"\(name).\(key)\" must be a boolean" }
        }
        for key in strings {
            if let value = object[key], value != .null, value.stringValue == nil { return "\"\(name).\(key)\" must be a string" }
        }
        return nil
    }

    static func typeProblem(_ type: [String: JSONValue], className: String) -> String? {
        if let extra = extraKeys(type, ["inputFields", "outputFields", "constraintFields", "sortFields"]) {
            return "\"type\" contains invalid keys, [\(extra)]"
        }
        for key in ["outputFields", "constraintFields"] where type[key] != nil && type[key] != .null && !isStringArray(type[key]) {
            return "\"\(key)\" must be a valid string array"
        }
        if let sortFields = type["sortFields"], sortFields != .null {
            guard case .array(let sorts) = sortFields else { return "\"sortFields\" must be a valid array." }
            for (index, sort) in sorts.enumerated() {
                guard case .object(let sort) = sort else { return "\"sortField\" at index \(index) is not a valid object" }
                if let extra = extraKeys(sort, ["field", "asc", "desc"]) {
                    return "\"sortField\" at index \(index) contains invalid keys, [\(extra)]"
                }
                guard case .string(let field)? = sort["field"], !field.trimmed.isEmpty else {
                    return "\"sortField\" at index \(index) did not provide the \"field\" as a string"
                }
                guard case .bool? = sort["asc"], case .bool? = sort["desc"] else {
                    return "\"sortField\" at index \(index) did not provide \"asc\" or \"desc\" as booleans"
                }
            }
        }
        if let inputFields = type["inputFields"], inputFields != .null {
            guard case .object(let inputs) = inputFields else { return "\"inputFields\" must be a valid object" }
            if let extra = extraKeys(inputs, ["create", "update"]) { return "\"inputFields\" contains invalid keys: [\(extra)]" }
            if let update = inputs["update"], update != .null, !isStringArray(update) { return "\"inputFields.update\" must be a valid string array" }
            if let create = inputs["create"], create != .null {
                guard isStringArray(create) else { return "\"inputFields.create\" must be a valid string array" }
                let names = create.arrayValue?.compactMap(\.stringValue) ?? []
                if className == "_User", !names.contains("username") || !names.contains("password") {
                    return "\"inputFields.create\" must include required fields, username and password"
                }
            }
        }
        return nil
    }
}

extension String {
    fileprivate var trimmed: Substring {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return text
    }
}
