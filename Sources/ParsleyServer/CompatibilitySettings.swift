import Foundation
import ParsleyCore
import ParsleyDomain

/// Parse Server options about the HTTP edge and the data model that a typical config.json sets: `trustProxy`,
/// `allowOrigin`, `allowHeaders` (and, in their own files, the protected fields, object ids and sessions).
extension ServerSettings {
    static func applyCompatibilitySettings(to options: inout ParseServerOptions, values: OptionValues) throws {
        options.security.trustProxy = try trustProxy(values)
        if let origins = try stringList(values, "allowOrigin") { options.security.allowOrigin = origins.isEmpty ? ["*"] : origins }
        if let headers = try stringList(values, "allowHeaders") { options.security.allowHeaders = headers }
        options.protectedFieldsOwnerExempt = try values.bool("protectedFieldsOwnerExempt", default: true)
        options.protectedFieldsSaveResponseExempt = try values.bool("protectedFieldsSaveResponseExempt", default: true)
        options.protectedFieldsTriggerExempt = try values.bool("protectedFieldsTriggerExempt", default: false)
        options.enableSanitizedErrorResponse = try values.bool("enableSanitizedErrorResponse", default: true)
        if let (json, name) = try values.object("query") {
            for (key, value) in json {
                guard key == "aggregationRawValues" || key == "aggregationRawFieldNames" else { continue }
                guard let b = value.boolValue else { throw Invalid(description: "\(name): \(key) must be true or false") }
                if key == "aggregationRawValues" { options.aggregationRawValues = b } else { options.aggregationRawFieldNames = b }
            }
        }
        options.protectedFields = try protectedFields(values, ownerExempt: options.protectedFieldsOwnerExempt)
        options.allowCustomObjectId = try values.bool("allowCustomObjectId", default: false)
        options.objectIdSize = try values.integer("objectIdSize", default: 10) ?? 10
        options.accounts.expireInactiveSessions = try values.bool("expireInactiveSessions", default: true)
        options.accounts.extendSessionOnUse = try values.bool("extendSessionOnUse", default: false)
        options.accounts.revokeSessionOnPasswordReset = try values.bool("revokeSessionOnPasswordReset", default: true)
        options.mountGraphQL = try values.bool("mountGraphQL", default: false)
        if let path = values.string("graphQLPath") {
            guard path.hasPrefix("/"), path.count > 1 else {
                throw Invalid(description: "\(OptionTable.spec("graphQLPath").shownName) must be a path such as /graphql")
            }
            options.graphQLPath = path
        }
        options.graphQLLimits = try graphQLLimits(values)
        options.requestComplexity = try requestComplexity(values)
        guard (6...64).contains(options.objectIdSize) else {
            throw Invalid(description: "\(OptionTable.spec("objectIdSize").shownName) must be 6 to 64 characters")
        }
    }

    /// `requestComplexity`'s REST keys (`includeDepth`, `includeCount`, `subqueryDepth`, `queryDepth`,
    /// `batchRequestLimit`; -1, Parse Server 9's default, is off), from its JSON and then the single variables.
    static func requestComplexity(_ values: OptionValues) throws -> RequestComplexity {
        var limits = RequestComplexity()
        let keys: [(String, WritableKeyPath<RequestComplexity, Int?>)] = [
            ("includeDepth", \.includeDepth), ("includeCount", \.includeCount), ("subqueryDepth", \.subqueryDepth),
            ("queryDepth", \.queryDepth), ("batchRequestLimit", \.batchRequestLimit),
        ]
        func limit(_ value: Int, _ name: String) throws -> Int? {
            guard value == -1 || value > 0 else { throw Invalid(description: "\(name) must be a positive number, or -1 for no limit") }
            return value == -1 ? nil : value
        }
        if let (json, name) = try values.object("requestComplexity") {
            for (key, path) in keys {
                guard let value = json[key] else { continue }
                guard let number = value.integerValue else { throw Invalid(description: "\(name): \(key) must be a number") }
                limits[keyPath: path] = try limit(number, "\(name): \(key)")
            }
        }
        for (key, path) in keys {
            if let (text, name) = values.part("requestComplexity", key) {
                limits[keyPath: path] = try limit(try OptionValues.integer(text, name: name), name)
            }
        }
        return limits
    }

    /// `graphQLPublicIntrospection` and `requestComplexity`'s GraphQL keys (`graphQLDepth`, `graphQLFields`; -1 is
    /// off), from its JSON and then the single `PARSE_SERVER_REQUEST_COMPLEXITY_*` variables.
    static func graphQLLimits(_ values: OptionValues) throws -> GraphQLLimits {
        var limits = GraphQLLimits()
        limits.publicIntrospection = try values.bool("graphQLPublicIntrospection", default: false)
        func limit(_ value: Int, _ name: String) throws -> Int? {
            guard value == -1 || value > 0 else { throw Invalid(description: "\(name) must be a positive number, or -1 for no limit") }
            return value == -1 ? nil : value
        }
        if let (json, name) = try values.object("requestComplexity") {
            for (key, value) in json where key == "graphQLDepth" || key == "graphQLFields" {
                guard let number = value.integerValue else { throw Invalid(description: "\(name): \(key) must be a number") }
                if key == "graphQLDepth" { limits.maxDepth = try limit(number, "\(name): \(key)") }
                if key == "graphQLFields" { limits.maxFields = try limit(number, "\(name): \(key)") }
            }
        }
        if let (text, name) = values.part("requestComplexity", "graphQLDepth") {
            limits.maxDepth = try limit(try OptionValues.integer(text, name: name), name)
        }
        if let (text, name) = values.part("requestComplexity", "graphQLFields") {
            limits.maxFields = try limit(try OptionValues.integer(text, name: name), name)
        }
        return limits
    }

    /// `protectedFields` (class → entity → fields) with the deprecated `userSensitiveFields` added to `_User`'s `*`,
    /// and Parse Server's default (`_User`'s `email` for `*`) kept, as Parse Server merges them at start; with
    /// `protectedFieldsOwnerExempt` false an entity the option sets itself keeps only its own list (Parse Server 9).
    static func protectedFields(_ values: OptionValues, ownerExempt: Bool = true) throws -> [String: [String: [String]]] {
        var fields = ParseServerOptions.defaultProtectedFields
        var configured = Set<[String]>()
        if let (json, name) = try values.object("protectedFields") {
            let problem = "must be a JSON object of classes, each an object of entities (`*`, `authenticated`, `role:…`, …) to arrays of fields"
            fields = [:]
            for (className, entities) in json {
                guard case .object(let entities) = entities else { throw Invalid(description: "\(name) \(problem)") }
                var byEntity: [String: [String]] = [:]
                for (entity, list) in entities {
                    guard let items = list.arrayValue, case let names = items.compactMap(\.stringValue), names.count == items.count else {
                        throw Invalid(description: "\(name) \(problem)")
                    }
                    byEntity[entity] = names
                }
                fields[className] = byEntity
                for entity in byEntity.keys { configured.insert([className, entity]) }
            }
        }
        if let sensitive = try stringList(values, "userSensitiveFields"), !sensitive.isEmpty {
            Self.add(sensitive, to: &fields, className: "_User", entity: "*")
        }
        for (className, entities) in ParseServerOptions.defaultProtectedFields {
            for (entity, list) in entities {
                if !ownerExempt, configured.contains([className, entity]) { continue }
                Self.add(list, to: &fields, className: className, entity: entity)
            }
        }
        return fields
    }

    private static func add(_ list: [String], to fields: inout [String: [String: [String]]], className: String, entity: String) {
        var current = fields[className]?[entity] ?? []
        for field in list where !current.contains(field) { current.append(field) }
        fields[className, default: [:]][entity] = current
    }

    /// Express's `trust proxy`: `true` (every hop), a number of hops, or addresses, CIDR ranges and the names
    /// `loopback`, `linklocal`, `uniquelocal` (a JSON array or a comma list); `false`, `0` or `[]`: none.
    static func trustProxy(_ values: OptionValues) throws -> TrustProxy {
        guard let raw = values.raw("trustProxy") else { return .none }
        let name = OptionTable.spec("trustProxy").shownName
        let problem = "must be true, false, a number of hops, or a list of addresses and CIDR ranges"
        switch raw.json {
        case .bool(let on): return on ? .all : .none
        case .int(let n):
            guard n >= 0, n <= 1000 else { throw Invalid(description: "\(name) \(problem)") }
            return n == 0 ? .none : .hops(Int(n))
        case .string, .array:
            guard let entries = try stringList(values, "trustProxy"), let trust = TrustProxy.list(entries) else {
                throw Invalid(description: "\(name) \(problem)")
            }
            return trust
        case .null: return .none
        default: throw Invalid(description: "\(name) \(problem)")
        }
    }

    /// A list option: a JSON array of strings, or a comma list (Parse Server's array parser); nil when not set.
    static func stringList(_ values: OptionValues, _ key: String) throws -> [String]? {
        guard let raw = values.raw(key) else { return nil }
        let name = OptionTable.spec(key).shownName
        switch raw.json {
        case .array(let items):
            return try items.map { item in
                guard let s = item.stringValue else { throw Invalid(description: "\(name): entries must be strings, not \(OptionValues.kind(item))") }
                return s
            }
        case .object:
            throw Invalid(description: "\(name) must be a list (a JSON array of strings or a comma list), not \(OptionValues.kind(raw.json))")
        default:
            return raw.text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
    }
}
