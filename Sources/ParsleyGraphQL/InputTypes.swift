import Foundation
import GraphQL
import OrderedCollections
import ParsleyCore

/// The input types every class shares (constraints of `where`, `ACLInput`, `GeoPointInput`, `FileInput`), made once per
/// schema, and the per-class `where`, `order`, fields, pointer and relation inputs (docs/graphql-contract.md §4.2,
/// §4.3).
struct CommonInputTypes {
    let fieldTypes: FieldTypes
    let wheres: WhereInputTypes
    let acl: GraphQLInputObjectType
    /// Each class's own input types, by Parse class name.
    let classes = ClassInputTable()

    init(fieldTypes: FieldTypes) throws {
        self.fieldTypes = fieldTypes
        wheres = try WhereInputTypes(fieldTypes)
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

    /// Makes every class's input types (they name each other: a pointer's `createAndLink` is its target's create
    /// input). The table holds them weakly: the caller keeps the returned list alive until the schema holds them.
    func prepare(_ shapes: [ClassShape]) throws -> [GraphQLInputObjectType] {
        classes.shapes = Dictionary(shapes.map { ($0.className, $0) }, uniquingKeysWith: { a, _ in a })
        var strong: [GraphQLInputObjectType] = []
        for shape in shapes {
            var entry = ClassInputTable.Entry()
            let create = try fieldsInput(shape, create: true)
            let update = try fieldsInput(shape, create: false)
            let whereInput = try whereInput(shape)
            let (classes, name, mutable) = (self.classes, shape.className, shape.hasMutations)
            let pointer = try GraphQLInputObjectType(
                name: shape.typeName + "PointerInput",
                fields: {
                    var fields: InputObjectFieldMap = ["link": InputObjectField(type: GraphQLID)]
                    if mutable, let create = classes[name]?.create { fields["createAndLink"] = InputObjectField(type: create) }
                    return fields
                })
            let relation = try GraphQLInputObjectType(
                name: shape.typeName + "RelationInput",
                fields: {
                    var fields: InputObjectFieldMap = [
                        "add": InputObjectField(type: GraphQLList(GraphQLNonNull(GraphQLID))),
                        "remove": InputObjectField(type: GraphQLList(GraphQLNonNull(GraphQLID))),
                    ]
                    if mutable, let create = classes[name]?.create {
                        fields["createAndAdd"] = InputObjectField(type: GraphQLList(GraphQLNonNull(create)))
                    }
                    return fields
                })
            let relationWhere = try GraphQLInputObjectType(
                name: shape.typeName + "RelationWhereInput",
                fields: {
                    var fields: InputObjectFieldMap = ["exists": InputObjectField(type: GraphQLBoolean)]
                    if let target = classes[name]?.whereInput {
                        fields["have"] = InputObjectField(type: target)
                        fields["haveNot"] = InputObjectField(type: target)
                    }
                    return fields
                })
            (entry.create, entry.update, entry.whereInput) = (create, update, whereInput)
            (entry.pointer, entry.relation, entry.relationWhere) = (pointer, relation, relationWhere)
            classes[name] = entry
            strong += [create, update, whereInput, pointer, relation, relationWhere]
        }
        return strong
    }

    /// `GWhereInput` (made by `prepare`).
    func whereType(_ shape: ClassShape) throws -> GraphQLInputObjectType {
        guard let type = classes[shape.className]?.whereInput else { throw ParseError(.internalServerError, "Internal server error") }
        return type
    }

    /// `CreateGFieldsInput` or `UpdateGFieldsInput` (made by `prepare`).
    func fieldsType(_ shape: ClassShape, create: Bool) throws -> GraphQLInputObjectType {
        let entry = classes[shape.className]
        guard let type = create ? entry?.create : entry?.update else { throw ParseError(.internalServerError, "Internal server error") }
        return type
    }

    /// `GWhereInput`: `id`, `objectId`, `createdAt`, `updatedAt` and each field with its type's constraints (a
    /// pointer's or relation's is its target's `RelationWhereInput`), with `AND`, `OR`, `NOR` lists of itself.
    func whereInput(_ shape: ClassShape) throws -> GraphQLInputObjectType {
        let box = InputTypeBox()
        let (wheres, classes) = (self.wheres, self.classes)
        let type = try GraphQLInputObjectType(
            name: shape.typeName + "WhereInput",
            fields: {
                let defaults: InputObjectFieldMap = [
                    "id": InputObjectField(type: wheres.id), "objectId": InputObjectField(type: wheres.id),
                    "createdAt": InputObjectField(type: wheres.date), "updatedAt": InputObjectField(type: wheres.date),
                    "ACL": InputObjectField(type: wheres.object),
                ]
                var fields = defaults.filter { shape.constrains(defaultField: $0.key) }
                for field in shape.constraintFields where !["AND", "OR", "NOR"].contains(field.name) {
                    if let target = field.type.targetClass {
                        if let relationWhere = classes[target]?.relationWhere { fields[field.name] = InputObjectField(type: relationWhere) }
                    } else if let constraint = wheres.constraint(field.type) {
                        fields[field.name] = InputObjectField(type: constraint)
                    }
                }
                if let type = box.type {
                    for op in ["AND", "OR", "NOR"] { fields[op] = InputObjectField(type: GraphQLList(GraphQLNonNull(type))) }
                }
                return fields
            })
        box.type = type
        return type
    }

    /// `GOrder`: `<field>_ASC` / `<field>_DESC` for `id` and each sortable field (`orderKey` makes them REST `order`
    /// keys; the library coerces an enum value again by its name, so each value is its own name).
    func orderType(_ shape: ClassShape) throws -> GraphQLEnumType {
        var values: GraphQLEnumValueMap = [:]
        for value in shape.orderValues { values[value] = GraphQLEnumValue(value: .string(value)) }
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
    func fieldsInput(_ shape: ClassShape, create: Bool) throws -> GraphQLInputObjectType {
        try GraphQLInputObjectType(
            name: (create ? "Create" : "Update") + shape.typeName + "FieldsInput", fields: { self.fieldsMap(shape, create: create) })
    }

    /// The fields of `fieldsInput` (once `prepare` has made every class's inputs), also for inputs that add their own
    /// (`CreateUserFieldsInput`: `password`, `authData`).
    func fieldsMap(_ shape: ClassShape, create: Bool) -> InputObjectFieldMap {
        var fields: InputObjectFieldMap = ["ACL": InputObjectField(type: acl)]
        for field in shape.inputFields(create: create) {
            let type: any GraphQLNullableType & GraphQLInputType
            switch field.type {
            case .pointer(let target):
                guard let pointer = classes[target]?.pointer else { continue }
                type = pointer
            case .relation(let target):
                guard let relation = classes[target]?.relation else { continue }
                type = relation
            default: type = Self.inputType(field.type, fieldTypes)
            }
            let required = create && shape.schema.fieldOptions[field.name]?.isRequired == true
            fields[field.name] = InputObjectField(type: required ? GraphQLNonNull(type) : type)
        }
        return fields
    }

    /// Parse type → GraphQL input type (pointers and relations aside).
    static func inputType(_ type: FieldType, _ fieldTypes: FieldTypes) -> any GraphQLNullableType & GraphQLInputType {
        switch type {
        case .string: return GraphQLString
        case .number: return GraphQLFloat
        case .boolean: return GraphQLBoolean
        case .date: return GraphQLScalars.date
        case .array: return GraphQLList(GraphQLScalars.any)
        case .file: return fieldTypes.fileInput
        case .geoPoint: return fieldTypes.geoPointInput
        case .polygon: return GraphQLList(GraphQLNonNull(fieldTypes.geoPointInput))
        case .bytes: return GraphQLScalars.bytes
        default: return GraphQLScalars.object
        }
    }
}

/// Each class's own input types by Parse class name, held weakly (the schema keeps them) so that types naming each
/// other do not keep each other alive. `shapes` are the classes shown.
final class ClassInputTable: @unchecked Sendable {
    struct Entry {
        weak var create: GraphQLInputObjectType?
        weak var update: GraphQLInputObjectType?
        weak var whereInput: GraphQLInputObjectType?
        weak var pointer: GraphQLInputObjectType?
        weak var relation: GraphQLInputObjectType?
        weak var relationWhere: GraphQLInputObjectType?
    }
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var storedShapes: [String: ClassShape] = [:]

    subscript(className: String) -> Entry? {
        get { lock.withLock { entries[className] } }
        set { lock.withLock { entries[className] = newValue } }
    }

    var shapes: [String: ClassShape] {
        get { lock.withLock { storedShapes } }
        set { lock.withLock { storedShapes = newValue } }
    }
}

/// Lets a `where` input type name itself in its `AND`/`OR`/`NOR` fields (weakly: the schema keeps the type).
final class InputTypeBox: @unchecked Sendable {
    weak var type: GraphQLInputObjectType?
}
