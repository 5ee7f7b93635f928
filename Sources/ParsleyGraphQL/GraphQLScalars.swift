import GraphQL
import OrderedCollections
import ParsleyCore

/// Parse Server's default scalars (docs/graphql-contract.md §3) that this version has: `Any`, `Object` and `Date`.
enum GraphQLScalars {
    /// Any JSON value, as it is.
    static let any = try! GraphQLScalarType(
        name: "Any", description: "The Any scalar type is used in operations and types that involve any type of value.",
        serialize: { value in try leaf(value) })

    /// A JSON object.
    static let object = try! GraphQLScalarType(
        name: "Object", description: "The Object scalar type is used in operations and types that involve objects.",
        serialize: { value in
            let map = try leaf(value)
            guard case .dictionary = map else { throw GraphQLError(message: "Object cannot represent value: \(map)") }
            return map
        },
        parseValue: { value in
            guard case .dictionary = value else { throw GraphQLError(message: "Object cannot represent value: \(value)") }
            return value
        })

    /// A date as Parse writes it (`2024-01-02T03:04:05.678Z`); accepted as that string or `{__type: "Date", iso}`.
    static let date = try! GraphQLScalarType(
        name: "Date", description: "The Date scalar type is used in operations and types that involve dates.",
        serialize: { value in
            let map = try leaf(value)
            if case .string = map { return map }
            if case .dictionary(let fields) = map, case .string(let iso)? = fields["iso"] { return .string(iso) }
            throw GraphQLError(message: "Date cannot represent value: \(map)")
        },
        parseValue: { value in try isoDate(value) },
        parseLiteral: { ast in try isoDate(try valueFromASTUntyped(valueAST: ast)) })

    /// Bytes as base64 text; accepted as that string or `{__type: "Bytes", base64}`, given to REST as the latter.
    static let bytes = try! GraphQLScalarType(
        name: "Bytes", description: "The Bytes scalar type is used in operations and types that involve base 64 binary data.",
        serialize: { value in
            let map = try leaf(value)
            if case .string = map { return map }
            if case .dictionary(let fields) = map, case .string(let base64)? = fields["base64"] { return .string(base64) }
            throw GraphQLError(message: "Bytes cannot represent value: \(map)")
        },
        parseValue: { value in try typed(value, "Bytes", key: "base64") },
        parseLiteral: { ast in try typed(try valueFromASTUntyped(valueAST: ast), "Bytes", key: "base64") })

    /// A file of `FileInput.file`: its name, or `{__type: "File", name, url?}`; given to REST as the latter.
    static let file = try! GraphQLScalarType(
        name: "File", description: "The File scalar type is used in operations and types that involve files.",
        serialize: { value in
            let map = try leaf(value)
            if case .dictionary(let fields) = map, let name = fields["name"] { return name }
            return map
        },
        parseValue: { value in try typed(value, "File", key: "name") },
        parseLiteral: { ast in try typed(try valueFromASTUntyped(valueAST: ast), "File", key: "name") })

    /// A string, or an object of `__type` `type` carrying `key`, as that object.
    static func typed(_ value: Map, _ type: String, key: String) throws -> Map {
        if case .string = value { return .dictionary(["__type": .string(type), key: value]) }
        if case .dictionary(let fields) = value, fields["__type"] == .string(type), case .string? = fields[key] { return value }
        throw GraphQLError(message: "\(type) cannot represent value: \(value)")
    }

    /// The ISO text of a date input (a string, or `{__type: "Date", iso}`).
    static func isoDate(_ value: Map) throws -> Map {
        if case .string = value { return value }
        if case .dictionary(let fields) = value, fields["__type"] == .string("Date"), case .string(let iso)? = fields["iso"] {
            return .string(iso)
        }
        throw GraphQLError(message: "Date cannot represent value: \(value)")
    }

    /// What a resolver returned for a leaf: a `Map`, or a Parse `JSONValue`.
    static func leaf(_ value: Any) throws -> Map {
        if let map = value as? Map { return map }
        if let json = value as? JSONValue { return MapJSON.map(json) }
        throw GraphQLError(message: "Cannot represent value: \(value)")
    }
}
