import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// A Parse object on its way to the client: the class it belongs to and its fields as the query service answered
/// them (the source value of a class type's fields).
struct ParseObjectValue: Sendable {
    let className: String
    let fields: [String: JSONValue]
}

/// One class as GraphQL shows it: its names and the fields that have a GraphQL type in this version.
struct ClassShape: Sendable {
    let schema: ClassSchema
    /// `G(C)`; the get and find queries' names (nil: not generated, `_GraphQLConfig`'s `query.get`/`find`).
    let typeName: String
    let getName: String?
    let findName: String?
    /// The mutations' names (nil: not generated): `create<G>`, `update<G>`, `delete<G>` or their aliases.
    let createName: String?
    let updateName: String?
    let deleteName: String?
    /// The class's own fields (not `objectId`, `createdAt`, `updatedAt`, `ACL`), sorted, with their types.
    let fields: [(name: String, type: FieldType)]
    /// `_GraphQLConfig`'s settings of this class (its field lists), nil: every field everywhere.
    var settings: GraphQLConfig.ClassConfig? = nil

    var className: String { schema.className }
    /// `g(C)`: the object's field in mutation payloads (whatever the get query is called).
    var objectFieldName: String { GraphQLNames.fieldName(className) }

    /// Classes that are never shown: internal system classes (only these system classes are).
    static let shownSystemClasses: Set<String> = ["_User", "_Role", "_Session", "_Installation"]
    /// Type names a class type may not take (docs/graphql-contract.md §2), and those of this module's own types.
    static let reservedTypeNames: Set<String> = Set([
        "String", "Boolean", "Int", "Float", "ID", "ArrayResult", "Query", "Mutation", "Subscription", "CreateFileInput",
        "CreateFilePayload", "Viewer", "SignUpInput", "SignUpPayload", "LogInInput", "LogInPayload", "LogOutInput", "LogOutPayload",
        "CloudCodeFunction", "CallCloudCodeInput", "CallCloudCodePayload", "CreateClassInput", "CreateClassPayload", "UpdateClassInput",
        "UpdateClassPayload", "DeleteClassInput", "DeleteClassPayload", "PageInfo", "Any", "Object", "Date", "Node", "ParseObject",
        "Class", "ACLInput", "UserACLInput", "RoleACLInput", "PublicACLInput",
        // The built-in operations' own types (BuiltInOperations).
        "Upload", "FileInfo", "SchemaField", "SchemaFieldInput", "SchemaFieldsInput", "PointerFieldInput", "RelationFieldInput",
        "SchemaPointerField", "SchemaRelationField", "SchemaACLField", "CreateUserFieldsInput", "UserLoginWithInput", "LogInWithInput",
        "LogInWithPayload", "ResetPasswordInput", "ResetPasswordPayload", "ConfirmResetPasswordInput", "ConfirmResetPasswordPayload",
        "SendVerificationEmailInput", "SendVerificationEmailPayload", "ChallengeInput", "ChallengePayload", "LiveQueryEvent",
    ]).union(sharedTypeNames).union(
        ["String", "Number", "Boolean", "Array", "Object", "Date", "File", "GeoPoint", "Polygon", "Bytes"].flatMap {
            ["Schema\($0)Field", "Schema\($0)FieldInput"]
        })
    /// The types every schema has for field types, inputs and `where` (FieldTypes, WhereInputTypes): a class type, or
    /// one of a class's own input types, may not take these names.
    static let sharedTypeNames: Set<String> = [
        "Bytes", "File", "Upload", "FileInfo", "FileInput", "GeoPoint", "GeoPointInput", "ACL", "UserACL", "RoleACL", "PublicACL",
        "Element", "ReadPreference", "ReadOptionsInput", "SubqueryInput", "SelectInput", "SearchInput", "TextInput", "KeyValueInput",
        "BoxInput", "WithinInput", "CenterSphereInput", "GeoWithinInput", "GeoIntersectsInput", "IdWhereInput", "StringWhereInput",
        "NumberWhereInput", "BooleanWhereInput", "DateWhereInput", "BytesWhereInput", "FileWhereInput", "ArrayWhereInput",
        "ObjectWhereInput", "GeoPointWhereInput", "PolygonWhereInput",
    ]

    /// The names of a class's own input types (these must not be taken by the shared ones).
    static func derivedTypeNames(_ typeName: String) -> [String] {
        ["WhereInput", "RelationWhereInput", "PointerInput", "RelationInput", "Order", "Edge", "SubscriptionPayload"].map { typeName + $0 }
            + ["Create", "Update"].map { $0 + typeName + "FieldsInput" }
    }
    static let reservedQueryNames: Set<String> = ["health", "viewer", "class", "classes", "node"]

    /// The classes to show, in Parse Server's order (`_` classes first, then by name), the first of two classes with the
    /// same GraphQL names winning; `config` (`_GraphQLConfig`) picks classes, queries, mutations and their names.
    static func shapes(_ all: [String: ClassSchema], config: GraphQLConfig = GraphQLConfig()) -> [ClassShape] {
        let names = all.keys.filter { (!$0.hasPrefix("_") || shownSystemClasses.contains($0)) && config.shows($0) }
            .sorted { a, b in a.hasPrefix("_") != b.hasPrefix("_") ? a.hasPrefix("_") : a < b }
        var taken = reservedTypeNames
        var takenQueries = reservedQueryNames
        var out: [ClassShape] = []
        for name in names {
            guard let schema = all[name] else { continue }
            let typeName = GraphQLNames.typeName(name)
            let settings = config.classConfigs[name]
            let getName = settings?.get == false ? nil : settings?.getAlias ?? GraphQLNames.fieldName(name)
            var findName = settings?.find == false ? nil : settings?.findAlias ?? GraphQLNames.pluralFieldName(name)
            // A plural equal to its singular (`sheep`): the get query keeps the name and the find query is dropped, as
            // in Parse Server, where get is registered first.
            if findName == getName { findName = nil }
            let queryNames = [getName, findName].compactMap { $0 }
            guard GraphQLNames.isValid(typeName), !taken.contains(typeName), !typeName.hasSuffix("Connection"),
                sharedTypeNames.isDisjoint(with: derivedTypeNames(typeName)),
                queryNames.allSatisfy({ GraphQLNames.isValid($0) && !takenQueries.contains($0) })
            else { continue }
            taken.insert(typeName)
            takenQueries.formUnion(queryNames)
            let mutates = !name.hasPrefix("_")
            let createName = !mutates || settings?.create == false ? nil : settings?.createAlias ?? "create" + typeName
            let updateName = !mutates || settings?.update == false ? nil : settings?.updateAlias ?? "update" + typeName
            let deleteName = !mutates || settings?.destroy == false ? nil : settings?.destroyAlias ?? "delete" + typeName
            let fields = schema.fields.filter { field, type in
                // `id` is the Relay global id of every class type.
                if ClassSchema.defaultFields[field] != nil || field == "id" || field.hasPrefix("_") || !GraphQLNames.isValid(field) { return false }
                if name == "_User", field == "authData" || field == "password" { return false }
                return true
            }.sorted { $0.key < $1.key }.map { (name: $0.key, type: $0.value) }
            out.append(
                ClassShape(
                    schema: schema, typeName: typeName, getName: getName, findName: findName, createName: createName, updateName: updateName,
                    deleteName: deleteName, fields: fields, settings: settings))
        }
        return out
    }

    /// Fields `order` takes: `objectId`, `createdAt`, `updatedAt` and every field but relations.
    var sortFields: [String] {
        let sortable = fields.filter { field in
            if case .relation = field.type { return false }
            return true
        }
        return ["objectId", "createdAt", "updatedAt"] + sortable.map(\.name)
    }

    /// The order enum's values: `id` and each sortable field both ways, or `_GraphQLConfig`'s `sortFields` (`[]`
    /// leaves `id` only).
    var orderValues: [String] {
        guard let sorts = settings?.sortFields else { return (["id"] + sortFields).flatMap { [$0 + "_ASC", $0 + "_DESC"] } }
        let allowed = Set(sortFields + ["id"])
        var values = ["id_ASC", "id_DESC"]
        for sort in sorts where allowed.contains(sort.field) {
            if sort.asc { values.append(sort.field + "_ASC") }
            if sort.desc { values.append(sort.field + "_DESC") }
        }
        return values
    }

    /// The fields class types show: `outputFields` when configured (the default fields always; `password` never).
    var outputFields: [(name: String, type: FieldType)] {
        guard let names = settings?.outputFields else { return fields }
        return fields.filter { names.contains($0.name) }
    }

    /// The fields a create or an update takes: `inputFields.create`/`update` when configured.
    func inputFields(create: Bool) -> [(name: String, type: FieldType)] {
        guard let names = create ? settings?.createFields : settings?.updateFields else { return fields }
        return fields.filter { names.contains($0.name) }
    }

    /// The fields `where` takes: `constraintFields` when configured, which then also decides whether `id`,
    /// `objectId`, `createdAt`, `updatedAt` and `ACL` are there.
    var constraintFields: [(name: String, type: FieldType)] {
        guard let names = settings?.constraintFields else { return fields }
        return fields.filter { names.contains($0.name) }
    }

    func constrains(defaultField name: String) -> Bool { settings?.constraintFields?.contains(name) ?? true }

    /// Whether any mutation is generated (system classes have their own flows: sign-up, roles...).
    var hasMutations: Bool { createName != nil || updateName != nil || deleteName != nil }
}
