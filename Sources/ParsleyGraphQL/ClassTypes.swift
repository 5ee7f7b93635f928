import GraphQL
import OrderedCollections
import ParsleyCore

/// A Parse object on its way to the client: the class it belongs to and its fields as the query service answered
/// them (the source value of a class type's fields).
struct ParseObjectValue: Sendable {
    let className: String
    let fields: [String: JSONValue]
}

/// One class as GraphQL shows it: its names and the fields that have a GraphQL type in this version.
struct ClassShape: Sendable {
    let schema: ClassSchema
    /// `G(C)`, `g(C)` and the find query's name.
    let typeName: String
    let getName: String
    let findName: String
    /// The class's own fields (not `objectId`, `createdAt`, `updatedAt`, `ACL`), sorted, with their types.
    let fields: [(name: String, type: FieldType)]

    var className: String { schema.className }

    /// Classes that are never shown: internal system classes (only these system classes are).
    static let shownSystemClasses: Set<String> = ["_User", "_Role", "_Session", "_Installation"]
    /// Type names a class type may not take (docs/graphql-contract.md §2), and those of this module's own types.
    static let reservedTypeNames = Set<String>(
        [
            "String", "Boolean", "Int", "Float", "ID", "ArrayResult", "Query", "Mutation", "Subscription", "CreateFileInput",
            "CreateFilePayload", "Viewer", "SignUpInput", "SignUpPayload", "LogInInput", "LogInPayload", "LogOutInput", "LogOutPayload",
            "CloudCodeFunction", "CallCloudCodeInput", "CallCloudCodePayload", "CreateClassInput", "CreateClassPayload", "UpdateClassInput",
            "UpdateClassPayload", "DeleteClassInput", "DeleteClassPayload", "PageInfo", "Any", "Object", "Date", "Node", "ParseObject",
            "Class", "ACLInput", "UserACLInput", "RoleACLInput", "PublicACLInput",
            // The built-in operations' own types (BuiltInOperations).
            "Upload", "FileInfo", "SchemaField", "SchemaFieldInput", "SchemaFieldsInput", "PointerFieldInput", "RelationFieldInput",
            "SchemaPointerField", "SchemaRelationField", "SchemaACLField", "CreateUserFieldsInput", "UserLoginWithInput", "LogInWithInput",
            "LogInWithPayload", "ResetPasswordInput", "ResetPasswordPayload", "ConfirmResetPasswordInput", "ConfirmResetPasswordPayload",
            "SendVerificationEmailInput", "SendVerificationEmailPayload", "ChallengeInput", "ChallengePayload",
        ]
            + ["String", "Number", "Boolean", "Array", "Object", "Date", "File", "GeoPoint", "Polygon", "Bytes"].flatMap {
                ["Schema\($0)Field", "Schema\($0)FieldInput"]
            })
    static let reservedQueryNames: Set<String> = ["health", "viewer", "class", "classes", "node"]

    /// The classes to show, in Parse Server's order (`_` classes first, then by name), the first of two classes with the
    /// same GraphQL names winning.
    static func shapes(_ all: [String: ClassSchema]) -> [ClassShape] {
        let names = all.keys.filter { !$0.hasPrefix("_") || shownSystemClasses.contains($0) }
            .sorted { a, b in a.hasPrefix("_") != b.hasPrefix("_") ? a.hasPrefix("_") : a < b }
        var taken = reservedTypeNames
        var takenQueries = reservedQueryNames
        var out: [ClassShape] = []
        for name in names {
            guard let schema = all[name] else { continue }
            let typeName = GraphQLNames.typeName(name)
            let getName = GraphQLNames.fieldName(name)
            let findName = GraphQLNames.pluralFieldName(name)
            guard GraphQLNames.isValid(typeName), !taken.contains(typeName), !typeName.hasSuffix("Connection"),
                !takenQueries.contains(getName), !takenQueries.contains(findName), getName != findName
            else { continue }
            taken.insert(typeName)
            takenQueries.formUnion([getName, findName])
            let fields = schema.fields.filter { field, type in
                // `id` is the Relay global id of every class type.
                if ClassSchema.defaultFields[field] != nil || field == "id" || field.hasPrefix("_") || !GraphQLNames.isValid(field) { return false }
                if name == "_User", field == "authData" || field == "password" { return false }
                if case .relation = type { return false }
                return true
            }.sorted { $0.key < $1.key }.map { (name: $0.key, type: $0.value) }
            out.append(ClassShape(schema: schema, typeName: typeName, getName: getName, findName: findName, fields: fields))
        }
        return out
    }

    /// Fields that `where` and `order` take in this version: scalars, with `objectId`, `createdAt` and `updatedAt`.
    var filterFields: [(name: String, type: FieldType)] {
        let scalars: [FieldType] = [.string, .number, .boolean, .date]
        var out: [(name: String, type: FieldType)] = [("objectId", .string), ("createdAt", .date), ("updatedAt", .date)]
        out += fields.filter { scalars.contains($0.type) }
        return out
    }

    /// Whether a create, update and delete are generated (system classes have their own flows: sign-up, roles...).
    var hasMutations: Bool { !className.hasPrefix("_") }
}
