import GraphQL
import OrderedCollections
import ParsleyCore

/// The input types every class shares (constraints of `where`, `ACLInput`), made once per schema, and the per-class
/// `where`, `order` and fields inputs (docs/graphql-contract.md §4.2, §4.3).
struct CommonInputTypes {
    let idWhere: GraphQLInputObjectType
    let stringWhere: GraphQLInputObjectType
    let numberWhere: GraphQLInputObjectType
    let booleanWhere: GraphQLInputObjectType
    let dateWhere: GraphQLInputObjectType
    let acl: GraphQLInputObjectType

    init() throws {
        idWhere = try Self.constraints("IdWhereInput", GraphQLID)
        stringWhere = try Self.constraints("StringWhereInput", GraphQLString)
        numberWhere = try Self.constraints("NumberWhereInput", GraphQLFloat)
        booleanWhere = try GraphQLInputObjectType(
            name: "BooleanWhereInput",
            fields: [
                "equalTo": InputObjectField(type: GraphQLBoolean), "notEqualTo": InputObjectField(type: GraphQLBoolean),
                "exists": InputObjectField(type: GraphQLBoolean),
            ])
        dateWhere = try Self.constraints("DateWhereInput", GraphQLScalars.date)
        let rule: InputObjectFieldMap = [
            "read": InputObjectField(type: GraphQLNonNull(GraphQLBoolean)), "write": InputObjectField(type: GraphQLNonNull(GraphQLBoolean)),
        ]
        var user = rule
        user["userId"] = InputObjectField(type: GraphQLNonNull(GraphQLID))
        var role = rule
        role["roleName"] = InputObjectField(type: GraphQLNonNull(GraphQLString))
        acl = try GraphQLInputObjectType(
            name: "ACLInput",
            fields: [
                "users": InputObjectField(type: GraphQLList(GraphQLNonNull(try GraphQLInputObjectType(name: "UserACLInput", fields: user)))),
                "roles": InputObjectField(type: GraphQLList(GraphQLNonNull(try GraphQLInputObjectType(name: "RoleACLInput", fields: role)))),
                "public": InputObjectField(type: try GraphQLInputObjectType(name: "PublicACLInput", fields: rule)),
            ])
    }

    /// The comparison operators of a scalar (`equalTo`, `lessThan`, `in`, `exists`, ...).
    static func constraints(_ name: String, _ type: any GraphQLInputType) throws -> GraphQLInputObjectType {
        var fields: InputObjectFieldMap = [:]
        for op in ["equalTo", "notEqualTo", "lessThan", "lessThanOrEqualTo", "greaterThan", "greaterThanOrEqualTo"] {
            fields[op] = InputObjectField(type: type)
        }
        fields["in"] = InputObjectField(type: GraphQLList(type))
        fields["notIn"] = InputObjectField(type: GraphQLList(type))
        fields["exists"] = InputObjectField(type: GraphQLBoolean)
        return try GraphQLInputObjectType(name: name, fields: fields)
    }

    /// The constraint type of a field `where` takes (nil: not filterable in this version).
    func constraint(_ type: FieldType) -> GraphQLInputObjectType? {
        switch type {
        case .string: return stringWhere
        case .number: return numberWhere
        case .boolean: return booleanWhere
        case .date: return dateWhere
        default: return nil
        }
    }

    /// `GWhereInput`: `id`, `objectId` and each filterable field, with `AND`, `OR`, `NOR` lists of itself.
    func whereType(_ shape: ClassShape) throws -> GraphQLInputObjectType {
        let box = InputTypeBox()
        let (idWhere, common) = (self.idWhere, self)
        let type = try GraphQLInputObjectType(
            name: shape.typeName + "WhereInput",
            fields: {
                var fields: InputObjectFieldMap = ["id": InputObjectField(type: idWhere), "objectId": InputObjectField(type: idWhere)]
                for field in shape.filterFields where field.name != "objectId" && !["AND", "OR", "NOR"].contains(field.name) {
                    if let constraint = common.constraint(field.type) { fields[field.name] = InputObjectField(type: constraint) }
                }
                if let type = box.type {
                    for op in ["AND", "OR", "NOR"] { fields[op] = InputObjectField(type: GraphQLList(GraphQLNonNull(type))) }
                }
                return fields
            })
        box.type = type
        return type
    }

    /// `GOrder`: `<field>_ASC` / `<field>_DESC` for `id` and each filterable field (`orderKey` makes them REST `order`
    /// keys; the library coerces an enum value again by its name, so each value is its own name).
    func orderType(_ shape: ClassShape) throws -> GraphQLEnumType {
        var values: GraphQLEnumValueMap = [:]
        for name in ["id"] + shape.filterFields.map(\.name) {
            for direction in ["_ASC", "_DESC"] { values[name + direction] = GraphQLEnumValue(value: .string(name + direction)) }
        }
        return try GraphQLEnumType(name: shape.typeName + "Order", values: values)
    }

    /// `score_DESC` → `-score`, `id_ASC` → `objectId`.
    static func orderKey(_ value: String) -> String? {
        for (suffix, prefix) in [("_ASC", ""), ("_DESC", "-")] where value.hasSuffix(suffix) {
            let field = String(value.dropLast(suffix.count))
            return prefix + (field == "id" ? "objectId" : field)
        }
        return nil
    }

    /// `CreateGFieldsInput` (required fields non-null) or `UpdateGFieldsInput`: `ACL` and the class's fields.
    func fieldsType(_ shape: ClassShape, create: Bool) throws -> GraphQLInputObjectType {
        try GraphQLInputObjectType(name: (create ? "Create" : "Update") + shape.typeName + "FieldsInput", fields: fieldsMap(shape, create: create))
    }

    /// The fields of `fieldsType`, for inputs that add their own (`CreateUserFieldsInput`: `password`, `authData`).
    func fieldsMap(_ shape: ClassShape, create: Bool) -> InputObjectFieldMap {
        var fields: InputObjectFieldMap = ["ACL": InputObjectField(type: acl)]
        for field in shape.fields {
            let type = Self.inputType(field.type)
            let required = create && shape.schema.fieldOptions[field.name]?.isRequired == true
            let input: any GraphQLInputType = required ? GraphQLNonNull(type) : type
            fields[field.name] = InputObjectField(type: input)
        }
        return fields
    }

    /// Parse type → GraphQL input type; pointers and the types not shaped yet take their Parse JSON (`Any`).
    static func inputType(_ type: FieldType) -> any GraphQLNullableType & GraphQLInputType {
        switch type {
        case .string: return GraphQLString
        case .number: return GraphQLFloat
        case .boolean: return GraphQLBoolean
        case .date: return GraphQLScalars.date
        case .object: return GraphQLScalars.object
        case .array: return GraphQLList(GraphQLScalars.any)
        default: return GraphQLScalars.any
        }
    }
}

/// Lets a `where` input type name itself in its `AND`/`OR`/`NOR` fields (weakly: the schema keeps the type).
final class InputTypeBox: @unchecked Sendable {
    weak var type: GraphQLInputObjectType?
}
