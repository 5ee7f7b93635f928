import GraphQL
import OrderedCollections
import ParsleyCore

/// A field's arguments as the GraphQL library gives them to a resolver (literals and variables coerced by their input
/// types), for `PlainQuery`. Anything it is unsure of (a value the types refuse, a variable left to its default)
/// throws `PlainQuery.NotPlain`, and the library, which words those errors, answers instead.
struct InputCoercion {
    /// The request's variables, as sent.
    let variables: [String: Map]
    /// Variables the operation gives a default value.
    let defaulted: Set<String>

    /// The arguments `field` passes for the definitions `arguments`, as a `.dictionary` (absent ones left out).
    func arguments(_ field: Field, _ arguments: GraphQLArgumentConfigMap) throws -> Map {
        var out = OrderedDictionary<String, Map>()
        let given = Dictionary(field.arguments.map { ($0.name.value, $0.value) }, uniquingKeysWith: { a, _ in a })
        for (name, argument) in arguments {
            var value = Map.undefined
            if let ast = given[name] { value = try literal(ast, argument.type) }
            if value == .undefined, let fallback = argument.defaultValue { value = fallback }
            if value == .undefined {
                if argument.type is GraphQLNonNull { throw PlainQuery.NotPlain() }
                continue
            }
            out[name] = value
        }
        return .dictionary(out)
    }

    /// A literal (or variable) of the document as a value of `type` (`.undefined`: a variable not given).
    func literal(_ ast: any Value, _ type: any GraphQLInputType) throws -> Map {
        if let variable = ast as? Variable {
            let name = variable.name.value
            guard let raw = variables[name] else {
                guard !defaulted.contains(name), !(type is GraphQLNonNull) else { throw PlainQuery.NotPlain() }
                return .undefined
            }
            return try coerce(raw, type)
        }
        if let nonNull = type as? GraphQLNonNull {
            guard let inner = nonNull.ofType as? any GraphQLInputType else { throw PlainQuery.NotPlain() }
            let value = try literal(ast, inner)
            guard value != .null, value != .undefined else { throw PlainQuery.NotPlain() }
            return value
        }
        if ast is NullValue { return .null }
        if let list = type as? GraphQLList {
            guard let inner = list.ofType as? any GraphQLInputType else { throw PlainQuery.NotPlain() }
            guard let items = ast as? ListValue else { return .array([try literal(ast, inner)]) }
            return .array(try items.values.map { item in try literal(item, inner).definedOrNull })
        }
        if let object = type as? GraphQLInputObjectType {
            guard let value = ast as? ObjectValue else { throw PlainQuery.NotPlain() }
            var given: [String: Map] = [:]
            for field in value.fields { given[field.name.value] = try literal(field.value, try inputType(object, field.name.value)) }
            return try inputObject(object, given)
        }
        if let leaf = type as? any GraphQLLeafType {
            let value = try leaf.parseLiteral(valueAST: ast)
            guard value != .null, value != .undefined else { throw PlainQuery.NotPlain() }
            return value
        }
        throw PlainQuery.NotPlain()
    }

    /// A variable's value, as sent, as a value of `type`.
    func coerce(_ value: Map, _ type: any GraphQLInputType) throws -> Map {
        if let nonNull = type as? GraphQLNonNull {
            guard value != .null, value != .undefined, let inner = nonNull.ofType as? any GraphQLInputType else { throw PlainQuery.NotPlain() }
            return try coerce(value, inner)
        }
        if value == .null || value == .undefined { return .null }
        if let list = type as? GraphQLList {
            guard let inner = list.ofType as? any GraphQLInputType else { throw PlainQuery.NotPlain() }
            guard case .array(let items) = value else { return .array([try coerce(value, inner)]) }
            return .array(try items.map { try coerce($0, inner) })
        }
        if let object = type as? GraphQLInputObjectType {
            guard case .dictionary(let fields) = value else { throw PlainQuery.NotPlain() }
            var given: [String: Map] = [:]
            for (name, item) in fields { given[name] = try coerce(item, try inputType(object, name)) }
            return try inputObject(object, given)
        }
        if let leaf = type as? any GraphQLLeafType {
            let parsed = try leaf.parseValue(value: value)
            guard parsed != .null, parsed != .undefined else { throw PlainQuery.NotPlain() }
            return parsed
        }
        throw PlainQuery.NotPlain()
    }

    /// The type of `object`'s field `name` (an unknown field is the library's error).
    private func inputType(_ object: GraphQLInputObjectType, _ name: String) throws -> any GraphQLInputType {
        guard let field = try object.fields()[name] else { throw PlainQuery.NotPlain() }
        return field.type
    }

    /// An input object of `object`'s fields from the coerced values `given`: defaults for the others, and a
    /// required one missing refused.
    private func inputObject(_ object: GraphQLInputObjectType, _ given: [String: Map]) throws -> Map {
        var out = OrderedDictionary<String, Map>()
        for (name, field) in try object.fields() {
            if let value = given[name], value != .undefined {
                out[name] = value
            } else if let fallback = field.defaultValue {
                out[name] = fallback
            } else if field.type is GraphQLNonNull {
                throw PlainQuery.NotPlain()
            }
        }
        return .dictionary(out)
    }
}

extension Map {
    /// `.null` for `.undefined` (a list item that is a variable not given).
    fileprivate var definedOrNull: Map { self == .undefined ? .null : self }
}
